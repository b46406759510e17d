//! `GET /api/admin/reports/utilisation.csv` and `…/bookings.csv` (SPEC §12,
//! §24): an admin key, or a signed-in admin following the page's links;
//! `?area=` for one area's rooms (an unknown area is a 400 naming `area`).

use actix_web::http::{header, Method};
use actix_web::{web, HttpRequest, HttpResponse};

use crate::db::DbError;
use crate::error::ApiError;
use crate::http::extract::{AdminReader, RangeQuery};
use crate::http::openapi::{Api, Op, Tag};
use crate::reports::{csv, store, Period};
use crate::state::AppState;

const FROM: &str = "first local date, YYYY-MM-DD (default: four weeks before `to`)";
const TO: &str = "last local date, included, YYYY-MM-DD (default: today; at most 366 days after `from`)";
const AREA: &str = "one area's code: only its rooms (default: every area)";

pub fn routes(api: &mut Api) {
    api.route(
        Method::GET,
        "/admin/reports/utilisation.csv",
        Op::new::<String>(
            Tag::Admin,
            "utilisationReport",
            "per active room: its area, booked hours, working hours of its area (weekdays and hours in its zone, \
             holidays left out) and the share booked, bookings, cancellations, releases (CSV)",
            200,
        )
        .admin()
        .media("text/csv")
        .query("from", FROM, false)
        .query("to", TO, false)
        .query("area", AREA, false),
        utilisation,
    )
    .route(
        Method::GET,
        "/admin/reports/bookings.csv",
        Op::new::<String>(Tag::Admin, "bookingsReport", "every booking starting in the range, any status (CSV)", 200)
            .admin()
            .media("text/csv")
            .query("from", FROM, false)
            .query("to", TO, false)
            .query("area", AREA, false),
        bookings,
    );
}

fn download(name: &str, period: Period, body: Vec<u8>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header((header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}_{}.csv\"", period.slug())))
        .body(body)
}

/// The answer to an area no row has.
pub fn unknown_area() -> ApiError {
    ApiError::malformed("area", "no area has this code")
}

async fn utilisation(state: web::Data<AppState>, _: AdminReader, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let query = RangeQuery::of(&req);
    let period = query.period(&state)?;
    let mut conn = state.read_pool.get().await.map_err(DbError::from)?;
    let report = store::utilisation(&mut conn, period, state.policy().timezone, query.area())
        .await
        .map_err(DbError::from)?
        .ok_or_else(unknown_area)?;
    Ok(download("utilisation", period, csv::utilisation(&report)))
}

async fn bookings(
    state: web::Data<AppState>,
    AdminReader(actor): AdminReader,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let query = RangeQuery::of(&req);
    let period = query.period(&state)?;
    let mut conn = state.read_pool.get().await.map_err(DbError::from)?;
    let lines = store::bookings(&mut conn, period, state.policy().timezone, query.area())
        .await
        .map_err(DbError::from)?
        .ok_or_else(unknown_area)?;
    drop(conn);
    // Organizers named in the download (SPEC §26's "how many people").
    let people = lines.iter().map(|l| l.organizer.as_str()).collect::<std::collections::BTreeSet<_>>().len();
    super::access_log::note(&state, &req, &actor, crate::privacy::Kind::BookingsCsv, None, people).await?;
    Ok(download("bookings", period, csv::bookings(&lines)))
}
