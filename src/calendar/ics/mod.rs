//! Bookings as RFC 5545 text — the one rendering of every event yeyak
//! writes: feeds, `.ics` downloads, mail invitations and CalDAV members.
//! One VEVENT per booking with a stable UID (`booking-{id}@{host}`),
//! SEQUENCE = version, DTSTAMP = its last change, STATUS (CONFIRMED,
//! TENTATIVE while pending, CANCELLED for cancelled and rejected), the
//! organizer as `ORGANIZER;CN=…:mailto:…` (or their principal URL) and each
//! room as `ATTENDEE;CUTYPE=ROOM;CN=…:mailto:room-…@…` (SPEC §10, §17,
//! §18). A series is expanded: each occurrence is its own event, so a
//! calendar shows exactly the live occurrences at their own times.
//!
//! Written by [`line::Lines`] straight into one buffer (folding, escaping
//! and quoting once, SPEC §20): the `icalendar` crate's builder keeps a map
//! of properties per event and folds each line again, which cost most of a
//! 2,000-event feed's time (docs/PERFORMANCE.md, issue 29).

pub mod line;
pub mod read;
mod reply;
mod zone;

pub use self::reply::{reply, Reply};
pub use self::zone::Clock;

use std::borrow::Cow;

use chrono::{DateTime, Utc};

use self::line::Lines;
use crate::i18n::{I18n, Lang};
use crate::rooms::domain::Status;

/// What an invitation asks the receiving calendar to do (RFC 5546).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Add or update the event.
    Request,
    /// Remove it.
    Cancel,
    /// An attendee's answer (a room declining, a free/busy reply).
    Reply,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Request => "REQUEST",
            Method::Cancel => "CANCEL",
            Method::Reply => "REPLY",
        }
    }
}

/// The stable UID of a booking's event.
pub fn uid(id: i64, host: &str) -> String {
    format!("booking-{id}@{host}")
}

pub use super::address::principal_url;

/// Who organizes an event: a person, by mail address when known, else by
/// their principal URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Organizer<'a> {
    pub name: &'a str,
    /// The cal-address (`mailto:…` or a URL).
    pub address: Cow<'a, str>,
}

impl<'a> Organizer<'a> {
    /// A staff member as organizer: `mailto:{email}`, else the principal
    /// URL under `base` (`YEYAK_PUBLIC_URL`, else `http://{YEYAK_BIND}`).
    pub fn person(name: &'a str, email: Option<&str>, username: &str, base: &str) -> Self {
        Organizer { name, address: super::address::person(email, username, base).into() }
    }
}

/// A room of an event: its name and calendar address (without `mailto:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Room<'a> {
    pub name: &'a str,
    pub address: Cow<'a, str>,
}

impl<'a> Room<'a> {
    /// A room by its code, its address in `domain` (`calendar::address::room`).
    pub fn new(code: &str, name: &'a str, domain: &str) -> Self {
        Room { name, address: super::address::room(code, domain).into() }
    }
}

/// What an event shows of a booking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event<'a> {
    pub uid: Cow<'a, str>,
    pub version: i32,
    pub title: &'a str,
    /// Who booked as pages show it (`Booking::shown_organizer`), in the
    /// description, for bookings of integrations and displays too.
    pub shown_organizer: Cow<'a, str>,
    pub status: Status,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    /// DTSTAMP: the booking's last change, so one version always reads the same.
    pub stamp: DateTime<Utc>,
    /// The person who organizes it (none for integrations and displays).
    pub organizer: Option<Organizer<'a>>,
    /// In position order.
    pub rooms: Vec<Room<'a>>,
}

impl Event<'_> {
    /// A room attendee's participation: the booking's state seen from the room.
    fn partstat(&self) -> &'static str {
        match self.status {
            Status::Pending => "TENTATIVE",
            Status::Cancelled | Status::Rejected => "DECLINED",
            Status::Confirmed | Status::Released => "ACCEPTED",
        }
    }
}

/// How a CalDAV member's event repeats (feeds and mail expand a series
/// instead): the master's rule and removed dates, or the date an override
/// replaces.
#[derive(Debug, Clone, Copy, Default)]
pub struct Recurring<'a> {
    pub rule: Option<&'a str>,
    pub exdates: &'a [DateTime<Utc>],
    pub recurrence_id: Option<DateTime<Utc>>,
}

