//! JSON routes of bookings (SPEC §7.2). Handlers parse the request into a
//! command and run it through the pipeline; the pipeline checks the role.

use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, NaiveDate, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::extract::{rfc3339, AdminCommand, ApiCaller, ApiCommand, ApiJson, Reading};
use super::openapi::{Api, Op, Tag};
use super::run;
use crate::checkin::{self, CheckIn};
use crate::error::{ApiError, ErrorCode};
use crate::rooms::booking::{self, Booking, FreeInterval, PageMark};
use crate::rooms::desks::{DeskDay, Unit, When};
use crate::rooms::domain::{day_bounds, RequestedRooms, TimeRange, Title};
use crate::rooms::store::{cancel, create, decide, move_to, CancelBooking, CreateBooking, DecideBooking, MoveBooking};
use crate::state::AppState;

/// The refusals of a booking's rules (SPEC §2, §8, §12), for the document.
pub const BOOKING_RULES: [ErrorCode; 8] = [
    ErrorCode::RoomCombinationNotAllowed,
    ErrorCode::UnknownRoom,
    ErrorCode::InvalidTimeRange,
    ErrorCode::TimeNotMinuteAligned,
    ErrorCode::BookingTooLong,
    ErrorCode::BookingInPast,
    ErrorCode::BeyondHorizon,
    ErrorCode::QuotaExceeded,
];

