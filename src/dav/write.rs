//! `GET`, `PUT` and `DELETE` of calendar objects (SPEC §17, §23). A `PUT`
//! into the person's `bookings/` is one command (`dav::put`): the object is
//! stored as sent, with yeyak's own fields written in, and the rooms it
//! invites are booked through the JSON API's commands in the same
//! transaction — a room that cannot take it answers `DECLINED` inside the
//! event, and the `PUT` succeeds (201 new, 204 changed) for any valid
//! calendar data. The answer carries an `ETag` only when the stored bytes
//! are those sent (RFC 4791 §5.3.4), so a client whose event gained a
//! room's answer reads it back. `DELETE` cancels what it booked. Bookings
//! made through other doors are read-only members here until a `PUT`
//! adopts them at their own name.

use actix_web::http::{header, StatusCode};
use actix_web::HttpResponse;
use chrono::{DateTime, Utc};

use super::answer::Asked;
use super::invitation::{Invitation, Refusal};
use super::objects;
use super::path::Resource;
use super::props::{self, Calendar};
use super::put::{DeleteObject, StoreObject, Stored};
use super::sent::{self, Object};
use super::store::{self, Member, Target};
use super::xml::CALDAV;
use super::{DavError, Door};
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
use crate::i18n::Lang;
use crate::rooms::domain::{RequestedRooms, TimeRange, Title};
use crate::rooms::store::CancelBooking;
use crate::series::domain::Recurrence;
use crate::series::CancelSeries;

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
    if let Resource::BookingMember(username, name) = resource {
        door.ensure_own(username)?;
        let stored = {
            let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
            objects::read(&mut conn, door.caller.id, name).await?
        };
        if let Some(o) = stored {
            return Ok(answer_get(door, &o.etag, o.updated_at, o.body, head));
        }
    }
    let (_, _, member) = member_of(door, resource).await?;
    let member = member.ok_or_else(DavError::not_found)?;
    if not_modified(door, &member.etag, member.last_modified) {
        return Ok(unchanged(&member.etag, member.last_modified));
    }
    let mut data = super::report::render_all(door, std::slice::from_ref(&member)).await?;
    let text = data.remove(&member.target).ok_or_else(DavError::not_found)?;
    Ok(answer_get(door, &member.etag, member.last_modified, text, head))
}

/// Whether the client's copy still holds (RFC 9110 §13.1: `If-None-Match`
/// decides when sent, else `If-Modified-Since`, at the one-second precision
/// of HTTP dates).
fn not_modified(door: &Door<'_>, etag: &str, last_modified: DateTime<Utc>) -> bool {
    match door.header(header::IF_NONE_MATCH) {
        Some(tags) => tags.split(',').any(|t| t.trim() == etag || t.trim() == "*"),
        None => door
            .header(header::IF_MODIFIED_SINCE)
            .and_then(|h| h.parse::<header::HttpDate>().ok())
            .map(|d| DateTime::<Utc>::from(std::time::SystemTime::from(d)))
            .is_some_and(|since| last_modified.timestamp() <= since.timestamp()),
    }
}

fn unchanged(etag: &str, last_modified: DateTime<Utc>) -> HttpResponse {
    let stamp = header::HttpDate::from(std::time::SystemTime::from(last_modified));
    HttpResponse::NotModified()
        .insert_header((header::ETAG, etag.to_owned()))
        .insert_header((header::LAST_MODIFIED, stamp))
        .finish()
}

fn answer_get(door: &Door<'_>, etag: &str, last_modified: DateTime<Utc>, text: String, head: bool) -> HttpResponse {
    if not_modified(door, etag, last_modified) {
        return unchanged(etag, last_modified);
    }
    let stamp = header::HttpDate::from(std::time::SystemTime::from(last_modified));
    let mut res = HttpResponse::Ok();
    res.content_type("text/calendar; charset=utf-8")
        .insert_header((header::ETAG, etag.to_owned()))
        .insert_header((header::LAST_MODIFIED, stamp))
        .insert_header((header::CACHE_CONTROL, "private, no-cache"));
    if head {
        res.finish()
    } else {
        res.body(text)
    }
}

