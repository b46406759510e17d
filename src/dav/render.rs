//! A member as the iCalendar text a CalDAV `GET` answers (SPEC §17), written
//! by the `icalendar` crate with the escaping helpers of `calendar::ics`:
//! the client's UID, each booked room as `ATTENDEE;CUTYPE=ROOM` with
//! `PARTSTAT=ACCEPTED` (`TENTATIVE` while the booking waits for approval),
//! the organizer as `ORGANIZER;CN=…`. A series is ONE master `VEVENT` with
//! its `RRULE`, an `EXDATE` for every date the rule gives that holds no live
//! occurrence, and a `RECURRENCE-ID` override for every occurrence that
//! differs from the rule (moved, retitled, waiting for approval) — never
//! expanded.
//!
//! A series is written in the configured zone (`TZID` with a `VTIMEZONE`)
//! when that zone keeps one offset all year (Asia/Seoul); in a zone with
//! daylight saving time it is written in UTC, and a calendar app then shows
//! a weekly 10:00 at 10:00 of the first occurrence's offset.

use std::str::FromStr;

use chrono::{DateTime, Datelike, NaiveDateTime, Offset, TimeZone, Utc};
use chrono_tz::Tz;
use icalendar::{Calendar, CalendarComponent, Component, Event, EventLike, EventStatus, Property};

use crate::calendar::address;
use crate::calendar::ics::{cn, one_line};
use crate::catalogue::domain::RoomCatalog;
use crate::rooms::domain::{Status, TimeRange};
use crate::rooms::Booking;
use crate::series::domain::Recurrence;
use crate::series::Series;

/// Who organized, as the event names them.
#[derive(Debug, Clone)]
pub struct Organizer {
    pub name: String,
    /// `mailto:{email}`, else the principal URL.
    pub address: String,
}

/// What rendering needs besides the bookings.
pub struct Context<'a> {
    pub catalogue: &'a RoomCatalog,
    pub room_domain: &'a str,
    pub tz: Tz,
    pub uid: &'a str,
    pub organizer: Option<Organizer>,
}

fn utc(t: DateTime<Utc>) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

fn local(t: DateTime<Utc>, tz: Tz) -> String {
    t.with_timezone(&tz).format("%Y%m%dT%H%M%S").to_string()
}

/// How times are written: in UTC, or local to a fixed-offset zone.
#[derive(Clone, Copy)]
enum Clock {
    Utc,
    Zoned(Tz),
}

impl Clock {
    fn property(self, name: &str, t: DateTime<Utc>) -> Property {
        match self {
            Clock::Utc => Property::new(name, utc(t)),
            Clock::Zoned(tz) => {
                let mut p = Property::new(name, local(t, tz));
                p.add_parameter("TZID", tz.name());
                p
            }
        }
    }
}

/// The zone's one offset in `year`, if it keeps one all year.
fn fixed_offset(tz: Tz, year: i32) -> Option<i32> {
    let at = |month| {
        let t = Utc.with_ymd_and_hms(year, month, 1, 0, 0, 0).single()?;
        Some(tz.offset_from_utc_datetime(&t.naive_utc()).fix().local_minus_utc())
    };
    let january = at(1)?;
    (at(7)? == january).then_some(january)
}

/// A `VTIMEZONE` of a zone that keeps one offset.
fn vtimezone(tz: Tz, offset_seconds: i32) -> Option<CalendarComponent> {
    let sign = if offset_seconds < 0 { '-' } else { '+' };
    let abs = offset_seconds.abs();
    let offset = format!("{sign}{:02}{:02}", abs / 3600, (abs % 3600) / 60);
    let text = format!(
        "BEGIN:VTIMEZONE\r\nTZID:{}\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\nTZOFFSETFROM:{offset}\r\n\
         TZOFFSETTO:{offset}\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n",
        tz.name()
    );
    CalendarComponent::from_str(&text).ok()
}

/// The properties every event of a member carries.
fn base(e: &mut Event, b: &Booking, ctx: &Context<'_>, clock: Clock) {
    let names: Vec<&str> =
        b.rooms.iter().map(|c| ctx.catalogue.get(c).map_or(c.as_str(), |r| r.name.as_str())).collect();
    e.uid(ctx.uid)
        .summary(&one_line(&b.title))
        .location(&one_line(&names.join(" + ")))
        .sequence(u32::try_from(b.version).unwrap_or(0))
        .timestamp(b.updated_at)
        .append_property(clock.property("DTSTART", b.starts_at))
        .append_property(clock.property("DTEND", b.ends_at))
        .status(if b.status == Status::Pending { EventStatus::Tentative } else { EventStatus::Confirmed });
    if let Some(org) = &ctx.organizer {
        let mut p = Property::new("ORGANIZER", org.address.clone());
        p.add_parameter("CN", &cn(&org.name));
        e.append_property(p);
    }
    let partstat = if b.status == Status::Pending { "TENTATIVE" } else { "ACCEPTED" };
    for code in &b.rooms {
        let name = ctx.catalogue.get(code).map_or(code.as_str(), |r| r.name.as_str());
        let mut p = Property::new("ATTENDEE", address::room_uri(code, ctx.room_domain));
        p.add_parameter("CUTYPE", "ROOM");
        p.add_parameter("ROLE", "NON-PARTICIPANT");
        p.add_parameter("PARTSTAT", partstat);
        p.add_parameter("CN", &cn(name));
        e.append_multi_property(p);
    }
}

