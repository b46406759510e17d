//! What a feed is: whose bookings (a room's or a person's), over which days
//! (30 back to 365 ahead of the current day), and where its events point.

use chrono::{DateTime, Duration, DurationRound, Utc};

use crate::i18n::Lang;

/// Where events and addresses point — the UID host, the rooms' mail domain
/// and the public base URL of principals — and the language of the words
/// yeyak writes into them (the reader's, SPEC §19).
#[derive(Debug, Clone, Copy)]
pub struct Site<'a> {
    pub host: &'a str,
    pub room_domain: &'a str,
    pub base: &'a str,
    pub lang: Lang,
}

/// Which feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed<'a> {
    /// A room's bookings, by code.
    Room(&'a str),
    /// A person's: the bookings they organize (by staff id, or by their
    /// owner digest for bookings made before bookings named their person).
    Person { staff_id: i64, digest: &'a str },
}

impl Feed<'_> {
    /// The counters this feed's content depends on.
    pub(super) fn counters(&self) -> Vec<String> {
        let own = match self {
            Feed::Room(code) => format!("room:{code}"),
            Feed::Person { staff_id, .. } => format!("staff:{staff_id}"),
        };
        vec![own, "rooms".to_owned(), "people".to_owned()]
    }
}

/// The days a feed shows: 30 back and 365 ahead of the current day (UTC),
/// so that it changes with its bookings and once a day, not every second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub day: DateTime<Utc>,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

impl Window {
    /// Every date a booking can have (years 1 to 9999): a person's export.
    pub fn everything() -> Window {
        let from = DateTime::<Utc>::from_naive_utc_and_offset(
            chrono::NaiveDate::from_ymd_opt(1, 1, 1).expect("a date").and_hms_opt(0, 0, 0).expect("a time"),
            Utc,
        );
        let to = DateTime::<Utc>::from_naive_utc_and_offset(
            chrono::NaiveDate::from_ymd_opt(10000, 1, 1).expect("a date").and_hms_opt(0, 0, 0).expect("a time"),
            Utc,
        );
        Window { day: from, from, to }
    }

    pub fn at(now: DateTime<Utc>) -> Window {
        let day = now.duration_trunc(Duration::days(1)).unwrap_or(now);
        Window { day, from: day - Duration::days(30), to: day + Duration::days(366) }
    }
}