pub fn routes(api: &mut Api) {
    use ErrorCode::*;
    let rules = BOOKING_RULES;
    api.route(
        Method::GET,
        "/rooms/{code}/availability",
        Op::new::<AvailabilityReply>(Tag::Rooms, "getRoomAvailability", "free intervals of a room on a day", 200)
            .query("date", "YYYY-MM-DD in the configured zone", true)
            .errors(&[NotFound]),
        availability,
    )
    .route(
        Method::GET,
        "/bookings",
        Op::new::<BookingsReply>(
            Tag::Bookings,
            "listBookings",
            "bookings of a day or a window, by start then id, at most 500 a page; `nextCursor` asks for the next",
            200,
        )
        .query("date", "YYYY-MM-DD (or from and to)", false)
        .query("from", "RFC 3339 start of the window", false)
        .query("to", "RFC 3339 end of the window", false)
        .query("includeCancelled", "true to include cancelled bookings", false)
        .query("cursor", "the `nextCursor` of the page before (opaque); absent for the first page", false),
        list_bookings,
    )
    .route(
        Method::POST,
        "/bookings",
        Op::new::<Booking>(Tag::Bookings, "createBooking", "book one room or a linked run of rooms", 201)
            .owner()
            .idempotent(true)
            .body::<CreateBody>()
            .errors(&rules)
            .errors(&[RoomTimeTaken, RoomBufferTaken, DeskAlreadyBooked, DeskAssigned])
            .runs(&create::CREATE),
        create_booking,
    )
    .route(
        Method::GET,
        "/bookings/{id}",
        Op::new::<Booking>(Tag::Bookings, "getBooking", "one booking", 200).errors(&[NotFound]),
        get_booking,
    )
    .route(
        Method::PATCH,
        "/bookings/{id}",
        Op::new::<Booking>(Tag::Bookings, "moveBooking", "move a booking (organizer or admin)", 200)
            .owner()
            .idempotent(false)
            .body::<MoveBody>()
            .errors(&rules)
            .errors(&[RoomTimeTaken, RoomBufferTaken, NotFound, NotOrganizer, VersionConflict, InvalidState])
            .runs(&move_to::MOVE),
        move_booking,
    )
    .route(
        Method::POST,
        "/bookings/{id}/cancel",
        Op::new::<Booking>(Tag::Bookings, "cancelBooking", "cancel a booking (organizer or admin)", 200)
            .owner()
            .idempotent(false)
            .body::<CancelBody>()
            .errors(&[NotFound, NotOrganizer, VersionConflict, InvalidState])
            .runs(&cancel::CANCEL),
        cancel_booking,
    )
    .route(
        Method::POST,
        "/bookings/{id}/check-in",
        Op::new::<Booking>(
            Tag::Bookings,
            "checkInBooking",
            "check a booking in (organizer or admin) inside its window",
            200,
        )
        .owner()
        .idempotent(false)
        .body::<EmptyBody>()
        .errors(&[NotFound, NotOrganizer, InvalidState, CheckInClosed, CheckInNotRequired])
        .runs(&checkin::CHECK_IN),
        check_in,
    )
    .route(
        Method::POST,
        "/bookings/{id}/approve",
        Op::new::<Booking>(Tag::Bookings, "approveBooking", "confirm a pending booking (admin)", 200)
            .admin()
            .owner_optional()
            .idempotent(true)
            .body::<DecisionBody>()
            .errors(&[NotFound, InvalidState])
            .runs(&decide::APPROVE),
        approve,
    )
    .route(
        Method::POST,
        "/bookings/{id}/reject",
        Op::new::<Booking>(
            Tag::Bookings,
            "rejectBooking",
            "refuse a pending booking; its time is free at once (admin)",
            200,
        )
        .admin()
        .owner_optional()
        .idempotent(true)
        .body::<DecisionBody>()
        .errors(&[NotFound, InvalidState])
        .runs(&decide::REJECT),
        reject,
    );
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BookingsReply {
    /// At most 500, by start then id.
    bookings: Vec<Booking>,
    /// Pass as `?cursor=` (with the same window) for the bookings after these;
    /// null on the last page.
    next_cursor: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct AvailabilityReply {
    room: String,
    date: String,
    free: Vec<FreeInterval>,
}

fn parse_date(raw: &str) -> Result<NaiveDate, ApiError> {
    crate::day::parse_field("date", raw)
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
    cursor: Option<String>,
}

/// Longest window one list request may cover.
const MAX_LIST_DAYS: i64 = 92;

/// Most bookings one list answer carries (SPEC §20).
const LIST_PAGE: usize = 500;

async fn list_bookings(
    state: web::Data<AppState>,
    reading: Reading,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let (from, to) = match (&query.date, &query.from, &query.to) {
        (Some(date), None, None) => day_bounds(state.policy().timezone, parse_date(date)?),
        (None, Some(from), Some(to)) => (parse_instant("from", from)?, parse_instant("to", to)?),
        _ => return Err(ApiError::malformed("date", "give either `date` or both `from` and `to`")),
    };
    if to <= from || (to - from).num_days() > MAX_LIST_DAYS {
        return Err(ApiError::malformed("to", format!("must be after `from` and at most {MAX_LIST_DAYS} days later")));
    }
    let after = match query.cursor.as_deref() {
        None => None,
        Some(raw) => {
            Some(PageMark::decode(raw).ok_or_else(|| ApiError::malformed("cursor", "not a cursor of this list"))?)
        }
    };
    // May lag the caller's own writes by the standby's replay delay (docs/SCALING.md §2).
    let mut conn = state.read_pool.get().await.map_err(crate::db::DbError::from)?;
    let include_cancelled = query.include_cancelled.unwrap_or(false);
    // One more than a page tells whether another page follows.
    let mut bookings = booking::list(&mut conn, from, to, include_cancelled, after, LIST_PAGE as i64 + 1)
        .await
        .map_err(crate::db::DbError::from)?;
    let next_cursor = (bookings.len() > LIST_PAGE).then(|| {
        bookings.truncate(LIST_PAGE);
        PageMark::after(&bookings[LIST_PAGE - 1]).encode()
    });
    let bookings = reading.reader.show_all(bookings, &reading.label());
    Ok(HttpResponse::Ok().json(BookingsReply { bookings, next_cursor }))
}

async fn get_booking(
    state: web::Data<AppState>,
    reading: Reading,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await.map_err(crate::db::DbError::from)?;
    let booking = booking::find(&mut conn, id.into_inner()).await.map_err(crate::db::DbError::from)?;
    booking.map(|b| HttpResponse::Ok().json(reading.show(b))).ok_or_else(|| ApiError::not_found("booking"))
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
    let date = parse_date(&query.date)?;
    let mut conn = state.pool.get().await.map_err(crate::db::DbError::from)?;
    let room = crate::catalogue::store::find(&mut conn, &code)
        .await
        .map_err(crate::db::DbError::from)?
        .ok_or_else(|| ApiError::not_found("room"))?;
    // The room's area's day (SPEC §24).
    let (from, to) = day_bounds(room.zone(), date);
    let free = booking::free_intervals(&mut conn, &room.code, from, to).await.map_err(crate::db::DbError::from)?;
    Ok(HttpResponse::Ok().json(AvailabilityReply { room: room.code.clone(), date: query.date.clone(), free }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "CreateBookingRequest")]
pub struct CreateBody {
    /// Required but for a desk (whose title is then its code).
    pub title: Option<String>,
    pub rooms: Vec<String>,
    /// RFC 3339; a room's booking only.
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub starts_at: Option<String>,
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub ends_at: Option<String>,
    /// A desk's day (YYYY-MM-DD in its area), with `unit` (SPEC §28).
    pub date: Option<String>,
    /// `day`, `am` or `pm`: a desk's whole working day or a half.
    pub unit: Option<String>,
    pub organizer_name: Option<String>,
    /// Title, organizer and attendees shown only to the organizer, their
    /// delegates and admins (SPEC §26); default false.
    pub private: Option<bool>,
}

impl CreateBody {
    /// Instants for a room, or a date and unit for a desk; the fields of
    /// the other way are refused by name.
    pub fn when(&self) -> Result<When, ApiError> {
        match (&self.unit, &self.starts_at, &self.ends_at) {
            (Some(unit), None, None) => {
                let date =
                    self.date.as_deref().ok_or_else(|| ApiError::malformed("date", "a desk's unit needs a date"))?;
                Ok(When::Desk(DeskDay { date: parse_date(date)?, unit: Unit::parse("unit", unit)? }))
            }
            (Some(_), _, _) => {
                Err(ApiError::malformed("startsAt", "give either startsAt and endsAt, or date and unit"))
            }
            (None, starts, ends) => {
                if self.date.is_some() {
                    return Err(ApiError::malformed("unit", "a date books a desk: give its unit"));
                }
                let starts = starts.as_deref().ok_or_else(|| ApiError::malformed("startsAt", "required"))?;
                let ends = ends.as_deref().ok_or_else(|| ApiError::malformed("endsAt", "required"))?;
                Ok(When::Range(TimeRange::new(parse_instant("startsAt", starts)?, parse_instant("endsAt", ends)?)?))
            }
        }
    }

    /// The title given; a desk's booking may leave it out (its rooms' codes).
    pub fn title(&self) -> Result<Title, ApiError> {
        match (&self.title, &self.unit) {
            (Some(t), _) => Title::parse(t),
            (None, Some(_)) => Title::parse(&self.rooms.join("+")),
            (None, None) => Err(ApiError::malformed("title", "required")),
        }
    }
}

async fn create_booking(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    ApiJson(body): ApiJson<CreateBody>,
) -> Result<HttpResponse, ApiError> {
    let key = cmd.required_key()?;
    let command = CreateBooking {
        title: body.title()?,
        rooms: RequestedRooms::parse(&body.rooms)?,
        when: body.when()?,
        organizer_name: cmd.organizer_name(body.organizer_name.as_deref())?,
        private: body.private.unwrap_or(false),
    };
    run(&state.pipeline, &cmd.principal, Some(key), &command).await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "MoveBookingRequest")]
pub struct MoveBody {
    #[serde(with = "rfc3339")]
    #[schemars(with = "DateTime<Utc>")]
    pub starts_at: DateTime<Utc>,
    #[serde(with = "rfc3339")]
    #[schemars(with = "DateTime<Utc>")]
    pub ends_at: DateTime<Utc>,
    pub title: Option<String>,
    pub expected_version: Option<i32>,
    /// Private from now on, or not (SPEC §26); absent: as it was.
    pub private: Option<bool>,
}

async fn move_booking(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<MoveBody>,
) -> Result<HttpResponse, ApiError> {
    let change = move_to::Change {
        range: TimeRange::new(body.starts_at, body.ends_at)?,
        title: body.title.as_deref().map(Title::parse).transpose()?,
        expected_version: body.expected_version,
        rooms: None,
        private: body.private,
    };
    let command = MoveBooking { id: id.into_inner(), change };
    run(&state.pipeline, &cmd.principal, cmd.key, &command).await
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "CancelBookingRequest")]
pub struct CancelBody {
    expected_version: Option<i32>,
}

async fn cancel_booking(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<CancelBody>,
) -> Result<HttpResponse, ApiError> {
    let command = CancelBooking { id: id.into_inner(), expected_version: body.expected_version };
    run(&state.pipeline, &cmd.principal, cmd.key, &command).await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "EmptyRequest")]
