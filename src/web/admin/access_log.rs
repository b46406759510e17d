//! `/admin/access-log?from=…&to=…` (SPEC §26): the access records of a range
//! of local dates, newest first; and [`note`], the one way a page records
//! that a signed-in admin viewed other people's personal data.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use chrono_tz::Tz;

use crate::auth::staff::StaffUser;
use crate::db::DbError;
use crate::http::extract::RangeQuery;
use crate::privacy::access::{self, Access, AccessRecord, Actor, Kind};
use crate::state::AppState;
use crate::web::language::PageI18n;
use crate::web::pages::{self, nav, Nav, Notice};
use crate::web::{html_response, Csrf, SignedInAdmin, WebError};

/// The admin as an access record names them.
pub fn actor(user: &StaffUser) -> Actor {
    Actor::Staff { id: user.id, username: user.username.clone() }
}

/// Records that `user` viewed `kind` (one statement, before the page answers).
pub async fn note(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    kind: Kind,
    subject: Option<i64>,
    people: usize,
) -> Result<(), DbError> {
    let mut conn = state.pool.get().await?;
    let actor = actor(user);
    let address = state.transport.client_ip(req);
    access::record(&mut conn, &Access { actor: &actor, kind, subject, people, address }).await
}

pub async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInAdmin(user): SignedInAdmin,
) -> Result<HttpResponse, WebError> {
    let query = RangeQuery::of(&req);
    let csrf = Csrf::for_render(&req, &state);
    let i18n = PageI18n::of(&req);
    let tz = state.policy().timezone;
    let mut page = AccessLogPage {
        i18n: i18n.clone(),
        nav: nav(&user, &csrf.token),
        from: query.from.clone().unwrap_or_default(),
        to: query.to.clone().unwrap_or_default(),
        message: None,
        records: Vec::new(),
    };
    let status = match query.period(&state) {
        Ok(period) => {
            let (from, to) = access::instants(period.from(), period.to(), tz);
            let mut conn = state.pool.get().await.map_err(DbError::from)?;
            let (records, truncated) = access::list(&mut conn, from, to).await?;
            if truncated {
                page.message = Some(Notice::error(i18n.t1("access-log-truncated", "count", access::LIST_LIMIT)));
            }
            (page.from, page.to) = (period.from().to_string(), period.to().to_string());
            page.records = records.iter().map(|r| line(r, tz, &i18n)).collect();
            StatusCode::OK
        }
        Err(e) => {
            page.message = Some(Notice::error(e.message(&i18n)));
            StatusCode::BAD_REQUEST
        }
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

fn line(r: &AccessRecord, tz: Tz, i18n: &PageI18n) -> AccessLine {
    AccessLine {
        at: r.at.with_timezone(&tz).format("%Y-%m-%d %H:%M:%S").to_string(),
        actor: if r.actor_kind == "key" {
            i18n.t1("access-log-key", "tenant", r.actor.as_str())
        } else {
            r.actor.clone()
        },
        kind: i18n.t(kind_key(&r.kind)),
        subject: r.subject.clone().unwrap_or_default(),
        address: r.address.clone().unwrap_or_default(),
        people: r.people,
    }
}

/// The catalogue key of a record's kind.
fn kind_key(kind: &str) -> &'static str {
    match kind {
        "staff_list" => "access-kind-staff-list",
        "staff_api_list" => "access-kind-staff-api-list",
        "bookings_csv" => "access-kind-bookings-csv",
        "export" => "access-kind-export",
        "history" => "access-kind-history",
        _ => "access-kind-erase",
    }
}

pub struct AccessLine {
    pub at: String,
    pub actor: String,
    pub kind: String,
    pub subject: String,
    pub address: String,
    pub people: i32,
}

#[derive(Template)]
#[template(path = "admin_access_log.html")]
pub struct AccessLogPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub from: String,
    pub to: String,
    pub message: Option<Notice>,
    pub records: Vec<AccessLine>,
}
