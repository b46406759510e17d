//! `GET`, `PUT` and `DELETE` of events (SPEC §17). A `PUT` into the
//! person's `bookings/` whose attendees include rooms books them through
//! the JSON API's commands and pipeline (as the signed-in person): a new
//! event is `booking.create` (or `series.create` for an `RRULE`, all or
//! nothing), an existing one is moved or given other rooms like `PATCH
//! /api/bookings/{id}` (`If-Match` optional, stale: 412), the series'
//! `EXDATE`s and overrides cancel or move their occurrences, and `DELETE`
//! cancels. A refusal answers the JSON API's status with yeyak's code and
//! message; nothing is stored on bad input. The stored event always
//! differs from what was sent (yeyak adds the rooms' answers), so no `PUT`
//! answer carries an `ETag` (RFC 4791 §5.3.4) and clients read it back.

use actix_web::http::{header, StatusCode};
use actix_web::HttpResponse;
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use super::commands::{InviteRooms, InviteSeries, Names};
use super::invitation::{self, Invitation, Refusal};
use super::path::Resource;
use super::props::{self, Calendar};
use super::store::{self, Member, Target};
use super::xml::CALDAV;
use super::{DavError, Door};
use crate::command::Command;
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
use crate::idempotency::IdempotencyKey;
use crate::rooms::booking::{self, Booking};
use crate::rooms::domain::{RequestedRooms, TimeRange, Title};
use crate::rooms::store::{move_to, CancelBooking, CreateBooking, MoveBooking};
use crate::series::domain::Recurrence;
use crate::series::{CancelSeries, ChangeSeries, CreateSeries, OnConflict, SeriesChange};

/// A member and its collection, from a member path.
async fn member_of(door: &Door<'_>, resource: &Resource) -> Result<(Calendar, String, Option<Member>), DavError> {
    let name = match resource {
        Resource::BookingMember(_, name) | Resource::RoomMember(_, name) => name.clone(),
        _ => return Err(DavError::Status(StatusCode::METHOD_NOT_ALLOWED)),
    };
    let calendar = props::calendar_of(door, resource).await?;
    let member = props::find_member(door, &calendar, &name).await?;
    Ok((calendar, name, member))
}

pub async fn get(door: &Door<'_>, resource: &Resource, head: bool) -> Result<HttpResponse, DavError> {
    let (_, _, member) = member_of(door, resource).await?;
    let member = member.ok_or_else(DavError::not_found)?;
    // Decided by the validators alone, before anything is rendered
    // (RFC 9110 §13.1: `If-None-Match` decides when sent, else
    // `If-Modified-Since`, at the one-second precision of HTTP dates).
    let stamp = header::HttpDate::from(std::time::SystemTime::from(member.last_modified));
    let still = match door.header(header::IF_NONE_MATCH) {
        Some(tags) => tags.split(',').any(|t| t.trim() == member.etag || t.trim() == "*"),
        None => door
            .header(header::IF_MODIFIED_SINCE)
            .and_then(|h| h.parse::<header::HttpDate>().ok())
            .map(|d| DateTime::<Utc>::from(std::time::SystemTime::from(d)))
            .is_some_and(|since| member.last_modified.timestamp() <= since.timestamp()),
    };
    if still {
        return Ok(HttpResponse::NotModified()
            .insert_header((header::ETAG, member.etag.clone()))
            .insert_header((header::LAST_MODIFIED, stamp))
            .finish());
    }
    let mut data = super::report::render_all(door, std::slice::from_ref(&member)).await?;
    let text = data.remove(&member.target).ok_or_else(DavError::not_found)?;
    let mut res = HttpResponse::Ok();
    res.content_type("text/calendar; charset=utf-8")
        .insert_header((header::ETAG, member.etag.clone()))
        .insert_header((header::LAST_MODIFIED, stamp))
        .insert_header((header::CACHE_CONTROL, "private, no-cache"));
    Ok(if head { res.finish() } else { res.body(text) })
}

