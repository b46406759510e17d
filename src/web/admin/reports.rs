//! `/admin/reports?from=…&to=…&area=…` (SPEC §12, §24): per-room
//! utilisation of its area's working hours as a table and a server-drawn SVG
//! bar chart, each area's zone and working hours, with links to both CSV
//! downloads (for the same area). A bad range or an unknown area answers
//! 400 with the form and the reason.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use crate::db::DbError;
use crate::http::extract::RangeQuery;
use crate::reports::domain::{percent, AreaHours, Utilisation};
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
    let area = query.area().map(str::to_owned);
    // The choices: the areas of the active rooms (the catalogue's snapshot,
    // no statement), and the one asked for when it has none.
    let mut areas = state.catalogue.current().await.map(|c| c.areas()).unwrap_or_default();
    if let Some(a) = area.as_ref().filter(|a| !areas.contains(a)) {
        areas.push(a.clone());
    }
    let mut page = ReportsPage {
        i18n: i18n.clone(),
        nav: nav(&user, &csrf.token),
        from: query.from.clone().unwrap_or_default(),
        to: query.to.clone().unwrap_or_default(),
        area: area.clone().unwrap_or_default(),
        areas,
        message: None,
        report: None,
    };
    let status = match query.period(&state) {
        Ok(period) => {
            let report = {
                let mut conn = state.read_pool.get().await.map_err(DbError::from)?;
                store::utilisation(&mut conn, period, state.policy().timezone, area.as_deref()).await?
            };
            (page.from, page.to) = (period.from().to_string(), period.to().to_string());
            match report {
                Some(report) => {
                    page.report = Some(view(&report, &i18n));
                    StatusCode::OK
                }
                None => {
                    page.areas.retain(|a| Some(a) != area.as_ref());
                    page.area.clear();
                    let asked = area.unwrap_or_default();
                    page.message = Some(Notice::error(i18n.t1("report-refused-area", "area", asked)));
                    StatusCode::BAD_REQUEST
                }
            }
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
        released_hours: format!("{:.1}", r.released_seconds as f64 / 3600.0),
        reused_hours: format!("{:.1}", r.reused_seconds as f64 / 3600.0),
        reused_share: format!("{:.1}%", r.reused_percent()),
    }
}

fn query_of(period: Period, area: Option<&str>) -> String {
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    q.append_pair("from", &period.from().to_string()).append_pair("to", &period.to().to_string());
    if let Some(area) = area {
        q.append_pair("area", area);
    }
    q.finish()
}

/// An area's zone and working hours, as the page says them.
fn area_line(a: &AreaHours) -> AreaLine {
    AreaLine {
        code: a.code.clone(),
        time_zone: a.time_zone.clone(),
        working_hours: format!("{:.1}", a.working_seconds as f64 / 3600.0),
    }
}

fn view(report: &Utilisation, i18n: &crate::i18n::I18n) -> ReportView {
    let q = query_of(report.period, report.area.as_deref());
    ReportView {
        period: format!("{} ~ {}", report.period.from(), report.period.to()),
        areas: report.areas.iter().map(area_line).collect(),
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
    /// Recaptured time (SPEC §25): released, booked again, and the share.
    pub released_hours: String,
    pub reused_hours: String,
    pub reused_share: String,
}

/// One area of the report: its zone and the working hours of each of its
/// rooms over the period.
pub struct AreaLine {
    pub code: String,
    pub time_zone: String,
    pub working_hours: String,
}

pub struct ReportView {
    pub period: String,
    pub areas: Vec<AreaLine>,
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
    /// The area asked for, empty for all.
    pub area: String,
    /// The form's choices of area.
    pub areas: Vec<String>,
    pub message: Option<Notice>,
    pub report: Option<ReportView>,
}
