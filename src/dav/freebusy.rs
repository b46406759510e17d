//! Free/busy of rooms (SPEC §17): a `VFREEBUSY` `METHOD:REQUEST` posted to
//! the person's schedule outbox answers a `CALDAV:schedule-response` with
//! each invited room's busy periods, and the `free-busy-query` report on a
//! room's calendar gives the same. The intervals are exactly those of
//! `GET /api/rooms/{code}/availability` (its complement: the window minus
//! the free intervals), computed by PostgreSQL from the active room copies.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;

use super::invitation::{invalid, is, p_value, prop, props, Refusal, Zones};
use super::path::Resource;
use super::time_range;
use super::xml::{Element, Node, CALDAV};
use super::{DavError, Door};
use crate::calendar::address;
use crate::calendar::ics::{read, Calendar, Clock, Method};
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
use crate::rooms::booking::{buffer_intervals, busy_intervals, FreeInterval};

/// Longest window one question may cover (SPEC §22).
pub const MAX_DAYS: i64 = 366;
/// Most attendees one question may name (SPEC §22): each costs a statement.
pub const MAX_ATTENDEES: usize = 50;

fn utc(t: DateTime<Utc>) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

fn check_window(from: DateTime<Utc>, to: DateTime<Utc>) -> Result<(), DavError> {
    if to <= from {
        return Err(DavError::Refused(ApiError::malformed("time-range", "the end must be after the start")));
    }
    if to - from > Duration::days(MAX_DAYS) {
        return Err(DavError::Refused(
            ApiError::new(ErrorCode::WindowTooLong, format!("a free-busy window covers at most {MAX_DAYS} days"))
                .with_details(serde_json::json!({ "maxDays": MAX_DAYS })),
        ));
    }
    Ok(())
}

/// What a room's free/busy names: its meetings (`BUSY`) and the buffers
/// around them (`BUSY-UNAVAILABLE`, SPEC §24).
pub struct Busy {
    pub meetings: Vec<FreeInterval>,
    pub buffers: Vec<FreeInterval>,
}

async fn busy(door: &Door<'_>, code: &str, from: DateTime<Utc>, to: DateTime<Utc>) -> Result<Busy, DavError> {
    let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
    let meetings = busy_intervals(&mut conn, code, from, to).await?;
    let buffers = buffer_intervals(&mut conn, code, from, to).await?;
    Ok(Busy { meetings, buffers })
}

/// A `VFREEBUSY` of one room (`METHOD:REPLY` for the outbox), written by
/// `calendar::ics` like every iCalendar text yeyak makes.
fn vfreebusy(
    reply: Option<(&str, Option<&str>, Option<&str>)>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    now: DateTime<Utc>,
    busy: &Busy,
) -> String {
    let mut cal = Calendar::object(reply.map(|_| Method::Reply), Clock::Utc);
    let l = cal.lines();
    l.raw("BEGIN", "VFREEBUSY");
    l.raw("DTSTAMP", &utc(now));
    l.raw("DTSTART", &utc(from));
    l.raw("DTEND", &utc(to));
    if let Some((attendee, organizer, uid)) = reply {
        l.raw("ATTENDEE", attendee);
        if let Some(o) = organizer {
            l.raw("ORGANIZER", o);
        }
        if let Some(u) = uid {
            l.raw("UID", u);
        }
    }
    for (kind, periods) in [("BUSY", &busy.meetings), ("BUSY-UNAVAILABLE", &busy.buffers)] {
        for p in periods {
            l.with_params("FREEBUSY", &[("FBTYPE", kind)], &format!("{}/{}", utc(p.starts_at), utc(p.ends_at)));
        }
    }
    l.raw("END", "VFREEBUSY");
    cal.finish()
}

/// A free/busy question (`VFREEBUSY`, `METHOD:REQUEST`) to the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreeBusyRequest {
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    /// Each `ATTENDEE` as sent.
    pub attendees: Vec<String>,
    pub organizer: Option<String>,
    pub uid: Option<String>,
}