/// `If-Match` / `If-None-Match` against the member as it is.
fn preconditions(door: &Door<'_>, member: Option<&Member>) -> Result<(), DavError> {
    let failed = DavError::Status(StatusCode::PRECONDITION_FAILED);
    if let Some(want) = door.header(header::IF_MATCH) {
        let ok = member.is_some_and(|m| want.split(',').any(|t| t.trim() == "*" || t.trim() == m.etag));
        if !ok {
            return Err(failed);
        }
    }
    if let Some(none) = door.header(header::IF_NONE_MATCH) {
        if member.is_some_and(|m| none.split(',').any(|t| t.trim() == "*" || t.trim() == m.etag)) {
            return Err(failed);
        }
    }
    Ok(())
}

/// The version an `If-Match` ETag names, for the command to decide on.
fn expected_version(door: &Door<'_>) -> Option<i32> {
    let tag = door.header(header::IF_MATCH)?.trim().trim_matches('"');
    tag.strip_prefix('b')?.split_once('-')?.1.parse().ok()
}

/// A refusal of the pipeline: a stale `If-Match` is 412, the rest as the
/// JSON API answers them.
fn refused(e: ApiError) -> DavError {
    if e.code == ErrorCode::VersionConflict {
        DavError::Status(StatusCode::PRECONDITION_FAILED)
    } else {
        DavError::Refused(e)
    }
}

fn read_invitation(door: &Door<'_>, body: &[u8]) -> Result<Invitation, DavError> {
    let text = std::str::from_utf8(body).map_err(|_| {
        DavError::precondition(StatusCode::BAD_REQUEST, CALDAV, "valid-calendar-data", "the body is not UTF-8")
    })?;
    invitation::read(text, door.state.policy().timezone, &door.state.room_mail_domain).map_err(|r| match r {
        Refusal::Invalid(why) => DavError::precondition(StatusCode::BAD_REQUEST, CALDAV, "valid-calendar-data", why),
        Refusal::Unsupported(why) => {
            DavError::precondition(StatusCode::FORBIDDEN, CALDAV, "supported-calendar-component", why)
        }
    })
}

/// The rooms an invitation names, as the catalogue spells their codes.
async fn room_codes(door: &Door<'_>, inv: &Invitation) -> Result<RequestedRooms, DavError> {
    if inv.rooms.is_empty() {
        return Err(DavError::Refused(ApiError::worded(ErrorCode::RoomRequired, serde_json::json!({}))));
    }
    let catalogue = door.state.catalogue.current().await?;
    let codes: Vec<String> = inv
        .rooms
        .iter()
        .map(|c| {
            catalogue
                .rooms()
                .iter()
                .find(|r| r.code.eq_ignore_ascii_case(c))
                .map_or_else(|| c.clone(), |r| r.code.clone())
        })
        .collect();
    Ok(RequestedRooms::parse(&codes)?)
}

/// The event's `SUMMARY`, or "meeting" in the caller's language when it has none.
pub fn title_of(lang: crate::i18n::Lang, inv: &Invitation) -> Result<Title, DavError> {
    let untitled = crate::i18n::I18n::new(lang).t("dav-untitled");
    let summary = if inv.summary.trim().is_empty() { untitled.as_str() } else { inv.summary.as_str() };
    Ok(Title::parse(summary)?)
}

/// What the event asks for, as valid values.
struct Wanted {
    rooms: RequestedRooms,
    title: Title,
    range: TimeRange,
}

