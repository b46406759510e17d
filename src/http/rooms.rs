//! JSON routes of the room catalogue (SPEC §8): reads for every API key,
//! changes for admin keys, each change a command of the pipeline.

use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::extract::{AdminCaller, AdminCommand, ApiCaller, ApiJson};
use super::openapi::{Api, Op, Tag};
use super::run;
use crate::catalogue::domain::{
    combinations, Equipment, NewRoom, NewRoomBody, Room, RoomPatch, RoomPatchBody, SearchLimit,
};
use crate::catalogue::{commands, store, CreateRoom, PatchRoom};
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
use crate::rooms::store::{Retire, RetireRoom};
use crate::state::AppState;

pub fn routes(api: &mut Api) {
    use ErrorCode::*;
    let room_conflicts = [RoomPositionTaken, SuiteInOtherArea];
    api.route(
        Method::GET,
        "/rooms",
        Op::new::<RoomsReply>(
            Tag::Rooms,
            "listRooms",
            "rooms with every attribute, and the sets that book together",
            200,
        )
        .query("includeRetired", "true to list retired rooms too", false),
        list_rooms,
    )
    .route(
        Method::GET,
        "/rooms/free",
        Op::new::<FreeRoomsReply>(
            Tag::Rooms,
            "findFreeRooms",
            "active rooms free for the whole window, smallest sufficient capacity first, the first `limit`",
            200,
        )
        .query("from", "RFC 3339 start of the window", true)
        .query("to", "RFC 3339 end of the window", true)
        .query("minCapacity", "seats needed (default 1)", false)
        .query("area", "only rooms of this area", false)
        .query("limit", "how many rooms at most, the best first (default 100, at most 1000)", false)
        .query_list("equipment", "tags every room must have (repeat for several)"),
        find_free,
    )
    .route(
        Method::POST,
        "/rooms",
        Op::new::<Room>(Tag::Rooms, "createRoom", "add a room to the catalogue", 201)
            .admin()
            .owner_optional()
            .idempotent(true)
            .body::<NewRoomBody>()
            .errors(&[RoomCodeTaken])
            .errors(&room_conflicts)
            .runs(&commands::CREATE),
        create_room,
    )
    .route(
        Method::GET,
        "/rooms/{code}",
        Op::new::<RoomView>(Tag::Rooms, "getRoom", "one room, with its calendar address", 200).errors(&[NotFound]),
        get_room,
    )
    .route(
        Method::GET,
        "/rooms/{code}/buffer-conflicts",
        Op::new::<BufferConflictsReply>(
            Tag::Rooms,
            "listBufferConflicts",
            "future bookings the room's buffers as they are now would not allow (each was made under other buffers)",
            200,
        )
        .admin()
        .errors(&[NotFound]),
        buffer_conflicts,
    )
    .route(
        Method::PATCH,
        "/rooms/{code}",
        Op::new::<Room>(Tag::Rooms, "updateRoom", "change a room's attributes", 200)
            .admin()
            .owner_optional()
            .idempotent(false)
            .body::<RoomPatchBody>()
            .errors(&[NotFound, InvalidState])
            .errors(&room_conflicts)
            .runs(&commands::UPDATE),
        update_room,
    )
    .route(
        Method::POST,
        "/rooms/{code}/retire",
        Op::new::<Room>(Tag::Rooms, "retireRoom", "retire a room; its history stays", 200)
            .admin()
            .owner_optional()
            .idempotent(false)
            .body::<RetireBody>()
            .errors(&[NotFound, InvalidState, RoomHasFutureBookings])
            .runs(&crate::rooms::store::retire_room::RETIRE),
        retire_room,
    );
}

/// A room as the reads show it: every attribute, and its calendar address
/// (SPEC §17), by which a calendar app invites it.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "RoomWithAddress")]
pub struct RoomView {
    #[serde(flatten)]
    room: Room,
    /// `mailto:room-{code}@{YEYAK_ROOM_MAIL_DOMAIN}`.
    calendar_address: String,
}

fn view(state: &AppState, room: Room) -> RoomView {
    let calendar_address = crate::calendar::address::room_uri(&room.code, &state.room_mail_domain);
    RoomView { room, calendar_address }
}

#[derive(Serialize, JsonSchema)]
pub struct RoomsReply {
    rooms: Vec<RoomView>,
    /// Every set of rooms that may be booked together: each room alone and
    /// each contiguous run of a suite.
    combinations: Vec<Vec<String>>,
}

#[derive(Serialize, JsonSchema)]
pub struct FreeRoomsReply {
    rooms: Vec<RoomView>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListQuery {
    include_retired: Option<bool>,
}

async fn list_rooms(
    state: web::Data<AppState>,
    _: ApiCaller,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let rooms = store::list(&mut conn, query.include_retired.unwrap_or(false)).await.map_err(DbError::from)?;
    let active: Vec<Room> = rooms.iter().filter(|r| r.active).cloned().collect();
    let rooms = rooms.into_iter().map(|r| view(&state, r)).collect();
    Ok(HttpResponse::Ok().json(RoomsReply { combinations: combinations(&active), rooms }))
}

async fn get_room(state: web::Data<AppState>, _: ApiCaller, code: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let room = store::find(&mut conn, &code).await.map_err(DbError::from)?;
    room.map(|r| HttpResponse::Ok().json(view(&state, r))).ok_or_else(|| ApiError::not_found("room"))
}

/// The query of a free-room search, as valid values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreeQuery {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub min_capacity: i32,
    pub equipment: Equipment,
    pub area: Option<String>,
    pub limit: SearchLimit,
}