/// Reads the body. Floating times are the invited rooms' area's (SPEC
/// §24): read in the installation's zone first, and again in the rooms'
/// when that is another (times with a zone or in UTC read the same).
async fn read_object(door: &Door<'_>, body: &[u8]) -> Result<(String, Object), DavError> {
    let text = std::str::from_utf8(body).map_err(|_| {
        DavError::precondition(StatusCode::BAD_REQUEST, CALDAV, "valid-calendar-data", "the body is not UTF-8")
    })?;
    let read = |tz| {
        sent::read_object(text, tz, &door.state.room_mail_domain).map_err(|r| match r {
            Refusal::Invalid(why) => {
                DavError::precondition(StatusCode::BAD_REQUEST, CALDAV, "valid-calendar-data", why)
            }
            Refusal::Unsupported(why) => {
                DavError::precondition(StatusCode::FORBIDDEN, CALDAV, "supported-calendar-component", why)
            }
        })
    };
    let home = door.state.policy().timezone;
    let mut object = read(home)?;
    if let Object::Event(inv) = &object {
        let zone = rooms_zone(door, inv).await?;
        if zone != home {
            object = read(zone)?;
        }
    }
    Ok((text.to_owned(), object))
}

/// The zone of the first invited room's area (the installation's when it
/// invites none the catalogue knows).
async fn rooms_zone(door: &Door<'_>, inv: &Invitation) -> Result<chrono_tz::Tz, DavError> {
    let home = door.state.policy().timezone;
    let catalogue = door.state.catalogue.current().await?;
    Ok(inv
        .rooms
        .first()
        .and_then(|c| catalogue.rooms().iter().find(|r| r.code.eq_ignore_ascii_case(c)))
        .map_or(home, |r| r.zone()))
}

/// The rooms an invitation names, as the catalogue spells their codes.
async fn room_codes(door: &Door<'_>, inv: &Invitation) -> Result<Result<RequestedRooms, ApiError>, DavError> {
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
    Ok(RequestedRooms::parse(&codes))
}

/// The event's `SUMMARY`, or "meeting" in the caller's language when it has none.
pub fn title_of(lang: Lang, inv: &Invitation) -> Result<Title, ApiError> {
    let untitled = crate::i18n::I18n::new(lang).t("dav-untitled");
    let summary = if inv.summary.trim().is_empty() { untitled.as_str() } else { inv.summary.as_str() };
    Title::parse(summary)
}

/// What an event asks of its rooms: nothing (no room, or cancelled), or
/// valid values, or the refusal its rooms answer (a time a room cannot
/// hold, a rule yeyak cannot keep).
async fn asked_of(door: &Door<'_>, inv: &Invitation) -> Result<Option<Result<Asked, ApiError>>, DavError> {
    if inv.rooms.is_empty() || inv.cancelled {
        return Ok(None);
    }
    let rooms = room_codes(door, inv).await?;
    let tz = rooms_zone(door, inv).await?;
    let asked = (|| {
        Ok(Asked {
            rooms: rooms?,
            title: title_of(door.lang, inv)?,
            range: TimeRange::new(inv.starts_at, inv.ends_at)?,
            recurrence: inv.rrule.as_deref().map(|r| Recurrence::parse(r, tz)).transpose()?,
            private: inv.private,
        })
    })();
    Ok(Some(asked))
}