pub async fn put(door: &Door<'_>, resource: &Resource, body: &[u8]) -> Result<HttpResponse, DavError> {
    let Resource::BookingMember(username, name) = resource else {
        return Err(match resource {
            Resource::RoomMember(..) | Resource::RoomCalendar(_) => {
                DavError::need_privileges("a room's calendar is read-only; invite the room from your own calendar")
            }
            _ => DavError::Status(StatusCode::METHOD_NOT_ALLOWED),
        });
    };
    door.ensure_own(username)?;
    let inv = read_invitation(door, body)?;
    let wanted = Wanted {
        rooms: room_codes(door, &inv).await?,
        title: title_of(door.lang, &inv)?,
        range: TimeRange::new(inv.starts_at, inv.ends_at)?,
    };
    let (calendar, _, member) = member_of(door, resource).await?;
    let _ = calendar;
    preconditions(door, member.as_ref())?;
    let mapped = {
        let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
        store::by_uid(&mut conn, door.caller.id, &inv.uid).await?
    };
    // One UID, one resource (RFC 4791 `no-uid-conflict`).
    if let (Some(m), None) = (&mapped, &member) {
        let live_elsewhere = m.name != *name && {
            let calendar = Calendar::Bookings { username: username.clone(), display_name: String::new() };
            props::find_member(door, &calendar, &m.name).await?.is_some()
        };
        if live_elsewhere {
            return Err(DavError::precondition(
                StatusCode::CONFLICT,
                CALDAV,
                "no-uid-conflict",
                format!("this UID is already the event {}", m.name),
            ));
        }
    }
    match member {
        // What the UID booked before (then deleted) makes a re-`PUT` of the
        // same body a new command, not a replay of the first.
        None => create(door, name, &inv, wanted, body, mapped.and_then(|m| m.target())).await,
        Some(m) => match m.target {
            Target::Booking(id) => update_booking(door, id, &inv, wanted).await,
            Target::Series(id) => update_series(door, id, &inv, wanted).await,
        },
    }
}

/// A new event: one booking, or a series (all or nothing), through the
/// JSON API's commands. The same `PUT` again is the same command (same
/// idempotency key), so it books once.
async fn create(
    door: &Door<'_>,
    name: &str,
    inv: &Invitation,
    wanted: Wanted,
    body: &[u8],
    before: Option<Target>,
) -> Result<HttpResponse, DavError> {
    let Wanted { rooms, title, range } = wanted;
    let names = Names { staff_id: door.caller.id, uid: inv.uid.clone(), name: name.to_owned() };
    let mut digest = Sha256::new();
    digest.update(door.caller.id.to_be_bytes());
    digest.update(name.as_bytes());
    digest.update([0]);
    digest.update(format!("{before:?}").as_bytes());
    digest.update([0]);
    digest.update(body);
    let key = IdempotencyKey::parse(&format!("dav-{}", hex::encode(digest.finalize())))
        .map_err(|e| DavError::Refused(ApiError::malformed("Idempotency-Key", e)))?;
    let organizer_name = Title::parse_field("organizerName", &door.caller.display_name)?;
    let principal = door.principal();
    let pipeline = &door.state.pipeline;
    match &inv.rrule {
        None => {
            let booking = CreateBooking { title, rooms, range, organizer_name };
            pipeline.execute(&principal, Some(key), &InviteRooms { booking, names }).await?.answer.map_err(refused)?;
        }
        Some(rule) => {
            let tz = door.state.policy().timezone;
            let recurrence = Recurrence::parse(rule, tz)?;
            let series =
                CreateSeries { title, rooms, first: range, recurrence, on_conflict: OnConflict::Fail, organizer_name };
            let created = pipeline
                .execute(&principal, Some(key), &InviteSeries { series, names })
                .await?
                .answer
                .map_err(refused)?;
            apply_exceptions(door, &created.created, inv).await?;
        }
    }
    Ok(HttpResponse::Created().finish())
}

async fn run<C: Command>(door: &Door<'_>, command: &C) -> Result<C::Output, DavError> {
    door.state.pipeline.run(&door.principal(), None, command).await.map_err(refused)
}

async fn load(door: &Door<'_>, id: i64) -> Result<Booking, DavError> {
    let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
    booking::find(&mut conn, id).await?.ok_or_else(DavError::not_found)
}

