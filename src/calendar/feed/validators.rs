//! When a feed changed: its validators (`ETag`, `Last-Modified`) made of the
//! change counters, and the one statement that checks a feed's token and
//! reads them, so a poll that still holds renders nothing.

use chrono::{DateTime, Duration, DurationRound, Utc};
use diesel::sql_types::{Array, Int4, Int8, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use sha2::{Digest, Sha256};

use super::window::{Feed, Site, Window};
use crate::db::cached::CacheExt;
use crate::db::Conn;
use crate::i18n::Lang;

/// A feed's counters: their sum (each only grows, so the sum moves with
/// any of them) and the last change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, QueryableByName)]
pub struct Counters {
    #[diesel(sql_type = Int8, column_name = feed_version)]
    pub version: i64,
    #[diesel(sql_type = Nullable<Timestamptz>, column_name = feed_changed_at)]
    pub changed_at: Option<DateTime<Utc>>,
}

/// `ETag` and `Last-Modified` of one representation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validators {
    /// Strong, quoted.
    pub etag: String,
    /// Whole seconds (as HTTP dates carry them).
    pub last_modified: DateTime<Utc>,
}

impl Validators {
    /// Validators of what `parts` name, changed last at `changed_at`.
    pub fn new(parts: &[&str], changed_at: DateTime<Utc>) -> Self {
        let mut hash = Sha256::new();
        for p in parts {
            hash.update((p.len() as u64).to_be_bytes());
            hash.update(p.as_bytes());
        }
        let etag = format!("\"{}\"", hex::encode(&hash.finalize()[..12]));
        let last_modified = changed_at.duration_trunc(Duration::seconds(1)).unwrap_or(changed_at);
        Validators { etag, last_modified }
    }

    /// A feed's validators: its counters, the window's day, its name and
    /// where its addresses point.
    pub fn of_feed(counters: Counters, window: &Window, name: &str, site: &Site<'_>) -> Self {
        let changed = counters.changed_at.map_or(window.day, |c| c.max(window.day));
        let version = counters.version.to_string();
        let day = window.day.timestamp().to_string();
        Validators::new(
            &["feed", &version, &day, name, site.host, site.room_domain, site.base, site.lang.tag()],
            changed,
        )
    }

    /// Whether the client's copy is still this one (RFC 9110 §13.1):
    /// `If-None-Match` decides when sent; else `If-Modified-Since`.
    pub fn still_hold(&self, if_none_match: Option<&str>, if_modified_since: Option<DateTime<Utc>>) -> bool {
        match if_none_match {
            Some(tags) => tags.split(',').map(str::trim).any(|t| t == "*" || t == self.etag),
            None => if_modified_since.is_some_and(|since| self.last_modified <= since),
        }
    }
}

/// The person a feed token names, with the feed's counters and, for a room
/// feed, the room — one statement, everything a poll needs.
#[derive(Debug, Clone, QueryableByName)]
pub struct Opened {
    #[diesel(sql_type = Text)]
    pub username: String,
    #[diesel(sql_type = Text)]
    pub display_name: String,
    #[diesel(sql_type = Int4)]
    pub calendar_generation: i32,
    /// The person's chosen language, if any (`ko`, `en`).
    #[diesel(sql_type = Nullable<Text>)]
    pub language: Option<String>,
    /// The room of a room feed (none: no such room).
    #[diesel(sql_type = Nullable<Text>)]
    pub room_code: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub room_name: Option<String>,
    #[diesel(sql_type = Int8, column_name = feed_version)]
    pub version: i64,
    #[diesel(sql_type = Nullable<Timestamptz>, column_name = feed_changed_at)]
    pub changed_at: Option<DateTime<Utc>>,
}

impl Opened {
    pub fn counters(&self) -> Counters {
        Counters { version: self.version, changed_at: self.changed_at }
    }

    /// The language the feed's holder reads (their choice, else Korean).
    pub fn lang(&self) -> Lang {
        self.language.as_deref().and_then(Lang::parse_exact).unwrap_or_default()
    }
}

const COUNTERS: &str = "SELECT coalesce(sum(v.version), 0)::int8 AS feed_version, max(v.changed_at) AS feed_changed_at
                          FROM calendar_feed_version v WHERE v.feed = ANY($1)";