pub struct EmptyBody {}

async fn check_in(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    id: web::Path<i64>,
    ApiJson(_): ApiJson<EmptyBody>,
) -> Result<HttpResponse, ApiError> {
    let command = CheckIn { id: id.into_inner() };
    run(&state.pipeline, &cmd.principal, cmd.key, &command).await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "DecisionRequest")]
pub struct DecisionBody {
    /// Shown to the organizer and kept in the history.
    pub reason: Option<String>,
}

async fn decide_booking(
    state: &AppState,
    cmd: ApiCommand,
    id: i64,
    body: DecisionBody,
    approve: bool,
) -> Result<HttpResponse, ApiError> {
    let key = cmd.required_key()?;
    let command = DecideBooking { id, decision: decide::Decision::parse(approve, body.reason.as_deref())? };
    run(&state.pipeline, &cmd.principal, Some(key), &command).await
}

async fn approve(
    state: web::Data<AppState>,
    AdminCommand(cmd): AdminCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<DecisionBody>,
) -> Result<HttpResponse, ApiError> {
    decide_booking(&state, cmd, id.into_inner(), body, true).await
}

async fn reject(
    state: web::Data<AppState>,
    AdminCommand(cmd): AdminCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<DecisionBody>,
) -> Result<HttpResponse, ApiError> {
    decide_booking(&state, cmd, id.into_inner(), body, false).await
}
