//! A room's answer to an event as an iMIP `METHOD:REPLY` (SPEC §23, RFC
//! 5546 §3.2.3): the event's `UID` and `SEQUENCE`, its organizer, and the
//! room as the one attendee with its `PARTSTAT`; the reason as `COMMENT`.

use chrono::{DateTime, Utc};

use super::{Calendar, Clock, Method, Organizer, Room};

/// What a room answers to whom.
#[derive(Debug, Clone)]
pub struct Reply<'a> {
    pub uid: &'a str,
    pub sequence: u32,
    pub stamp: DateTime<Utc>,
    pub summary: &'a str,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    pub organizer: Organizer<'a>,
    pub room: Room<'a>,
    /// `DECLINED`, `ACCEPTED`, `TENTATIVE`.
    pub partstat: &'a str,
    /// Why, in the organizer's language.
    pub comment: &'a str,
}

/// The reply's iCalendar text.
pub fn reply(r: &Reply<'_>) -> String {
    let mut cal = Calendar::object(Some(Method::Reply), Clock::Utc);
    let mut buf = String::with_capacity(20);
    let l = cal.lines();
    l.raw("BEGIN", "VEVENT");
    l.raw("UID", r.uid);
    Clock::Utc.write(l, &mut buf, "DTSTAMP", r.stamp);
    Clock::Utc.write(l, &mut buf, "DTSTART", r.starts_at);
    Clock::Utc.write(l, &mut buf, "DTEND", r.ends_at);
    l.raw("SEQUENCE", &r.sequence.to_string());
    l.text("SUMMARY", r.summary);
    l.with_params("ORGANIZER", &[("CN", r.organizer.name)], &r.organizer.address);
    let room = super::super::address::mailto(&r.room.address);
    l.with_params("ATTENDEE", &[("CUTYPE", "ROOM"), ("CN", r.room.name), ("PARTSTAT", r.partstat)], &room);
    l.text("COMMENT", r.comment);
    l.raw("END", "VEVENT");
    cal.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_names_the_room_and_why() {
        let t = DateTime::parse_from_rfc3339("2030-01-07T01:00:00Z").unwrap().with_timezone(&Utc);
        let text = reply(&Reply {
            uid: "client-1",
            sequence: 2,
            stamp: t,
            summary: "주간, 회의",
            starts_at: t,
            ends_at: t + chrono::Duration::hours(1),
            organizer: Organizer { name: "김민지", address: "mailto:kim@example.com".into() },
            room: Room::new("A", "회의실 A", "yeyak.local"),
            partstat: "DECLINED",
            comment: "이미 예약된 시간입니다.",
        });
        let text = text.replace("\r\n ", "");
        assert!(text.contains("METHOD:REPLY\r\n") && text.contains("UID:client-1\r\nDTSTAMP:"), "{text}");
        assert!(text.contains("\r\nATTENDEE;CUTYPE=ROOM;CN=회의실 A;PARTSTAT=DECLINED:mailto:room-a@yeyak.local\r\n"));
        assert!(text.contains("SEQUENCE:2\r\n") && text.contains("SUMMARY:주간\\, 회의\r\n"), "{text}");
        assert!(text.contains("ORGANIZER;CN=김민지:mailto:kim@example.com"), "{text}");
    }
}