fn calendar(events: Vec<Event>, zone: Option<CalendarComponent>) -> String {
    let mut cal = Calendar::empty();
    cal.append_property(Property::new("VERSION", "2.0"));
    cal.append_property(Property::new("PRODID", "-//yeyak//caldav//KO"));
    cal.append_property(Property::new("CALSCALE", "GREGORIAN"));
    if let Some(zone) = zone {
        cal.push(zone);
    }
    for e in events {
        cal.push(e);
    }
    cal.done().to_string()
}

/// One booking's event.
pub fn single(b: &Booking, ctx: &Context<'_>) -> String {
    let mut e = Event::new();
    base(&mut e, b, ctx, Clock::Utc);
    calendar(vec![e.done()], None)
}

/// A series as one master event with its exceptions; `None` when it has no
/// live occurrence.
pub fn series(s: &Series, occurrences: &[Booking], ctx: &Context<'_>) -> Option<String> {
    let live: Vec<&Booking> = occurrences.iter().filter(|o| o.status.is_live()).collect();
    let first = live.first()?;
    let (zone, clock) = match fixed_offset(ctx.tz, s.starts_at.with_timezone(&ctx.tz).year()) {
        Some(offset) => (vtimezone(ctx.tz, offset), Clock::Zoned(ctx.tz)),
        None => (None, Clock::Utc),
    };
    let clock = if zone.is_some() { clock } else { Clock::Utc };
    // The rule's dates, as the series was made (its first occurrence).
    let rule_dates: Vec<TimeRange> = Recurrence::parse(&s.recurrence, ctx.tz)
        .and_then(|r| r.occurrences(&TimeRange::from_stored(s.starts_at, s.ends_at), ctx.tz))
        .unwrap_or_default();
    let master_pending = live.iter().all(|o| o.status == Status::Pending);
    let mut master_booking = (*first).clone();
    master_booking.title = s.title.clone();
    master_booking.starts_at = s.starts_at;
    master_booking.ends_at = s.ends_at;
    master_booking.status = if master_pending { Status::Pending } else { Status::Confirmed };
    master_booking.version = occurrences.iter().map(|o| o.version).sum();
    master_booking.updated_at = occurrences.iter().map(|o| o.updated_at).max().unwrap_or(s.starts_at);
    let mut master = Event::new();
    base(&mut master, &master_booking, ctx, clock);
    let rule = Recurrence::parse(&s.recurrence, ctx.tz).map(|r| r.rule().to_owned()).unwrap_or_default();
    master.append_property(Property::new("RRULE", rule));
    let mut overrides = Vec::new();
    for date in &rule_dates {
        let at = date.starts_at();
        let occurrence = occurrences.iter().find(|o| o.occurrence_start == Some(at) && o.status.is_live());
        let Some(o) = occurrence else {
            master.append_multi_property(clock.property("EXDATE", at));
            continue;
        };
        let same = o.starts_at == at
            && o.ends_at == date.ends_at()
            && o.title == s.title
            && (o.status == Status::Pending) == master_pending;
        if !same {
            let mut e = Event::new();
            base(&mut e, o, ctx, clock);
            e.append_property(clock.property("RECURRENCE-ID", at));
            overrides.push(e.done());
        }
    }
    let mut events = vec![master.done()];
    events.extend(overrides);
    Some(calendar(events, zone))
}

/// Local wall-clock time of an instant (for series edits).
pub fn wall_clock(t: DateTime<Utc>, tz: Tz) -> NaiveDateTime {
    t.with_timezone(&tz).naive_local()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::domain::Room;

    fn catalogue() -> RoomCatalog {
        let room = |code: &str, name: &str, position| Room {
            code: code.into(),
            name: name.into(),
            area: "본관".into(),
            capacity: 8,
            equipment: vec![],
            suite: Some("ABC".into()),
            position,
            check_in_required: false,
            approval_required: false,
            max_duration_minutes: 720,
            horizon_days: None,
            active: true,
        };
        RoomCatalog::new(vec![room("A", "회의실, A", 1), room("B", "회의실 B", 2)])
    }

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn a_booking_shows_its_rooms_as_accepted_attendees() {
        let cat = catalogue();
        let ctx = Context {
            catalogue: &cat,
            room_domain: "rooms.example.com",
            tz: chrono_tz::Asia::Seoul,
            uid: "client-uid-1",
            organizer: Some(Organizer { name: "김민지".into(), address: "mailto:kim@example.com".into() }),
        };
        let mut b =
            Booking::example(7, "주간; 회의", &["A", "B"], t("2030-01-07T01:00:00Z"), t("2030-01-07T02:00:00Z"));
        let text = single(&b, &ctx).replace("\r\n ", "");
        assert!(text.contains("UID:client-uid-1") && text.contains("SUMMARY:주간\\; 회의"), "{text}");
        assert!(text.contains("DTSTART:20300107T010000Z") && text.contains("DTEND:20300107T020000Z"), "{text}");
        assert!(text.contains("ORGANIZER;CN=김민지:mailto:kim@example.com"), "{text}");
        let a = text.lines().find(|l| l.contains("room-a@")).unwrap();
        assert!(a.contains("CUTYPE=ROOM") && a.contains("PARTSTAT=ACCEPTED") && a.contains("CN=\"회의실, A\""), "{a}");
        b.status = Status::Pending;
        let pending = single(&b, &ctx).replace("\r\n ", "");
        assert!(pending.contains("PARTSTAT=TENTATIVE") && pending.contains("STATUS:TENTATIVE"), "{pending}");
    }
}
