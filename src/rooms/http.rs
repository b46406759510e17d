//! JSON routes of SPEC §7.2. Handlers parse, authorise, call one store
//! function through the idempotency runner, and map the result.

use actix_web::{web, HttpResponse};
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::domain::{TimeRange, Title};
use super::service;
use super::store::{self, Actor, MoveBooking, NewBooking};
use crate::error::ApiError;
use crate::http::extract::{rfc3339, ApiCaller, ApiJson, IdemKey, Owner};
use crate::state::AppState;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/rooms", web::get().to(list_rooms))
        .route("/rooms/{code}/availability", web::get().to(availability))
        .route("/bookings", web::get().to(list_bookings))
        .route("/bookings", web::post().to(create_booking))
        .route("/bookings/{id}", web::get().to(get_booking))
        .route("/bookings/{id}", web::patch().to(move_booking))
        .route("/bookings/{id}/cancel", web::post().to(cancel_booking));
}

async fn list_rooms(state: web::Data<AppState>, _: ApiCaller) -> HttpResponse {
    HttpResponse::Ok().json(json!({
        "rooms": state.rooms.rooms(),
        "combinations": state.rooms.combinations(),
    }))
}

/// The `[start, end)` of a calendar day in the configured zone, in UTC.
pub fn day_bounds(tz: Tz, date: NaiveDate) -> (DateTime<Utc>, DateTime<Utc>) {
    let start_of = |d: NaiveDate| {
        let midnight = d.and_hms_opt(0, 0, 0).expect("midnight exists");
        // A zone that skips midnight (DST) starts the day at its first instant.
        tz.from_local_datetime(&midnight)
            .earliest()
            .unwrap_or_else(|| tz.from_utc_datetime(&midnight))
            .with_timezone(&Utc)
    };
    (start_of(date), start_of(date.succ_opt().unwrap_or(date)))
}

fn parse_date(raw: &str) -> Result<NaiveDate, ApiError> {
    NaiveDate::parse_from_str(raw, "%Y-%m-%d").map_err(|_| ApiError::malformed("date", "must be YYYY-MM-DD"))
}

fn parse_instant(field: &str, raw: &str) -> Result<DateTime<Utc>, ApiError> {
    DateTime::parse_from_rfc3339(raw)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| ApiError::malformed(field, "must be an RFC 3339 time with an offset"))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListQuery {
    date: Option<String>,
    from: Option<String>,
    to: Option<String>,
    include_cancelled: Option<bool>,
}

/// Longest window one list request may cover.
const MAX_LIST_DAYS: i64 = 92;

async fn list_bookings(
    state: web::Data<AppState>,
    _: ApiCaller,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let (from, to) = match (&query.date, &query.from, &query.to) {
        (Some(date), None, None) => day_bounds(state.timezone, parse_date(date)?),
        (None, Some(from), Some(to)) => (parse_instant("from", from)?, parse_instant("to", to)?),
        _ => return Err(ApiError::malformed("date", "give either `date` or both `from` and `to`")),
    };
    if to <= from || (to - from).num_days() > MAX_LIST_DAYS {
        return Err(ApiError::malformed("to", format!("must be after `from` and at most {MAX_LIST_DAYS} days later")));
    }
    let mut conn = state.pool.get().await.map_err(crate::db::DbError::from)?;
    let bookings = store::list(&mut conn, from, to, query.include_cancelled.unwrap_or(false))
        .await
        .map_err(crate::db::DbError::from)?;
    Ok(HttpResponse::Ok().json(json!({ "bookings": bookings })))
}

async fn get_booking(state: web::Data<AppState>, _: ApiCaller, id: web::Path<i64>) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await.map_err(crate::db::DbError::from)?;
    let booking = store::find(&mut conn, id.into_inner()).await.map_err(crate::db::DbError::from)?;
    booking.map(|b| HttpResponse::Ok().json(b)).ok_or_else(|| ApiError::not_found("booking"))
}

#[derive(Debug, Deserialize)]
struct AvailabilityQuery {
    date: String,
}

async fn availability(
    state: web::Data<AppState>,
    _: ApiCaller,
    code: web::Path<String>,
    query: web::Query<AvailabilityQuery>,
) -> Result<HttpResponse, ApiError> {
    let room = state.rooms.get(&code).ok_or_else(|| ApiError::not_found("room"))?;
    let (from, to) = day_bounds(state.timezone, parse_date(&query.date)?);
    let mut conn = state.pool.get().await.map_err(crate::db::DbError::from)?;
    let free = store::free_intervals(&mut conn, &room.code, from, to).await.map_err(crate::db::DbError::from)?;
    Ok(HttpResponse::Ok().json(json!({ "room": room.code, "date": query.date, "free": free })))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateBody {
    title: String,
    rooms: Vec<String>,
    #[serde(with = "rfc3339")]
    starts_at: DateTime<Utc>,
    #[serde(with = "rfc3339")]
    ends_at: DateTime<Utc>,
    organizer_name: Option<String>,
}

async fn create_booking(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    key: IdemKey,
    ApiJson(body): ApiJson<CreateBody>,
) -> Result<HttpResponse, ApiError> {
    let key = key.required()?;
    let digest = owner.digest(&state, &caller);
    let new = NewBooking {
        title: Title::parse(&body.title)?,
        rooms: state.rooms.parse_set(&body.rooms)?,
        range: TimeRange::new(body.starts_at, body.ends_at, &state.rules)?,
        organizer_name: match &body.organizer_name {
            Some(name) => Title::parse_field("organizerName", name)?,
            None => Title::parse_field("organizerName", caller.tenant.as_str())?,
        },
        organizer: Some(digest.clone()),
    };
    let outcome = service::create(&state, &caller.tenant, key, &new, &digest).await?;
    Ok(outcome.into_response(true))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MoveBody {
    #[serde(with = "rfc3339")]
    starts_at: DateTime<Utc>,
    #[serde(with = "rfc3339")]
    ends_at: DateTime<Utc>,
    title: Option<String>,
    expected_version: Option<i32>,
}

fn actor(state: &AppState, caller: &crate::auth::Caller, owner: &Owner) -> Actor {
    Actor { digest: owner.digest(state, caller), is_admin: caller.is_admin() }
}

async fn move_booking(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    key: IdemKey,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<MoveBody>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let actor = actor(&state, &caller, &owner);
    let change = MoveBooking {
        range: TimeRange::new(body.starts_at, body.ends_at, &state.rules)?,
        title: body.title.as_deref().map(Title::parse).transpose()?,
        expected_version: body.expected_version,
    };
    let keyed = key.0.is_some();
    let outcome = service::move_to(&state, &caller.tenant, key.0, id, &change, &actor).await?;
    Ok(outcome.into_response(keyed))
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CancelBody {
    expected_version: Option<i32>,
}

async fn cancel_booking(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    key: IdemKey,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<CancelBody>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let actor = actor(&state, &caller, &owner);
    let keyed = key.0.is_some();
    let change = service::CancelBooking { expected_version: body.expected_version };
    let outcome = service::cancel(&state, &caller.tenant, key.0, id, change, &actor).await?;
    Ok(outcome.into_response(keyed))
}
