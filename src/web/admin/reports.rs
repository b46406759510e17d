//! `/admin/reports?from=…&to=…` (SPEC §12): per-room utilisation of the
//! working day as a table and a server-drawn SVG bar chart, with links to
//! both CSV downloads. A bad range answers 400 with the form and the reason.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use crate::db::DbError;
use crate::http::reports::RangeQuery;
use crate::reports::domain::{percent, Utilisation};
use crate::reports::{chart, store, Period, RoomUse};
use crate::state::AppState;
use crate::web::language::PageI18n;
use crate::web::pages::{self, nav, Nav, Notice};
use crate::web::{html_response, Csrf, SignedInAdmin, WebError};

pub async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInAdmin(user): SignedInAdmin,
) -> Result<HttpResponse, WebError> {
    let query = RangeQuery::of(&req);
    let csrf = Csrf::for_render(&req, &state);
    let i18n = PageI18n::of(&req);
    let mut page = ReportsPage {
        i18n: i18n.clone(),
        nav: nav(&user, &csrf.token),
        from: query.from.clone().unwrap_or_default(),
        to: query.to.clone().unwrap_or_default(),
        timezone: state.policy().timezone.name().to_owned(),
        message: None,
        report: None,
    };
    let status = match query.period(&state) {
        Ok(period) => {
            let report = {
                let mut conn = state.read_pool.get().await.map_err(DbError::from)?;
                store::utilisation(&mut conn, period, state.policy().timezone).await?
            };
            (page.from, page.to) = (period.from().to_string(), period.to().to_string());
            page.report = Some(view(&report, &i18n));
            StatusCode::OK
        }
        Err(e) => {
            page.message = Some(Notice::error(e.message(&i18n)));
            StatusCode::BAD_REQUEST
        }
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

fn line(r: &RoomUse) -> ReportLine {
    ReportLine {
        code: r.code.clone(),
        name: r.name.clone(),
        area: r.area.clone(),
        booked_hours: format!("{:.1}", r.booked_seconds as f64 / 3600.0),
        share: format!("{:.1}%", percent(r.working_booked_seconds, r.working_seconds)),
        bookings: r.bookings,
        cancellations: r.cancellations,
        releases: r.releases,
    }
}

fn query_of(period: Period) -> String {
    format!("from={}&to={}", period.from(), period.to())
}

fn view(report: &Utilisation, i18n: &crate::i18n::I18n) -> ReportView {
    let q = query_of(report.period);
    ReportView {
        period: format!("{} ~ {}", report.period.from(), report.period.to()),
        working_hours: format!("{:.0}", report.working_seconds() as f64 / 3600.0),
        lines: report.rooms.iter().map(line).collect(),
        total: line(&report.total()),
        chart: chart::utilisation_svg(report, i18n),
        utilisation_csv: format!("/api/admin/reports/utilisation.csv?{q}"),
        bookings_csv: format!("/api/admin/reports/bookings.csv?{q}"),
    }
}

/// One room (or the total) of the utilisation report, formatted.
pub struct ReportLine {
    pub code: String,
    pub name: String,
    pub area: String,
    pub booked_hours: String,
    pub share: String,
    pub bookings: i64,
    pub cancellations: i64,
    pub releases: i64,
}

pub struct ReportView {
    pub period: String,
    pub working_hours: String,
    pub lines: Vec<ReportLine>,
    pub total: ReportLine,
    /// Inline `<svg>` from `reports::chart` (no text of people's in it).
    pub chart: Option<String>,
    pub utilisation_csv: String,
    pub bookings_csv: String,
}

#[derive(Template)]
#[template(path = "admin_reports.html")]
pub struct ReportsPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub from: String,
    pub to: String,
    pub timezone: String,
    pub message: Option<Notice>,
    pub report: Option<ReportView>,
}