/// A `PUT` over a single booking: moved, retitled or given other rooms like
/// `PATCH /api/bookings/{id}`; unchanged, nothing runs.
async fn update_booking(door: &Door<'_>, id: i64, inv: &Invitation, wanted: Wanted) -> Result<HttpResponse, DavError> {
    let Wanted { rooms, title, range } = wanted;
    if inv.rrule.is_some() {
        return Err(DavError::Refused(ApiError::malformed(
            "RRULE",
            "a single booking cannot become a series; delete the event and invite the rooms again",
        )));
    }
    let current = load(door, id).await?;
    let same_rooms = rooms.codes() == current.rooms.as_slice();
    if same_rooms && range == current.time() && title.as_str() == current.title {
        return Ok(HttpResponse::NoContent().finish());
    }
    let change = move_to::Change {
        range,
        title: (title.as_str() != current.title).then_some(title),
        expected_version: expected_version(door),
        rooms: (!same_rooms).then_some(rooms),
    };
    run(door, &MoveBooking { id, change }).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// A `PUT` over a series: a new title or local times for its future
/// occurrences (`series.update`), and its `EXDATE`s and overrides as
/// cancelled or moved occurrences. Its rule, first date and rooms stay.
async fn update_series(door: &Door<'_>, id: i64, inv: &Invitation, wanted: Wanted) -> Result<HttpResponse, DavError> {
    let Wanted { rooms, title, range } = wanted;
    let tz = door.state.policy().timezone;
    let (series, occurrences) = {
        let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
        let s = crate::series::store::find(&mut conn, id).await?.ok_or_else(DavError::not_found)?;
        let o = crate::series::store::occurrences(&mut conn, id).await?;
        (s, o)
    };
    let same_rule = match &inv.rrule {
        Some(rule) => {
            let sent = Recurrence::parse(rule, tz)?;
            Recurrence::parse(&series.recurrence, tz).is_ok_and(|stored| stored.rule() == sent.rule())
        }
        None => false,
    };
    let same_day = inv.starts_at.with_timezone(&tz).date_naive() == series.starts_at.with_timezone(&tz).date_naive();
    if !same_rule || !same_day || rooms.codes() != series.rooms.as_slice() {
        return Err(DavError::Refused(ApiError::malformed(
            "RRULE",
            "a series keeps its rule, first date and rooms; delete the event and invite the rooms again",
        )));
    }
    let local = |t: DateTime<Utc>| t.with_timezone(&tz).time();
    let retimed =
        local(range.starts_at()) != local(series.starts_at) || local(range.ends_at()) != local(series.ends_at);
    let retitled = title.as_str() != series.title;
    if retimed || retitled {
        let change = SeriesChange {
            title: retitled.then_some(title),
            start_time: retimed.then(|| local(range.starts_at())),
            end_time: retimed.then(|| local(range.ends_at())),
            from: None,
        };
        run(door, &ChangeSeries { id, change }).await?;
    }
    apply_exceptions(door, &occurrences, inv).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// A series' `EXDATE`s and cancelled overrides cancel their occurrences;
/// overrides with other times move theirs (each an exception, as when
/// changed through the booking routes).
async fn apply_exceptions(door: &Door<'_>, occurrences: &[Booking], inv: &Invitation) -> Result<(), DavError> {
    let live = |at: DateTime<Utc>| occurrences.iter().find(|o| o.occurrence_start == Some(at) && o.status.is_live());
    for at in &inv.exdates {
        if let Some(o) = live(*at) {
            run(door, &CancelBooking { id: o.id, expected_version: None }).await?;
        }
    }
    for o in &inv.overrides {
        let Some(current) = live(o.recurrence_id) else { continue };
        if o.cancelled {
            run(door, &CancelBooking { id: current.id, expected_version: None }).await?;
        } else if (o.starts_at, o.ends_at) != (current.starts_at, current.ends_at) {
            let change = move_to::Change {
                range: TimeRange::new(o.starts_at, o.ends_at)?,
                title: None,
                expected_version: None,
                rooms: None,
            };
            run(door, &MoveBooking { id: current.id, change }).await?;
        }
    }
    Ok(())
}

/// `DELETE`: cancels the booking, or every future occurrence of the series.
pub async fn delete(door: &Door<'_>, resource: &Resource) -> Result<HttpResponse, DavError> {
    if matches!(resource, Resource::RoomMember(..) | Resource::RoomCalendar(_)) {
        return Err(DavError::need_privileges("a room's calendar is read-only"));
    }
    let (_, _, member) = member_of(door, resource).await?;
    let member = member.ok_or_else(DavError::not_found)?;
    preconditions(door, Some(&member))?;
    match member.target {
        Target::Booking(id) => {
            run(door, &CancelBooking { id, expected_version: expected_version(door) }).await?;
        }
        Target::Series(id) => {
            run(door, &CancelSeries { id, from: None }).await?;
        }
    }
    Ok(HttpResponse::NoContent().finish())
}
