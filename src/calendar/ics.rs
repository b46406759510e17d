//! Bookings as RFC 5545 text, written by the `icalendar` crate (CRLF lines,
//! folding at 75 octets on character boundaries). Every text yeyak writes is
//! escaped exactly once (SPEC §20): the crate escapes the TEXT properties it
//! knows (`SUMMARY`, `LOCATION`, `DESCRIPTION`) but not `NAME` or
//! `X-WR-CALNAME`, which are escaped here; it quotes parameter values holding
//! `:` or `;`, and `cn` quotes those holding only `,`. One VEVENT
//! per booking with a stable UID (`booking-{id}@{host}`), SEQUENCE = version,
//! STATUS (CONFIRMED, TENTATIVE while pending, CANCELLED for cancelled and
//! rejected). A series is expanded: each occurrence is its own event, so a
//! calendar shows exactly the live occurrences at their own times.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use icalendar::{Calendar, Component, Event, EventLike, EventStatus, Property};

use crate::i18n::{I18n, Lang};
use crate::rooms::domain::Status;
use crate::rooms::Booking;

/// What an invitation asks the receiving calendar to do (RFC 5546).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Add or update the event.
    Request,
    /// Remove it.
    Cancel,
}

/// The stable UID of a booking's event.
pub fn uid(id: i64, host: &str) -> String {
    format!("booking-{id}@{host}")
}

/// A parameter value for `CN=` (RFC 5545 §3.2): no DQUOTE or control
/// character can be written, so they are left out; quoted when it holds a
/// comma (the crate quotes values holding `:` or `;` itself, and would quote
/// an already quoted one again).
pub(crate) fn cn(name: &str) -> String {
    let clean: String = name.chars().filter(|c| *c != '"' && !crate::text::is_forbidden(*c)).collect();
    if clean.contains(',') && !clean.contains([':', ';']) {
        format!("\"{clean}\"")
    } else {
        clean
    }
}

/// A value on one logical line: line breaks (from rows stored before
/// titles were one line) become `\n`, which TEXT escaping writes as `\\n`;
/// other control characters cannot be written in TEXT and are left out.
pub(crate) fn one_line(s: &str) -> String {
    s.replace("\r\n", "\n")
        .chars()
        .filter_map(|c| match c {
            '\r' | '\u{2028}' | '\u{2029}' | '\u{85}' => Some('\n'),
            '\n' | '\t' => Some(c),
            c if crate::text::is_forbidden(c) => None,
            c => Some(c),
        })
        .collect()
}

/// TEXT escaping (RFC 5545 §3.3.11) for the properties the crate writes
/// as they are (`NAME`, `X-WR-CALNAME`).
fn escape_text(s: &str) -> String {
    one_line(s).replace('\\', "\\\\").replace(';', "\\;").replace(',', "\\,").replace('\n', "\\n")
}

fn utc(t: DateTime<Utc>) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

/// Who is shown as organizer and attendee, when known, and the language
/// of the texts yeyak writes (the reader's: the recipient of an invitation,
/// the holder of a feed; SPEC §19).
#[derive(Debug, Clone, Default)]
pub struct People<'a> {
    /// The booking system's own address (invitations come from it).
    pub organizer: Option<(&'a str, &'a str)>,
    pub attendee: Option<(&'a str, &'a str)>,
    pub lang: Lang,
}

/// What an event shows of a booking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    pub id: i64,
    pub version: i32,
    pub title: &'a str,
    /// As pages show it (`Booking::shown_organizer`).
    pub organizer: Cow<'a, str>,
    pub status: Status,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    /// DTSTAMP: the booking's last change, so one version always reads the same.
    pub stamp: DateTime<Utc>,
}

impl<'a> From<&'a Booking> for Entry<'a> {
    fn from(b: &'a Booking) -> Self {
        Entry {
            id: b.id,
            version: b.version,
            title: &b.title,
            organizer: b.shown_organizer(),
            status: b.status,
            starts_at: b.starts_at,
            ends_at: b.ends_at,
            stamp: b.updated_at,
        }
    }
}

