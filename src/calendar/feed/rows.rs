//! What a feed shows: its bookings as rows with their rooms and organizer,
//! read in one statement, and written as one calendar.

use chrono::{DateTime, Utc};
use diesel::sql_types::{Array, Int4, Int8, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::validators::{Counters, Validators};
use super::window::{Feed, Site, Window};
use crate::calendar::ics::{self, Calendar, Event, Organizer, Room};
use crate::db::cached::CacheExt;
use crate::db::Conn;
use crate::rooms::domain::Status;

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
    /// SPEC §26: shown whole to its organizer only (a room feed is read by
    /// colleagues).
    #[diesel(sql_type = diesel::sql_types::Bool)]
    pub private: bool,
    #[diesel(sql_type = Text)]
    pub organizer_digest: String,
}

impl Row {
    /// The row as a colleague reads it in a room feed: a private booking
    /// is `label` with no organizer unless `reader` (an organizer digest)
    /// made it.
    pub fn shown_to(mut self, reader: &str, label: &str) -> Row {
        if self.private && self.organizer_digest != reader {
            self.title = label.to_owned();
            self.organizer_name = String::new();
            self.organizer_tenant = None;
            self.username = None;
            self.display_name = None;
            self.email = None;
        }
        self
    }
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
       r.updated_at, s.username, s.display_name, s.email, r.private, r.organizer_digest,
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