/// A calendar being written: its header on [`Calendar::new`], events
/// pushed one by one, `END:VCALENDAR` on [`Calendar::finish`].
pub struct Calendar {
    lines: Lines,
    stamp: String,
    /// `DESCRIPTION`'s text in the reader's language around [`WHO`], looked
    /// up once per calendar rather than once per event. None in a calendar
    /// object, whose bytes (and ETag) must not depend on who reads them.
    booked_by: Option<String>,
}

/// Where the organizer's name goes in [`Calendar::booked_by`].
const WHO: char = '\u{1}';

impl Calendar {
    /// A calendar named `name` whose own words are in `lang`, with `events`
    /// as a capacity hint.
    pub fn new(name: &str, method: Option<Method>, events: usize, lang: Lang) -> Self {
        let mut cal = Calendar::begin(method, events, Some(lang));
        cal.lines.text("NAME", name);
        cal.lines.text("X-WR-CALNAME", name);
        cal
    }

    /// One calendar object (a CalDAV member, a scheduling message): no
    /// name, no words of a reader's language, and the `VTIMEZONE` its times
    /// in `clock` refer to.
    pub fn object(method: Option<Method>, clock: Clock) -> Self {
        let mut cal = Calendar::begin(method, 2, None);
        clock.vtimezone(&mut cal.lines);
        cal
    }

    fn begin(method: Option<Method>, events: usize, lang: Option<Lang>) -> Self {
        let mut lines = Lines::with_capacity(300 + events * 640);
        lines.raw("BEGIN", "VCALENDAR");
        lines.raw("VERSION", "2.0");
        lines.raw("PRODID", "-//yeyak//rooms//KO");
        lines.raw("CALSCALE", "GREGORIAN");
        if let Some(method) = method {
            lines.raw("METHOD", method.as_str());
        }
        let booked_by = lang.map(|lang| I18n::new(lang).t1("ics-organizer", "name", WHO.to_string()));
        Calendar { lines, stamp: String::with_capacity(20), booked_by }
    }

    /// The lines, for a component that is not an event (`VFREEBUSY`).
    pub fn lines(&mut self) -> &mut Lines {
        &mut self.lines
    }

    /// Writes one VEVENT in UTC.
    pub fn push(&mut self, e: &Event<'_>) {
        self.push_in(e, Clock::Utc, Recurring::default());
    }

    /// Writes one VEVENT with its times in `clock`, repeating as `recurring` says.
    pub fn push_in(&mut self, e: &Event<'_>, clock: Clock, recurring: Recurring<'_>) {
        let (l, buf) = (&mut self.lines, &mut self.stamp);
        l.raw("BEGIN", "VEVENT");
        l.raw("UID", &e.uid);
        Clock::Utc.write(l, buf, "DTSTAMP", e.stamp);
        clock.write(l, buf, "DTSTART", e.starts_at);
        clock.write(l, buf, "DTEND", e.ends_at);
        if let Some(at) = recurring.recurrence_id {
            clock.write(l, buf, "RECURRENCE-ID", at);
        }
        if let Some(rule) = recurring.rule {
            l.raw("RRULE", rule);
        }
        for at in recurring.exdates {
            clock.write(l, buf, "EXDATE", *at);
        }
        l.raw("SEQUENCE", &e.version.max(0).to_string());
        l.text("SUMMARY", e.title);
        let location: Cow<'_, str> = match e.rooms.as_slice() {
            [one] => one.name.into(),
            rooms => rooms.iter().map(|r| r.name).collect::<Vec<_>>().join(" + ").into(),
        };
        l.text("LOCATION", &location);
        if let Some(booked_by) = &self.booked_by {
            l.text("DESCRIPTION", &booked_by.replacen(WHO, &e.shown_organizer, 1));
        }
        l.raw(
            "STATUS",
            match e.status {
                Status::Confirmed | Status::Released => "CONFIRMED",
                Status::Pending => "TENTATIVE",
                Status::Cancelled | Status::Rejected => "CANCELLED",
            },
        );
        if let Some(o) = &e.organizer {
            l.with_params("ORGANIZER", &[("CN", o.name)], &o.address);
        }
        let partstat = e.partstat();
        for r in &e.rooms {
            let address = super::address::mailto(&r.address);
            l.with_params("ATTENDEE", &[("CUTYPE", "ROOM"), ("CN", r.name), ("PARTSTAT", partstat)], &address);
        }
        l.raw("END", "VEVENT");
    }

    pub fn finish(mut self) -> String {
        self.lines.raw("END", "VCALENDAR");
        self.lines.finish()
    }
}