/// Longest window a search may cover.
const MAX_SEARCH_DAYS: i64 = 31;

impl FreeQuery {
    pub fn check(from: DateTime<Utc>, to: DateTime<Utc>) -> Result<(), ApiError> {
        if to <= from || (to - from).num_days() > MAX_SEARCH_DAYS {
            return Err(ApiError::malformed(
                "to",
                format!("must be after `from` and at most {MAX_SEARCH_DAYS} days later"),
            ));
        }
        Ok(())
    }

    fn parse(req: &HttpRequest) -> Result<Self, ApiError> {
        let pairs: Vec<(String, String)> =
            url::form_urlencoded::parse(req.query_string().as_bytes()).into_owned().collect();
        let one = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let instant = |name: &str| -> Result<DateTime<Utc>, ApiError> {
            let raw = one(name).ok_or_else(|| ApiError::malformed(name, "is required"))?;
            DateTime::parse_from_rfc3339(raw)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|_| ApiError::malformed(name, "must be an RFC 3339 time with an offset"))
        };
        let (from, to) = (instant("from")?, instant("to")?);
        Self::check(from, to)?;
        let min_capacity = match one("minCapacity") {
            None | Some("") => 1,
            Some(raw) => {
                raw.parse::<i32>()
                    .ok()
                    .filter(|c| (1..=crate::catalogue::domain::MAX_CAPACITY).contains(c))
                    .ok_or_else(|| ApiError::malformed("minCapacity", "must be a whole number of seats, 1-10000"))?
            }
        };
        let tags: Vec<&str> = pairs.iter().filter(|(k, _)| k == "equipment").map(|(_, v)| v.as_str()).collect();
        let equipment = Equipment::parse("equipment", &tags)?;
        let area = one("area").filter(|a| !a.trim().is_empty()).map(|a| a.trim().to_owned());
        let limit = SearchLimit::parse("limit", one("limit"))?;
        Ok(FreeQuery { from, to, min_capacity, equipment, area, limit })
    }
}

async fn find_free(state: web::Data<AppState>, _: ApiCaller, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let q = FreeQuery::parse(&req)?;
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let rooms = store::free(&mut conn, q.from, q.to, q.min_capacity, &q.equipment.tags(), q.area.as_deref(), q.limit)
        .await
        .map_err(DbError::from)?;
    let rooms = rooms.into_iter().map(|r| view(&state, r)).collect();
    Ok(HttpResponse::Ok().json(FreeRoomsReply { rooms }))
}

async fn create_room(
    state: web::Data<AppState>,
    AdminCommand(cmd): AdminCommand,
    ApiJson(body): ApiJson<NewRoomBody>,
) -> Result<HttpResponse, ApiError> {
    let key = cmd.required_key()?;
    let new = NewRoom::parse(body)?;
    run(&state.pipeline, &cmd.principal, Some(key), &CreateRoom(new)).await
}

async fn update_room(
    state: web::Data<AppState>,
    AdminCommand(cmd): AdminCommand,
    code: web::Path<String>,
    ApiJson(body): ApiJson<RoomPatchBody>,
) -> Result<HttpResponse, ApiError> {
    let patch = RoomPatch::parse(body)?;
    let command = PatchRoom { code: code.into_inner(), patch };
    run(&state.pipeline, &cmd.principal, cmd.key, &command).await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "RetireRoomRequest")]
pub struct RetireBody {
    /// Cancel the room's future bookings (whole, with every linked room) in
    /// the same transaction; without it a room with future bookings is not
    /// retired.
    cancel_future_bookings: Option<bool>,
}

async fn retire_room(
    state: web::Data<AppState>,
    AdminCommand(cmd): AdminCommand,
    code: web::Path<String>,
    ApiJson(body): ApiJson<RetireBody>,
) -> Result<HttpResponse, ApiError> {
    let retire = Retire { cancel_future_bookings: body.cancel_future_bookings.unwrap_or(false) };
    let command = RetireRoom { code: code.into_inner(), retire };
    run(&state.pipeline, &cmd.principal, cmd.key, &command).await
}

/// `GET /api/rooms/{code}/buffer-conflicts`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BufferConflictsReply {
    pub room: String,
    pub buffer_before_minutes: i32,
    pub buffer_after_minutes: i32,
    pub bookings: Vec<crate::rooms::booking::Booking>,
}

async fn buffer_conflicts(
    state: web::Data<AppState>,
    _: AdminCaller,
    code: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let room =
        store::find(&mut conn, &code).await.map_err(DbError::from)?.ok_or_else(|| ApiError::not_found("room"))?;
    let ids = store::buffer_conflicts(&mut conn, &room.code, state.clock.now()).await.map_err(DbError::from)?;
    let bookings = crate::rooms::booking::find_many(&mut conn, &ids).await.map_err(DbError::from)?;
    Ok(HttpResponse::Ok().json(BufferConflictsReply {
        room: room.code,
        buffer_before_minutes: room.buffer_before_minutes,
        buffer_after_minutes: room.buffer_after_minutes,
        bookings,
    }))
}
