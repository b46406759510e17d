//! Bookings as RFC 5545 text, written by the `icalendar` crate (CRLF lines,
//! folding at 75 octets on character boundaries, TEXT escaping). One VEVENT
//! per booking with a stable UID (`booking-{id}@{host}`), SEQUENCE = version,
//! STATUS (CONFIRMED, TENTATIVE while pending, CANCELLED for cancelled and
//! rejected). A series is expanded: each occurrence is its own event, so a
//! calendar shows exactly the live occurrences at their own times.

use chrono::{DateTime, Utc};
use icalendar::{Calendar, Component, Event, EventLike, EventStatus, Property};

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

/// A parameter value for `CN=`: no DQUOTE allowed; quoted when it holds a
/// comma (the crate quotes `:` and `;` itself).
fn cn(name: &str) -> String {
    let clean: String = name.chars().filter(|c| *c != '"' && !c.is_control()).collect();
    if clean.contains(',') && !clean.contains([':', ';']) {
        format!("\"{clean}\"")
    } else {
        clean
    }
}

fn utc(t: DateTime<Utc>) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

/// Who is shown as organizer and attendee, when known.
#[derive(Debug, Clone, Default)]
pub struct People<'a> {
    /// The booking system's own address (invitations come from it).
    pub organizer: Option<(&'a str, &'a str)>,
    pub attendee: Option<(&'a str, &'a str)>,
}

/// What an event shows of a booking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    pub id: i64,
    pub version: i32,
    pub title: &'a str,
    pub organizer: &'a str,
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
            organizer: &b.organizer,
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
        .summary(b.title)
        .location(room_names)
        .sequence(u32::try_from(b.version).unwrap_or(0))
        .timestamp(b.stamp)
        .append_property(Property::new("DTSTART", utc(b.starts_at)))
        .append_property(Property::new("DTEND", utc(b.ends_at)))
        .status(match b.status {
            Status::Confirmed | Status::Released => EventStatus::Confirmed,
            Status::Pending => EventStatus::Tentative,
            Status::Cancelled | Status::Rejected => EventStatus::Cancelled,
        })
        .description(&format!("예약한 사람: {}", b.organizer));
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
    cal.name(name);
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
}