pub fn read_freebusy(text: &str, home: Tz) -> Result<FreeBusyRequest, Refusal> {
    let unfolded = read::unfold(text);
    let roots = read::components(&unfolded).map_err(|e| invalid(e.reason()))?;
    let calendar = match roots.as_slice() {
        [one] if is(one.name.as_str(), "VCALENDAR") => one,
        _ => return Err(invalid("the body must be one VCALENDAR")),
    };
    let zones = Zones::read(calendar, home)?;
    let fb =
        calendar.components.iter().find(|c| is(c.name.as_str(), "VFREEBUSY")).ok_or_else(|| invalid("no VFREEBUSY"))?;
    let start = zones.instant(prop(fb, "DTSTART").ok_or_else(|| invalid("a VFREEBUSY without DTSTART"))?)?;
    let end = zones.instant(prop(fb, "DTEND").ok_or_else(|| invalid("a VFREEBUSY without DTEND"))?)?;
    if end <= start {
        return Err(invalid("DTEND must be after DTSTART"));
    }
    Ok(FreeBusyRequest {
        starts_at: start,
        ends_at: end,
        attendees: props(fb, "ATTENDEE").map(|p| p_value(p).trim().to_owned()).collect(),
        organizer: prop(fb, "ORGANIZER").map(|p| p_value(p).trim().to_owned()),
        uid: prop(fb, "UID").map(|p| p_value(p).trim().to_owned()),
    })
}

/// `CALDAV:free-busy-query` on a room's calendar.
pub async fn query(door: &Door<'_>, code: &str, root: &Element) -> Result<HttpResponse, DavError> {
    let (from, to) = window_of(root)?;
    let periods = busy(door, code, from, to).await?;
    Ok(answer(door, from, to, &periods))
}

/// The window of a `free-busy-query` (both ends, at most 366 days).
pub fn window_of(root: &Element) -> Result<(DateTime<Utc>, DateTime<Utc>), DavError> {
    let range = root.child(CALDAV, "time-range").ok_or_else(DavError::bad_xml)?;
    let from = time_range::attr(range, "start")?.ok_or_else(DavError::bad_xml)?;
    let to = time_range::attr(range, "end")?.ok_or_else(DavError::bad_xml)?;
    check_window(from, to)?;
    Ok((from, to))
}

/// A `free-busy-query`'s answer: a `VFREEBUSY` of `busy`.
pub fn answer(door: &Door<'_>, from: DateTime<Utc>, to: DateTime<Utc>, busy: &Busy) -> HttpResponse {
    HttpResponse::Ok().content_type("text/calendar; charset=utf-8").body(vfreebusy(
        None,
        from,
        to,
        door.state.clock.now(),
        busy,
    ))
}

/// `POST` to the schedule outbox.
pub async fn post(door: &Door<'_>, resource: &Resource, body: &[u8]) -> Result<HttpResponse, DavError> {
    let Resource::Outbox(username) = resource else {
        return Err(DavError::Status(StatusCode::METHOD_NOT_ALLOWED));
    };
    door.ensure_own(username)?;
    let text = std::str::from_utf8(body).map_err(|_| {
        DavError::precondition(StatusCode::BAD_REQUEST, CALDAV, "valid-calendar-data", "the body is not UTF-8")
    })?;
    let request = read_freebusy(text, door.state.policy().timezone).map_err(|r| match r {
        Refusal::Invalid(why) | Refusal::Unsupported(why) => {
            DavError::precondition(StatusCode::BAD_REQUEST, CALDAV, "valid-calendar-data", why)
        }
    })?;
    check_window(request.starts_at, request.ends_at)?;
    if request.attendees.len() > MAX_ATTENDEES {
        return Err(DavError::Refused(
            ApiError::new(ErrorCode::TooManyAttendees, format!("a free-busy question names at most {MAX_ATTENDEES}"))
                .with_details(serde_json::json!({ "max": MAX_ATTENDEES, "named": request.attendees.len() })),
        ));
    }
    let catalogue = door.state.catalogue.current().await?;
    let now = door.state.clock.now();
    let mut responses = Vec::new();
    for attendee in &request.attendees {
        let room = address::room_code(attendee, &door.state.room_mail_domain)
            .and_then(|c| catalogue.rooms().iter().find(|r| r.code.eq_ignore_ascii_case(c)));
        let recipient = Node::caldav("recipient").with(Node::href(attendee.clone()));
        let Some(room) = room else {
            responses.push(
                Node::caldav("response")
                    .with(recipient)
                    .with(Node::caldav("request-status").with_text("3.7;Invalid calendar user")),
            );
            continue;
        };
        let periods = busy(door, &room.code, request.starts_at, request.ends_at).await?;
        let reply = (attendee.as_str(), request.organizer.as_deref(), request.uid.as_deref());
        let data = vfreebusy(Some(reply), request.starts_at, request.ends_at, now, &periods);
        responses.push(
            Node::caldav("response")
                .with(recipient)
                .with(Node::caldav("request-status").with_text("2.0;Success"))
                .with(Node::caldav("calendar-data").with_text(data)),
        );
    }
    Ok(super::xml_response(StatusCode::OK, &Node::caldav("schedule-response").with_all(responses)))
}
