//! Mail (SPEC §10): booking notices and reminders to staff with an email
//! address, delivered by the outbox's `mail` channel — leased claims,
//! retries with backoff, one row per stable delivery id, so nothing is sent
//! twice for one version. Each message is Korean plain text plus the event
//! as a `text/calendar` part (`METHOD:REQUEST`, or `METHOD:CANCEL` for a
//! cancellation or rejection) with the booking's stable UID, so mail clients
//! update their calendars. `smtp` sends them, `reminders` schedules them.

pub mod pool;
pub mod reminders;
pub mod smtp;

use chrono::{DateTime, Datelike, Utc};
use chrono_tz::Tz;
use serde::Deserialize;

use crate::calendar::ics::{self, Event, Method, Organizer, Room};
use crate::rooms::domain::Status;

/// A booking notice as the outbox carries it (`rooms::events::payload`
/// plus the recipient added at enqueue).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notice {
    pub booking_id: i64,
    pub version: i32,
    pub status: Status,
    pub title: String,
    pub organizer: String,
    pub rooms: Vec<String>,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    pub to: String,
    pub to_name: String,
    /// Room names by code, as the notice was enqueued (older notices: none,
    /// the codes stand in).
    #[serde(default)]
    pub room_names: std::collections::BTreeMap<String, String>,
}

/// A message ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub subject: String,
    pub text: String,
    pub calendar: String,
    pub method: Method,
}

fn weekday(d: chrono::Weekday) -> &'static str {
    ["월", "화", "수", "목", "금", "토", "일"][d.num_days_from_monday() as usize]
}

/// The message for an outbox `kind` (`booking.created`, `booking.reminder`, …).
/// Its event names the organizer — the recipient, whose booking it is — and
/// the rooms as attendees, as feeds do (SPEC §18); `host` makes the UID,
/// `room_domain` the rooms' addresses.
pub fn render(kind: &str, n: &Notice, tz: Tz, host: &str, room_domain: &str, created: DateTime<Utc>) -> Rendered {
    let (s, e) = (n.starts_at.with_timezone(&tz), n.ends_at.with_timezone(&tz));
    let when =
        format!("{} ({}) {}–{}", s.format("%Y-%m-%d"), weekday(s.weekday()), s.format("%H:%M"), e.format("%H:%M"));
    let (tag, headline) = match kind {
        "booking.created" if n.status == Status::Pending => {
            ("승인 대기", "예약을 받았습니다. 관리자의 승인을 기다립니다.")
        }
        "booking.created" => ("예약 확정", "회의실을 예약했습니다."),
        "booking.moved" => ("예약 변경", "예약이 바뀌었습니다."),
        "booking.cancelled" => ("예약 취소", "예약이 취소되었습니다. 그 시간은 이제 비어 있습니다."),
        "booking.approved" => ("예약 승인", "예약이 승인되었습니다."),
        "booking.rejected" => ("예약 거절", "예약이 거절되었습니다."),
        "booking.released" => {
            ("자동 반납", "체크인이 없어 예약을 자동으로 반납했습니다. 남은 시간은 다른 사람이 예약할 수 있습니다.")
        }
        "booking.reminder" => ("곧 시작", "곧 회의가 시작합니다."),
        _ => ("알림", "예약 알림입니다."),
    };
    let method = match n.status {
        Status::Cancelled | Status::Rejected => Method::Cancel,
        _ => Method::Request,
    };
    let rooms = n.rooms.join("+");
    let subject = format!("[{tag}] {} · {when}", n.title.replace('\n', " "));
    let text = format!(
        "{}님,\n\n{headline}\n\n제목: {}\n회의실: {rooms}\n시간: {when}\n예약한 사람: {}\n\n-- yeyak 회의실 예약\n",
        n.to_name, n.title, n.organizer
    );
    let event = Event {
        uid: ics::uid(n.booking_id, host).into(),
        version: n.version,
        title: &n.title,
        shown_organizer: n.organizer.as_str().into(),
        status: n.status,
        starts_at: n.starts_at,
        ends_at: n.ends_at,
        stamp: created,
        organizer: Some(Organizer { name: &n.to_name, address: format!("mailto:{}", n.to).into() }),
        rooms: n
            .rooms
            .iter()
            .map(|code| Room::new(code, n.room_names.get(code).map_or(code.as_str(), String::as_str), room_domain))
            .collect(),
    };
    let calendar = ics::calendar(&n.title, Some(method), [&event]);
    Rendered { subject, text, calendar, method }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_are_korean_with_a_calendar_part() {
        let t = DateTime::parse_from_rfc3339("2030-01-07T01:00:00Z").unwrap().with_timezone(&Utc);
        let n = Notice {
            booking_id: 9,
            version: 2,
            status: Status::Cancelled,
            title: "주간 회의".into(),
            organizer: "김민지".into(),
            rooms: vec!["A".into(), "B".into()],
            starts_at: t,
            ends_at: t + chrono::Duration::hours(1),
            to: "kim@example.com".into(),
            to_name: "김민지".into(),
            room_names: [("A".to_owned(), "회의실 A".to_owned())].into(),
        };
        let r = render("booking.cancelled", &n, chrono_tz::Asia::Seoul, "rooms.example.com", "rooms.example.com", t);
        assert_eq!(r.subject, "[예약 취소] 주간 회의 · 2030-01-07 (월) 10:00–11:00");
        assert!(r.text.contains("김민지님") && r.text.contains("회의실: A+B"));
        assert_eq!(r.method, Method::Cancel);
        let cal = r.calendar.replace("\r\n ", "");
        assert!(
            cal.contains("METHOD:CANCEL")
                && cal.contains("UID:booking-9@rooms.example.com")
                && cal.contains("SEQUENCE:2")
        );
        assert!(cal.contains("\r\nORGANIZER;CN=김민지:mailto:kim@example.com\r\n"), "{cal}");
        assert!(cal.contains("ATTENDEE;CUTYPE=ROOM;CN=회의실 A;PARTSTAT=DECLINED:mailto:room-a@rooms.example.com"));
        assert!(cal.contains("ATTENDEE;CUTYPE=ROOM;CN=B;PARTSTAT=DECLINED:mailto:room-b@rooms.example.com"));
    }
}
