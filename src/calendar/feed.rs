//! What a calendar feed shows and when it changed (SPEC §10, §18): the
//! bookings of a room or a person, 30 days back to 365 days ahead of the
//! current day, and the validators (`ETag`, `Last-Modified`) made of the
//! feed's change counters (`calendar_feed_version`, bumped by the
//! transactions that change bookings, rooms and people — see the
//! migration `2026-12-04-000080_feed_versions`). A poll that still holds is
//! decided by the counters alone, in the statement that also checks the
//! feed's token ([`open`]); nothing is rendered.

use chrono::{DateTime, Duration, DurationRound, Utc};
use diesel::sql_types::{Array, Int4, Int8, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use sha2::{Digest, Sha256};

use super::ics::{self, Calendar, Event, Organizer, Room};
use crate::db::cached::CacheExt;
use crate::db::Conn;
use crate::i18n::Lang;
use crate::rooms::domain::Status;

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
    fn counters(&self) -> Vec<String> {
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
    pub fn at(now: DateTime<Utc>) -> Window {
        let day = now.duration_trunc(Duration::days(1)).unwrap_or(now);
        Window { day, from: day - Duration::days(30), to: day + Duration::days(366) }
    }
}

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

/// A booking as a feed shows it: what its event needs, rooms and organizer
/// included, read in one statement.
#[derive(Debug, Clone, QueryableByName)]
pub struct Row {
    #[diesel(sql_type = Int8)]
    pub id: i64,
    #[diesel(sql_type = Text)]
    pub title: String,
    #[diesel(sql_type = Text)]
    pub organizer_name: String,
    #[diesel(sql_type = Nullable<Text>)]
    pub organizer_tenant: Option<String>,
    #[diesel(sql_type = Text)]
    pub status: Status,
    #[diesel(sql_type = Int4)]
    pub version: i32,
    #[diesel(sql_type = Timestamptz)]
    pub starts_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    pub ends_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    pub updated_at: DateTime<Utc>,
    /// The organizing person, when a person organizes it.
    #[diesel(sql_type = Nullable<Text>)]
    pub username: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub display_name: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub email: Option<String>,
    /// Codes and names, in position order.
    #[diesel(sql_type = Array<Text>)]
    pub room_codes: Vec<String>,
    #[diesel(sql_type = Array<Text>)]
    pub room_names: Vec<String>,
}

impl Row {
    /// The event of this booking, addressed within `site`.
    pub fn event<'a>(&'a self, site: &Site<'_>) -> Event<'a> {
        let shown = crate::rooms::domain::shown_organizer(&self.organizer_name, self.organizer_tenant.as_deref());
        let organizer = match (&self.username, &self.display_name) {
            (Some(username), Some(name)) => Some(Organizer::person(name, self.email.as_deref(), username, site.base)),
            _ => None,
        };
        Event {
            uid: ics::uid(self.id, site.host).into(),
            version: self.version,
            title: &self.title,
            shown_organizer: shown,
            status: self.status,
            starts_at: self.starts_at,
            ends_at: self.ends_at,
            stamp: self.updated_at,
            organizer,
            rooms: self
                .room_codes
                .iter()
                .zip(&self.room_names)
                .map(|(code, name)| Room::new(code, name, site.room_domain))
                .collect(),
        }
    }
}

const ROW_SELECT: &str = "
SELECT r.id, r.title, r.organizer_name, r.organizer_tenant, r.status, r.version, r.starts_at, r.ends_at,
       r.updated_at, s.username, s.display_name, s.email,
       COALESCE(array_agg(rm.code ORDER BY rm.position, rm.code) FILTER (WHERE rm.code IS NOT NULL), '{}') AS room_codes,
       COALESCE(array_agg(rm.name ORDER BY rm.position, rm.code) FILTER (WHERE rm.code IS NOT NULL), '{}') AS room_names";

const ROW_FROM: &str = "
  FROM reservation r
  LEFT JOIN staff_user s ON s.id = r.organizer_staff_id
  LEFT JOIN reservation_room rr ON rr.reservation_id = r.id
  LEFT JOIN room rm ON rm.code = rr.room";

/// The bookings `feed` shows in `window`, every status, by start.
pub async fn rows(conn: &mut Conn, feed: Feed<'_>, window: &Window) -> diesel::QueryResult<Vec<Row>> {
    match feed {
        Feed::Room(code) => {
            diesel::sql_query(format!(
                "{ROW_SELECT}{ROW_FROM}
              WHERE r.id IN (SELECT x.reservation_id FROM reservation_room x
                              WHERE x.room = $3 AND x.starts_at < $2 AND x.ends_at > $1)
                AND r.ends_at > $1 AND r.starts_at < $2
              GROUP BY r.id, s.id
              ORDER BY r.starts_at, r.id"
            ))
            .bind::<Timestamptz, _>(window.from)
            .bind::<Timestamptz, _>(window.to)
            .bind::<Text, _>(code)
            .cached()
            .load(conn)
            .await
        }
        Feed::Person { staff_id, digest } => {
            diesel::sql_query(format!(
                "{ROW_SELECT}{ROW_FROM}
              WHERE (r.organizer_staff_id = $3 OR r.organizer_digest = $4)
                AND r.ends_at > $1 AND r.starts_at < $2
              GROUP BY r.id, s.id
              ORDER BY r.starts_at, r.id"
            ))
            .bind::<Timestamptz, _>(window.from)
            .bind::<Timestamptz, _>(window.to)
            .bind::<Int8, _>(staff_id)
            .bind::<Text, _>(digest)
            .cached()
            .load(conn)
            .await
        }
    }
}

/// One booking as a download shows it, with the validators of that
/// representation, in one statement.
pub async fn one(conn: &mut Conn, id: i64) -> diesel::QueryResult<Option<(Row, Counters)>> {
    let found: Option<WithCounters> = diesel::sql_query(format!(
        "{ROW_SELECT}, c.feed_version, c.feed_changed_at{ROW_FROM}
          CROSS JOIN LATERAL (SELECT coalesce(sum(v.version), 0)::int8 AS feed_version, max(v.changed_at) AS feed_changed_at
                                FROM calendar_feed_version v WHERE v.feed IN ('rooms', 'people')) c
          WHERE r.id = $1
          GROUP BY r.id, s.id, c.feed_version, c.feed_changed_at"
    ))
    .bind::<Int8, _>(id)
    .cached()
    .get_result(conn)
    .await
    .map(Some)
    .or_else(|e| if e == diesel::result::Error::NotFound { Ok(None) } else { Err(e) })?;
    Ok(found.map(|f| (f.row, f.counters)))
}

/// A row and the counters beside it, from one result row.
struct WithCounters {
    row: Row,
    counters: Counters,
}

impl QueryableByName<diesel::pg::Pg> for WithCounters {
    fn build<'a>(row: &impl diesel::row::NamedRow<'a, diesel::pg::Pg>) -> diesel::deserialize::Result<Self> {
        Ok(WithCounters { row: Row::build(row)?, counters: Counters::build(row)? })
    }
}

/// A download's validators: the booking's version and last change, and the
/// counters of the names and addresses it shows.
pub fn validators_of_one(row: &Row, counters: Counters, site: &Site<'_>) -> Validators {
    let changed = counters.changed_at.map_or(row.updated_at, |c| c.max(row.updated_at));
    let parts = [
        "booking".to_owned(),
        row.id.to_string(),
        row.version.to_string(),
        row.updated_at.timestamp_micros().to_string(),
        counters.version.to_string(),
    ];
    let mut all: Vec<&str> = parts.iter().map(String::as_str).collect();
    all.extend([site.host, site.room_domain, site.base, site.lang.tag()]);
    Validators::new(&all, changed)
}

/// The feed's text.
pub fn render(name: &str, rows: &[Row], site: &Site<'_>) -> String {
    let mut cal = Calendar::new(name, None, rows.len(), site.lang);
    for row in rows {
        cal.push(&row.event(site));
    }
    cal.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

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