/// One booking's event.
pub fn event(b: &Entry<'_>, host: &str, room_names: &str, people: &People<'_>) -> Event {
    let mut e = Event::new();
    e.uid(&uid(b.id, host))
        .summary(&one_line(b.title))
        .location(&one_line(room_names))
        .sequence(u32::try_from(b.version).unwrap_or(0))
        .timestamp(b.stamp)
        .append_property(Property::new("DTSTART", utc(b.starts_at)))
        .append_property(Property::new("DTEND", utc(b.ends_at)))
        .status(match b.status {
            Status::Confirmed | Status::Released => EventStatus::Confirmed,
            Status::Pending => EventStatus::Tentative,
            Status::Cancelled | Status::Rejected => EventStatus::Cancelled,
        })
        .description(&one_line(&I18n::new(people.lang).t1("ics-organizer", "name", b.organizer.as_ref())));
    if let Some((name, address)) = people.organizer {
        let mut p = Property::new("ORGANIZER", format!("mailto:{address}"));
        p.add_parameter("CN", &cn(name));
        e.append_property(p);
    }
    if let Some((name, address)) = people.attendee {
        let mut p = Property::new("ATTENDEE", format!("mailto:{address}"));
        p.add_parameter("CN", &cn(name));
        p.add_parameter("PARTSTAT", "ACCEPTED");
        e.append_property(p);
    }
    e.done()
}

/// A calendar of events (a feed, a download, an invitation).
pub fn calendar(name: &str, method: Option<Method>, events: Vec<Event>) -> String {
    let mut cal = Calendar::empty();
    cal.append_property(Property::new("VERSION", "2.0"));
    cal.append_property(Property::new("PRODID", "-//yeyak//rooms//KO"));
    cal.append_property(Property::new("CALSCALE", "GREGORIAN"));
    // Not `Calendar::name`: the crate writes these two unescaped.
    let name = escape_text(name);
    cal.append_property(Property::new("NAME", name.clone()));
    cal.append_property(Property::new("X-WR-CALNAME", name));
    if let Some(method) = method {
        cal.append_property(Property::new(
            "METHOD",
            match method {
                Method::Request => "REQUEST",
                Method::Cancel => "CANCEL",
            },
        ));
    }
    for e in events {
        cal.push(e);
    }
    cal.done().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn booking(title: &str, status: Status) -> Booking {
        let t = DateTime::parse_from_rfc3339("2030-01-07T01:00:00Z").unwrap().with_timezone(&Utc);
        let mut b = Booking::example(7, title, &["A"], t, t + chrono::Duration::hours(1));
        b.organizer = "김, 민지".into();
        b.version = 3;
        b.status = status;
        b
    }

    #[test]
    fn lines_are_folded_escaped_and_crlf() {
        let title = format!("주간, 회의; 1\n2 {}", "가".repeat(150));
        let b = booking(&title, Status::Cancelled);
        let people = People {
            organizer: Some(("yeyak", "rooms@example.com")),
            attendee: Some(("김, 민지", "kim@example.com")),
            lang: Lang::Ko,
        };
        let text = calendar(
            "t",
            Some(Method::Cancel),
            vec![event(&Entry::from(&b), "rooms.example.com", "회의실 A", &people)],
        );
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
        assert!(unfolded.contains("ATTENDEE;") && unfolded.contains("CN=\"김, 민지\""));
        assert!(unfolded.contains("DTSTART:20300107T010000Z"));
    }

    #[test]
    fn every_text_is_escaped_once_and_parameters_quoted() {
        let nasty = "a\\b;c,d:e\nf\r\ng\u{2028}h";
        let escaped = "a\\\\b\\;c\\,d:e\\nf\\ng\\nh";
        let mut b = booking(nasty, Status::Confirmed);
        b.organizer = nasty.into();
        let people = People { organizer: None, attendee: Some((nasty, "kim@example.com")), lang: Lang::Ko };
        let text = calendar(nasty, None, vec![event(&Entry::from(&b), "h", nasty, &people)]);
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
        assert!(lines.iter().any(|l| l.starts_with("ATTENDEE;") && l.contains("CN=\"a\\b;c,d:efgh\"")), "{lines:#?}");
        for (name, quoted) in [("a:b", true), ("a;b", true), ("a,b", true), ("a b", false)] {
            let people = People { organizer: Some((name, "r@example.com")), attendee: None, lang: Lang::En };
            let text = calendar("n", None, vec![event(&Entry::from(&b), "h", "r", &people)]).replace("\r\n ", "");
            let want = if quoted { format!("CN=\"{name}\"") } else { format!("CN={name}") };
            assert!(text.contains(&format!(";{want}:")) || text.contains(&format!(";{want};")), "{name}: {text}");
        }
    }
}
