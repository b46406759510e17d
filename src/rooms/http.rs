//! JSON routes of SPEC §7.2. Handlers parse, authorise, call one store
//! function through the idempotency runner, and map the result.

use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::domain::{TimeRange, Title};
use super::service;
use super::store::{self, Actor, Booking, MoveBooking, NewBooking};
use crate::error::{ApiError, ErrorCode};
use crate::http::extract::{rfc3339, ApiCaller, ApiJson, IdemKey, Owner};
use crate::http::openapi::{Api, Op};
use crate::state::AppState;

pub fn routes(api: &mut Api) {
    use ErrorCode::*;
    let rules =
        [RoomCombinationNotAllowed, UnknownRoom, InvalidTimeRange, TimeNotMinuteAligned, BookingTooLong, BookingInPast];
    api.route(
        Method::GET,
        "/rooms",
        Op::new::<RoomsReply>("rooms and the combinations that may be booked together", 200),
        list_rooms,
    )
    .route(
        Method::GET,
        "/rooms/{code}/availability",
        Op::new::<AvailabilityReply>("free intervals of a room on a day", 200)
            .query("date", "YYYY-MM-DD in the configured zone", true)
            .errors(&[NotFound]),
        availability,
    )
    .route(
        Method::GET,
        "/bookings",
        Op::new::<BookingsReply>("bookings of a day or a window", 200)
            .query("date", "YYYY-MM-DD (or from and to)", false)
            .query("from", "RFC 3339 start of the window", false)
            .query("to", "RFC 3339 end of the window", false)
            .query("includeCancelled", "true to include cancelled bookings", false),
        list_bookings,
    )
    .route(
        Method::POST,
        "/bookings",
        Op::new::<Booking>("book one room or a linked run of rooms", 201)
            .owner()
            .idempotent(true)
            .body::<CreateBody>()
            .errors(&rules)
            .errors(&[RoomTimeTaken]),
        create_booking,
    )
    .route(Method::GET, "/bookings/{id}", Op::new::<Booking>("one booking", 200).errors(&[NotFound]), get_booking)
    .route(
        Method::PATCH,
        "/bookings/{id}",
        Op::new::<Booking>("move a booking (organizer or admin)", 200)
            .owner()
            .idempotent(false)
            .body::<MoveBody>()
            .errors(&rules)
            .errors(&[RoomTimeTaken, NotFound, NotOrganizer, VersionConflict, InvalidState]),
        move_booking,
    )
    .route(
        Method::POST,
        "/bookings/{id}/cancel",
        Op::new::<Booking>("cancel a booking (organizer or admin)", 200)
            .owner()
            .idempotent(false)
            .body::<CancelBody>()
            .errors(&[NotFound, NotOrganizer, VersionConflict, InvalidState]),
        cancel_booking,
    );
}

#[derive(Serialize, JsonSchema)]
pub struct RoomsReply {
    rooms: Vec<crate::rooms::domain::Room>,
    combinations: Vec<Vec<String>>,
}

#[derive(Serialize, JsonSchema)]
pub struct BookingsReply {
    bookings: Vec<Booking>,
}

#[derive(Serialize, JsonSchema)]
pub struct AvailabilityReply {
    room: String,
    date: String,
    free: Vec<store::FreeInterval>,
}

async fn list_rooms(state: web::Data<AppState>, _: ApiCaller) -> HttpResponse {
    HttpResponse::Ok()
        .json(RoomsReply { rooms: state.rooms.rooms().to_vec(), combinations: state.rooms.combinations() })
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
    // May lag the caller's own writes by the standby's replay delay (docs/SCALING.md §2).
    let mut conn = state.read_pool.get().await.map_err(crate::db::DbError::from)?;
    let bookings = store::list(&mut conn, from, to, query.include_cancelled.unwrap_or(false))
        .await
        .map_err(crate::db::DbError::from)?;
    Ok(HttpResponse::Ok().json(BookingsReply { bookings }))
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
    Ok(HttpResponse::Ok().json(AvailabilityReply { room: room.code.clone(), date: query.date.clone(), free }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateBody {
    title: String,
    rooms: Vec<String>,
    #[serde(with = "rfc3339")]
    #[schemars(with = "DateTime<Utc>")]
    starts_at: DateTime<Utc>,
    #[serde(with = "rfc3339")]
    #[schemars(with = "DateTime<Utc>")]
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

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MoveBody {
    #[serde(with = "rfc3339")]
    #[schemars(with = "DateTime<Utc>")]
    starts_at: DateTime<Utc>,
    #[serde(with = "rfc3339")]
    #[schemars(with = "DateTime<Utc>")]
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

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CancelBody {
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