/// A calendar of `events` (a download, an invitation, a CalDAV member).
pub fn calendar<'a>(
    name: &str,
    method: Option<Method>,
    events: impl IntoIterator<Item = &'a Event<'a>>,
    lang: Lang,
) -> String {
    let mut cal = Calendar::new(name, method, 1, lang);
    for e in events {
        cal.push(e);
    }
    cal.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event<'a>(title: &'a str, organizer: &'a str, status: Status) -> Event<'a> {
        let t = DateTime::parse_from_rfc3339("2030-01-07T01:00:00Z").unwrap().with_timezone(&Utc);
        Event {
            uid: uid(7, "rooms.example.com").into(),
            version: 3,
            title,
            shown_organizer: organizer.into(),
            status,
            starts_at: t,
            ends_at: t + chrono::Duration::hours(1),
            stamp: t,
            organizer: Some(Organizer::person(organizer, Some("kim@example.com"), "kim", "https://r.example.com")),
            rooms: vec![
                Room::new("A", "회의실 A", "rooms.example.com"),
                Room::new("B", "회의실 B, 창가", "rooms.example.com"),
            ],
        }
    }

    #[test]
    fn lines_are_folded_escaped_and_crlf() {
        let title = format!("주간, 회의; 1\n2 {}", "가".repeat(150));
        let e = event(&title, "김, 민지", Status::Cancelled);
        let text = calendar("t", Some(Method::Cancel), [&e], Lang::Ko);
        assert!(text.contains("\r\n") && !text.replace("\r\n", "").contains('\n'), "CRLF only");
        for line in text.split("\r\n") {
            assert!(line.len() <= 75, "{} octets: {line}", line.len());
        }
        let unfolded = text.replace("\r\n ", "");
        assert!(unfolded.contains("SUMMARY:주간\\, 회의\\; 1\\n2 "), "{unfolded}");
        assert!(unfolded.contains("UID:booking-7@rooms.example.com"));
        assert!(
            unfolded.contains("SEQUENCE:3")
                && unfolded.contains("STATUS:CANCELLED")
                && unfolded.contains("METHOD:CANCEL")
        );
        assert!(unfolded.contains("\r\nORGANIZER;CN=\"김, 민지\":mailto:kim@example.com\r\n"), "{unfolded}");
        assert!(unfolded
            .contains("\r\nATTENDEE;CUTYPE=ROOM;CN=회의실 A;PARTSTAT=DECLINED:mailto:room-a@rooms.example.com\r\n"));
        assert!(unfolded.contains(
            "\r\nATTENDEE;CUTYPE=ROOM;CN=\"회의실 B, 창가\";PARTSTAT=DECLINED:mailto:room-b@rooms.example.com\r\n"
        ));
        assert!(unfolded.contains("LOCATION:회의실 A + 회의실 B\\, 창가\r\n"));
        assert!(unfolded.contains("DTSTART:20300107T010000Z"));
    }

    #[test]
    fn every_text_is_escaped_once_and_parameters_quoted() {
        let nasty = "a\\b;c,d:e\nf\r\ng\u{2028}h";
        let escaped = "a\\\\b\\;c\\,d:e\\nf\\ng\\nh";
        let mut e = event(nasty, nasty, Status::Confirmed);
        e.rooms = vec![Room::new("A", nasty, "h")];
        let text = calendar(nasty, None, [&e], Lang::Ko);
        let unfolded = text.replace("\r\n ", "");
        let lines: Vec<&str> = unfolded.split("\r\n").collect();
        for (name, value) in [
            ("NAME", escaped.to_owned()),
            ("X-WR-CALNAME", escaped.to_owned()),
            ("SUMMARY", escaped.to_owned()),
            ("LOCATION", escaped.to_owned()),
            ("DESCRIPTION", format!("예약한 사람: {escaped}")),
        ] {
            assert!(lines.contains(&format!("{name}:{value}").as_str()), "{name}: {lines:#?}");
        }
        assert!(lines.iter().any(|l| l.starts_with("ORGANIZER;CN=\"a\\b;c,d:efgh\":mailto:")), "{lines:#?}");
        assert!(lines.iter().any(|l| l.starts_with("ATTENDEE;CUTYPE=ROOM;CN=\"a\\b;c,d:efgh\";")), "{lines:#?}");
    }

    #[test]
    fn an_organizer_without_mail_is_named_by_principal() {
        let o = Organizer::person("김민지", None, "kim", "http://127.0.0.1:8080/");
        assert_eq!(o.address, "http://127.0.0.1:8080/dav/principals/kim/");
        let o = Organizer::person("김민지", Some("kim@example.com"), "kim", "http://h");
        assert_eq!(o.address, "mailto:kim@example.com");
    }
}