/// Staff member `staff_id` if not disabled (the caller checks the token's
/// MAC against the generation), with `feed`'s counters and room.
pub async fn open(conn: &mut Conn, staff_id: i64, feed: Feed<'_>) -> diesel::QueryResult<Option<Opened>> {
    let room = match feed {
        Feed::Room(code) => Some(code),
        Feed::Person { .. } => None,
    };
    diesel::sql_query(
        "SELECT s.username, s.display_name, s.calendar_generation, s.language, m.code AS room_code, m.name AS room_name,
                c.feed_version, c.feed_changed_at
           FROM staff_user s
           LEFT JOIN room m ON m.code = $3
          CROSS JOIN LATERAL (SELECT coalesce(sum(v.version), 0)::int8 AS feed_version, max(v.changed_at) AS feed_changed_at
                                FROM calendar_feed_version v WHERE v.feed = ANY($1)) c
          WHERE s.id = $2 AND s.disabled_at IS NULL",
    )
    .bind::<Array<Text>, _>(feed.counters())
    .bind::<Int8, _>(staff_id)
    .bind::<Nullable<Text>, _>(room)
    .cached()
    .get_result(conn)
    .await
    .map(Some)
    .or_else(|e| if e == diesel::result::Error::NotFound { Ok(None) } else { Err(e) })
}

/// The feed's counters alone (read again beside its rows on the connection
/// that reads them, so an ETag never names more than the rows show).
pub async fn counters(conn: &mut Conn, feed: Feed<'_>) -> diesel::QueryResult<Counters> {
    diesel::sql_query(COUNTERS).bind::<Array<Text>, _>(feed.counters()).cached().get_result(conn).await
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Duration, Utc};

    use super::*;
    use crate::calendar::feed::{Site, Window};
    use crate::i18n::Lang;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn the_window_moves_once_a_day() {
        let w = Window::at(at("2030-03-04T15:30:00Z"));
        assert_eq!(w, Window::at(at("2030-03-04T00:00:00Z")));
        assert_eq!(w.from, at("2030-02-02T00:00:00Z"));
        assert_eq!(w.to, at("2031-03-05T00:00:00Z"));
        assert_ne!(w, Window::at(at("2030-03-05T00:00:00Z")));
    }

    #[test]
    fn validators_move_with_any_counter_and_hold_for_the_same_copy() {
        let site = Site { host: "h", room_domain: "d", base: "http://b", lang: Lang::Ko };
        let w = Window::at(at("2030-03-04T15:30:00Z"));
        let c = Counters { version: 3, changed_at: Some(at("2030-03-04T10:00:00.5Z")) };
        let v = Validators::of_feed(c, &w, "회의실 A", &site);
        assert_eq!(v, Validators::of_feed(c, &w, "회의실 A", &site));
        assert_eq!(v.last_modified, at("2030-03-04T10:00:00Z"));
        assert!(v.etag.starts_with('"') && v.etag.ends_with('"') && v.etag.len() == 26);
        for other in [
            Validators::of_feed(Counters { version: 4, ..c }, &w, "회의실 A", &site),
            Validators::of_feed(c, &Window::at(at("2030-03-05T00:00:00Z")), "회의실 A", &site),
            Validators::of_feed(c, &w, "회의실 B", &site),
            Validators::of_feed(c, &w, "회의실 A", &Site { room_domain: "e", ..site }),
            Validators::of_feed(c, &w, "회의실 A", &Site { lang: Lang::En, ..site }),
        ] {
            assert_ne!(other.etag, v.etag);
        }
        assert!(v.still_hold(Some(&v.etag), None));
        assert!(v.still_hold(Some(&format!("\"x\", {}", v.etag)), None));
        assert!(!v.still_hold(Some("\"x\""), Some(at("2031-01-01T00:00:00Z"))), "If-None-Match decides");
        assert!(v.still_hold(None, Some(v.last_modified)));
        assert!(!v.still_hold(None, Some(v.last_modified - Duration::seconds(1))));
        assert!(!v.still_hold(None, None));
    }
}
