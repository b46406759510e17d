//! Mail (SPEC §10): booking notices and reminders to staff with an email
//! address, delivered by the outbox's `mail` channel — leased claims,
//! retries with backoff, one row per stable delivery id, so nothing is sent
//! twice for one version. Each message is plain text in the recipient's
//! language (their choice on `/account`, else Korean; SPEC §19) plus the event
//! as a `text/calendar` part (`METHOD:REQUEST`, or `METHOD:CANCEL` for a
//! cancellation or rejection) with the booking's stable UID, so mail clients
//! update their calendars. `smtp` sends them, `reminders` schedules them.

pub mod pool;
pub mod prepared;
pub mod reminders;
pub mod smtp;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Deserialize;

use crate::calendar::ics::{self, Event, Method, Organizer, Room};
use crate::i18n::{I18n, Lang};
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
    /// The recipient's language (`ko`, `en`) as stored when the message was
    /// queued; none (older rows, no choice) is Korean.
    #[serde(default)]
    pub language: Option<String>,
    /// The zone of the booking's area (older notices: none, the
    /// installation's stands in).
    #[serde(default)]
    pub time_zone: Option<String>,
}

impl Notice {
    /// The language the recipient reads.
    pub fn lang(&self) -> Lang {
        self.language.as_deref().and_then(Lang::parse_exact).unwrap_or_default()
    }
}

/// A message ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub subject: String,
    pub text: String,
    pub calendar: String,
    pub method: Method,
}

/// A meeting's time as mail writes it: `2030-01-07 (월) 10:00–11:00`, in
/// `tz`, the zone named after it when it is not `home` (SPEC §24).
pub fn when_in(i18n: &I18n, starts_at: DateTime<Utc>, ends_at: DateTime<Utc>, tz: Tz, home: Tz) -> String {
    let written = when(i18n, starts_at, ends_at, tz);
    if tz == home {
        written
    } else {
        format!("{written} ({})", tz.name())
    }
}

/// A meeting's time as mail writes it: `2030-01-07 (월) 10:00–11:00`.
pub fn when(i18n: &I18n, starts_at: DateTime<Utc>, ends_at: DateTime<Utc>, tz: Tz) -> String {
    let (s, e) = (starts_at.with_timezone(&tz), ends_at.with_timezone(&tz));
    i18n.t3(
        "mail-when",
        "date",
        i18n.date_short(s.date_naive()),
        "start",
        s.format("%H:%M").to_string(),
        "end",
        e.format("%H:%M").to_string(),
    )
}

/// The message for an outbox `kind` (`booking.created`, `booking.reminder`, …).
/// Its event names the organizer — the recipient, whose booking it is — and
/// the rooms as attendees, as feeds do (SPEC §18), its words in the
/// recipient's language (SPEC §19); `host` makes the UID, `room_domain` the
/// rooms' addresses.
pub fn render(kind: &str, n: &Notice, tz: Tz, host: &str, room_domain: &str, created: DateTime<Utc>) -> Rendered {
    let i18n = I18n::new(n.lang());
    let zone = n.time_zone.as_deref().and_then(|z| z.parse().ok()).unwrap_or(tz);
    let when = when_in(&i18n, n.starts_at, n.ends_at, zone, tz);
    let (tag, headline) = match kind {
        "booking.created" if n.status == Status::Pending => ("mail-tag-pending", "mail-head-pending"),
        "booking.created" => ("mail-tag-created", "mail-head-created"),
        "booking.moved" => ("mail-tag-moved", "mail-head-moved"),
        "booking.cancelled" => ("mail-tag-cancelled", "mail-head-cancelled"),
        "booking.approved" => ("mail-tag-approved", "mail-head-approved"),
        "booking.rejected" => ("mail-tag-rejected", "mail-head-rejected"),
        "booking.released" => ("mail-tag-released", "mail-head-released"),
        "booking.reminder" => ("mail-tag-reminder", "mail-head-reminder"),
        _ => ("mail-tag-other", "mail-head-other"),
    };
    let method = match n.status {
        Status::Cancelled | Status::Rejected => Method::Cancel,
        _ => Method::Request,
    };
    let rooms = n.rooms.join("+");
    let subject =
        i18n.t3("mail-subject", "tag", i18n.t(tag), "title", n.title.replace('\n', " "), "when", when.as_str());
    let text = [
        i18n.t1("mail-greeting", "name", &n.to_name),
        String::new(),
        i18n.t(headline),
        String::new(),
        i18n.t1("mail-field-title", "title", &n.title),
        i18n.t1("mail-field-rooms", "rooms", rooms.as_str()),
        i18n.t1("mail-field-when", "when", when.as_str()),
        i18n.t1("mail-field-organizer", "organizer", &n.organizer),
        String::new(),
        i18n.t("mail-signature"),
        String::new(),
    ]
    .join("\n");
    let event = Event {
        uid: ics::uid(n.booking_id, host).into(),
        version: n.version,
        title: &n.title,
        shown_organizer: n.organizer.as_str().into(),
        status: n.status,
        starts_at: n.starts_at,
        ends_at: n.ends_at,
        stamp: created,
        organizer: Some(Organizer { name: &n.to_name, address: crate::calendar::address::mailto(&n.to).into() }),
        rooms: n
            .rooms
            .iter()
            .map(|code| Room::new(code, n.room_names.get(code).map_or(code.as_str(), String::as_str), room_domain))
            .collect(),
    };
    let calendar = ics::calendar(&n.title, Some(method), [&event], i18n.lang());
    Rendered { subject, text, calendar, method }
}