/// `ORGANIZER`'s parameters and address for the signed-in person.
async fn organizer_of(door: &Door<'_>) -> Result<String, DavError> {
    let email: Option<String> = {
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
        crate::db::schema::staff_user::table
            .find(door.caller.id)
            .select(crate::db::schema::staff_user::email)
            .first(&mut conn)
            .await
            .map_err(DbError::from)?
    };
    let name: String = door.caller.display_name.chars().filter(|c| *c != '"' && !c.is_control()).collect();
    let name = if name.contains([':', ';', ',']) { format!("\"{name}\"") } else { name };
    let address = crate::calendar::address::person(email.as_deref(), &door.caller.username, &door.state.public_base);
    Ok(format!(";CN={name}:{address}"))
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
    let (text, object) = read_object(door, body).await?;
    let asked = match &object {
        Object::Event(inv) => asked_of(door, inv).await?,
        Object::Todo { .. } => None,
    };
    let adopt = match store::parse_default_name(name) {
        Some(Target::Booking(id)) => (Some(id), None),
        Some(Target::Series(id)) => (None, Some(id)),
        _ => (None, None),
    };
    let command = StoreObject {
        name: name.clone(),
        object,
        body: text,
        asked,
        organizer_name: Title::parse_field("organizerName", &door.caller.display_name)?,
        organizer: organizer_of(door).await?,
        only_new: door.header(header::IF_NONE_MATCH).is_some_and(|v| v.trim() == "*"),
        if_match: door.header(header::IF_MATCH).map(str::to_owned),
        room_domain: door.state.room_mail_domain.clone(),
        adopt,
    };
    match door.state.pipeline.run(&door.principal(), None, &command).await {
        Ok(Stored::Done { created, etag }) => {
            let mut res = if created { HttpResponse::Created() } else { HttpResponse::NoContent() };
            if let Some(etag) = etag {
                res.insert_header((header::ETAG, etag));
            }
            Ok(res.finish())
        }
        Ok(Stored::PreconditionFailed) => Err(DavError::Status(StatusCode::PRECONDITION_FAILED)),
        Ok(Stored::UidConflict { name }) => Err(uid_conflict(&name)),
        Err(e) if e.code == ErrorCode::UidConflict => Err(uid_conflict(name)),
        Err(e) => Err(DavError::Refused(e)),
    }
}

fn uid_conflict(name: &str) -> DavError {
    DavError::precondition(
        StatusCode::CONFLICT,
        CALDAV,
        "no-uid-conflict",
        format!("this UID is already another event of this collection ({name})"),
    )
}

/// `DELETE`: a stored object's bookings are cancelled and it becomes a
/// tombstone; a booking made through another door is cancelled.
pub async fn delete(door: &Door<'_>, resource: &Resource) -> Result<HttpResponse, DavError> {
    if matches!(resource, Resource::RoomMember(..) | Resource::RoomCalendar(_)) {
        return Err(DavError::need_privileges("a room's calendar is read-only"));
    }
    if let Resource::BookingMember(username, name) = resource {
        door.ensure_own(username)?;
        let command = DeleteObject {
            name: name.clone(),
            if_match: door.header(header::IF_MATCH).map(str::to_owned),
            room_domain: door.state.room_mail_domain.clone(),
        };
        match door.state.pipeline.run(&door.principal(), None, &command).await.map_err(DavError::Refused)? {
            Some(true) => return Ok(HttpResponse::NoContent().finish()),
            Some(false) => return Err(DavError::Status(StatusCode::PRECONDITION_FAILED)),
            None => {}
        }
    }
    let (_, _, member) = member_of(door, resource).await?;
    let member = member.ok_or_else(DavError::not_found)?;
    preconditions(door, Some(&member))?;
    let principal = door.principal();
    let run = |e: ApiError| {
        if e.code == ErrorCode::VersionConflict {
            DavError::Status(StatusCode::PRECONDITION_FAILED)
        } else {
            DavError::Refused(e)
        }
    };
    match member.target {
        Target::Booking(id) => {
            let command = CancelBooking { id, expected_version: expected_version(door) };
            door.state.pipeline.run(&principal, None, &command).await.map_err(run)?;
        }
        Target::Series(id) => {
            door.state.pipeline.run(&principal, None, &CancelSeries { id, from: None }).await.map_err(run)?;
        }
        Target::Object(_) => return Err(DavError::not_found()),
    }
    Ok(HttpResponse::NoContent().finish())
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
