//! A member as the iCalendar text a CalDAV `GET` answers (SPEC §17),
//! written by `calendar::ics`, the one iCalendar writer: the client's UID,
//! each booked room as `ATTENDEE;CUTYPE=ROOM` with `PARTSTAT=ACCEPTED`
//! (`TENTATIVE` while the booking waits for approval), the organizer as
//! `ORGANIZER;CN=…`. A series is ONE master `VEVENT` with its `RRULE`, an
//! `EXDATE` for every date the rule gives that holds no live occurrence, and
//! a `RECURRENCE-ID` override for every occurrence that differs from the
//! rule (moved, retitled, waiting for approval) — never expanded. The same
//! version of a member is the same bytes: nothing generated, properties in
//! one order.
//!
//! A series is written in the context's zone (`TZID` with the `VTIMEZONE`
//! of every transition from the year before its first time to its last,
//! `calendar::ics::Clock::zoned`), so a weekly 10:00 in America/New_York
//! stays 10:00 across daylight saving time in a calendar app (SPEC §24).

use chrono::{DateTime, NaiveDateTime, Utc};
use chrono_tz::Tz;

use crate::calendar::ics::{self, Calendar, Clock, Recurring};
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

/// A booking as an event of the member: the status a member shows is
/// TENTATIVE while waiting for approval, else CONFIRMED (a member holds
/// only live bookings).
fn event<'a>(b: &'a Booking, ctx: &'a Context<'_>) -> ics::Event<'a> {
    let name = |code: &'a String| ctx.catalogue.get(code).map_or(code.as_str(), |r| r.name.as_str());
    ics::Event {
        uid: ctx.uid.into(),
        version: b.version,
        title: &b.title,
        shown_organizer: b.shown_organizer(),
        status: if b.status == Status::Pending { Status::Pending } else { Status::Confirmed },
        starts_at: b.starts_at,
        ends_at: b.ends_at,
        stamp: b.updated_at,
        organizer: ctx.organizer.as_ref().map(|o| ics::Organizer { name: &o.name, address: o.address.as_str().into() }),
        rooms: b.rooms.iter().map(|code| ics::Room::new(code, name(code), ctx.room_domain)).collect(),
    }
}

/// One booking's event.
pub fn single(b: &Booking, ctx: &Context<'_>) -> String {
    let mut cal = Calendar::object(None, Clock::Utc);
    cal.push(&event(b, ctx));
    cal.finish()
}

/// A series as one master event with its exceptions; `None` when it has no
/// live occurrence.
pub fn series(s: &Series, occurrences: &[Booking], ctx: &Context<'_>) -> Option<String> {
    let live: Vec<&Booking> = occurrences.iter().filter(|o| o.status.is_live()).collect();
    let first = live.first()?;
    // The zone the series was made in (its rooms' area's): its wall clock.
    let tz: Tz = s.timezone.parse().unwrap_or(ctx.tz);
    let recurrence = Recurrence::parse(&s.recurrence, tz).ok();
    // The rule's dates, as the series was made (its first occurrence).
    let rule_dates: Vec<TimeRange> = recurrence
        .as_ref()
        .and_then(|r| r.occurrences(&TimeRange::from_stored(s.starts_at, s.ends_at), tz).ok())
        .unwrap_or_default();
    let rule = recurrence.map(|r| r.rule().to_owned()).unwrap_or_default();
    let master_pending = live.iter().all(|o| o.status == Status::Pending);
    let mut master = (*first).clone();
    master.title = s.title.clone();
    master.starts_at = s.starts_at;
    master.ends_at = s.ends_at;
    master.status = if master_pending { Status::Pending } else { Status::Confirmed };
    master.version = occurrences.iter().map(|o| o.version).sum();
    master.updated_at = occurrences.iter().map(|o| o.updated_at).max().unwrap_or(s.starts_at);
    let mut exdates: Vec<DateTime<Utc>> = Vec::new();
    let mut overrides: Vec<(&Booking, DateTime<Utc>)> = Vec::new();
    for date in &rule_dates {
        let at = date.starts_at();
        let occurrence = occurrences.iter().find(|o| o.occurrence_start == Some(at) && o.status.is_live());
        let Some(o) = occurrence else {
            exdates.push(at);
            continue;
        };
        let same = o.starts_at == at
            && o.ends_at == date.ends_at()
            && o.title == s.title
            && (o.status == Status::Pending) == master_pending;
        if !same {
            overrides.push((o, at));
        }
    }
    // Every time written: the master's, the rule's dates (EXDATE,
    // RECURRENCE-ID, the RRULE's expansion) and the live occurrences'.
    let written = || {
        let dates = rule_dates.iter().map(|d| (d.starts_at(), d.ends_at()));
        let occurring = live.iter().map(|o| (o.starts_at, o.ends_at));
        std::iter::once((s.starts_at, s.ends_at)).chain(dates).chain(occurring)
    };
    let from = written().map(|(start, _)| start).min().unwrap_or(s.starts_at);
    let to = written().map(|(_, end)| end).max().unwrap_or(s.ends_at);
    let clock = Clock::zoned(tz, from, to);
    let mut cal = Calendar::object(None, clock);
    let repeats = Recurring { rule: Some(&rule), exdates: &exdates, recurrence_id: None };
    cal.push_in(&event(&master, ctx), clock, repeats);
    for (o, at) in overrides {
        cal.push_in(&event(o, ctx), clock, Recurring { recurrence_id: Some(at), ..Recurring::default() });
    }
    Some(cal.finish())
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
            buffer_before_minutes: 0,
            buffer_after_minutes: 0,
            time_zone: "Asia/Seoul".to_owned(),
            kind: Default::default(),
            assigned_to: None,
            x: None,
            y: None,
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