/// A strike notice (`series.struck`, SPEC §25) as the outbox carries it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StruckNotice {
    pub series_id: i64,
    pub title: String,
    pub strikes: u32,
    pub cancelled: i64,
    pub to: String,
    pub to_name: String,
    #[serde(default)]
    pub language: Option<String>,
}

/// The strike mail: what happened and the restore page (`base` is
/// `YEYAK_PUBLIC_URL`'s origin; without one the path stands alone). Text
/// only: the cancelled occurrences' own notices carry their calendar parts.
pub fn render_struck(n: &StruckNotice, base: &str) -> prepared::Prepared {
    let i18n = I18n::new(n.language.as_deref().and_then(Lang::parse_exact).unwrap_or_default());
    let link = format!("{base}/series/{}/restore", n.series_id);
    let text = [
        i18n.t1("mail-greeting", "name", &n.to_name),
        String::new(),
        i18n.t2("mail-struck-head", "strikes", i64::from(n.strikes), "cancelled", n.cancelled),
        String::new(),
        i18n.t1("mail-field-title", "title", &n.title),
        i18n.t1("mail-struck-restore", "link", link.as_str()),
        String::new(),
        i18n.t("mail-signature"),
        String::new(),
    ]
    .join("\n");
    prepared::Prepared {
        from: None,
        from_name: None,
        to: n.to.clone(),
        to_name: Some(n.to_name.clone()),
        subject: i18n.t1("mail-struck-subject", "title", n.title.replace('\n', " ")),
        text,
        calendar: String::new(),
        method: String::new(),
    }
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
            language: None,
            time_zone: None,
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

    #[test]
    fn a_strike_mail_names_the_series_and_links_its_restore_page() {
        let n = StruckNotice {
            series_id: 42,
            title: "주간 회의".into(),
            strikes: 3,
            cancelled: 7,
            to: "kim@example.com".into(),
            to_name: "김민지".into(),
            language: Some("en".into()),
        };
        let p = render_struck(&n, "https://rooms.example.com");
        assert_eq!(p.subject, "[Series cancelled] 주간 회의");
        assert!(p.text.contains("last 3 meetings") && p.text.contains("its 7 upcoming"), "{}", p.text);
        assert!(p.text.contains("https://rooms.example.com/series/42/restore"), "{}", p.text);
        assert!(p.calendar.is_empty(), "text only: the occurrences' own notices carry calendar parts");
        let ko = render_struck(&StruckNotice { language: None, ..n }, "");
        assert!(ko.subject.starts_with("[반복 예약 취소]") && ko.text.contains("/series/42/restore"), "{}", ko.text);
    }

    #[test]
    fn a_notice_reads_in_the_recipients_language() {
        let t = DateTime::parse_from_rfc3339("2030-01-07T01:00:00Z").unwrap().with_timezone(&Utc);
        let n = Notice {
            booking_id: 9,
            version: 2,
            status: Status::Confirmed,
            title: "Weekly sync".into(),
            organizer: "Kim Minji".into(),
            rooms: vec!["A".into()],
            starts_at: t,
            ends_at: t + chrono::Duration::hours(1),
            to: "kim@example.com".into(),
            to_name: "Kim Minji".into(),
            room_names: Default::default(),
            language: Some("en".into()),
            time_zone: None,
        };
        let r = render("booking.created", &n, chrono_tz::Asia::Seoul, "h", "h", t);
        assert_eq!(r.subject, "[Booked] Weekly sync · Mon 7 Jan 2030 10:00–11:00");
        assert!(r.text.starts_with("Hello Kim Minji,\n\nYou booked a room."), "{}", r.text);
        assert!(r.text.contains("Rooms: A") && r.text.contains("Booked by: Kim Minji"), "{}", r.text);
        assert!(r.calendar.replace("\r\n ", "").contains("DESCRIPTION:Booked by: Kim Minji"));
        let all = format!("{}{}{}", r.subject, r.text, r.calendar);
        assert!(!all.chars().any(|c| ('\u{AC00}'..='\u{D7A3}').contains(&c)), "no Korean in English mail: {all}");
    }
}
