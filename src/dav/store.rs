//! What the CalDAV collections hold, read from the bookings as they are:
//! a member is a live single booking, or a series with a live occurrence
//! still ahead (one member for the whole series, never expanded). Names and
//! UIDs are the client's where the event came through CalDAV (`dav_event`,
//! written by the booking's own transaction), else `booking-{id}.ics` /
//! `series-{id}.ics` and `booking-{id}@{host}`. ETags are strong and change
//! with every version of the booking (or of any occurrence of the series).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Int8, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;

use crate::db::cached::CacheExt;
use crate::db::schema::dav_event;
use crate::db::Conn;

/// Which bookings a collection shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The bookings a person organizes (`bookings/`), by their digest.
    Organizer { staff_id: i64, digest: String },
    /// A room's bookings.
    Room(String),
}

impl Scope {
    fn digest(&self) -> Option<&str> {
        match self {
            Scope::Organizer { digest, .. } => Some(digest),
            Scope::Room(_) => None,
        }
    }

    fn room(&self) -> Option<&str> {
        match self {
            Scope::Room(code) => Some(code),
            Scope::Organizer { .. } => None,
        }
    }

    /// Whose client-given names the collection uses (the person's own only).
    pub(super) fn staff_id(&self) -> Option<i64> {
        match self {
            Scope::Organizer { staff_id, .. } => Some(*staff_id),
            Scope::Room(_) => None,
        }
    }
}

/// What a member is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    Booking(i64),
    Series(i64),
    /// A person's stored calendar object (SPEC §23), by its id: it stands
    /// for what it booked in their collection.
    Object(i64),
}

/// A member as a listing shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub target: Target,
    pub name: String,
    pub uid: String,
    pub etag: String,
    /// The last change of the booking (a series: of it or any occurrence),
    /// a GET's `Last-Modified` (SPEC §18).
    pub last_modified: DateTime<Utc>,
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Int8)]
    id: i64,
    /// The version (a series: its own plus every occurrence's, which only grows).
    #[diesel(sql_type = Int8)]
    version: i64,
    #[diesel(sql_type = Nullable<Text>)]
    name: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    uid: Option<String>,
    #[diesel(sql_type = Timestamptz)]
    updated_at: DateTime<Utc>,
    /// A stored object's own ETag.
    #[diesel(sql_type = Nullable<Text>)]
    etag: Option<String>,
}

impl Row {
    fn into_member(self, host: &str) -> Member {
        let target = match self.kind.as_str() {
            "s" => Target::Series(self.id),
            "o" => Target::Object(self.id),
            _ => Target::Booking(self.id),
        };
        let (name, uid) = match (self.name, self.uid) {
            (Some(name), Some(uid)) => (name, uid),
            (name, uid) => {
                (name.unwrap_or_else(|| default_name(target)), uid.unwrap_or_else(|| default_uid(target, host)))
            }
        };
        let etag = self.etag.unwrap_or_else(|| etag(target, self.version));
        Member { target, name, uid, etag, last_modified: self.updated_at }
    }
}

pub fn default_name(target: Target) -> String {
    match target {
        Target::Booking(id) => format!("booking-{id}.ics"),
        Target::Series(id) => format!("series-{id}.ics"),
        Target::Object(id) => format!("object-{id}.ics"),
    }
}

pub fn default_uid(target: Target, host: &str) -> String {
    match target {
        Target::Booking(id) => crate::calendar::ics::uid(id, host),
        Target::Series(id) => format!("series-{id}@{host}"),
        Target::Object(id) => format!("object-{id}@{host}"),
    }
}

/// A strong ETag of what yeyak writes: the target and its version.
pub fn etag(target: Target, version: i64) -> String {
    match target {
        Target::Booking(id) => format!("\"b{id}-{version}\""),
        Target::Series(id) => format!("\"s{id}-{version}\""),
        Target::Object(id) => format!("\"o{id}-{version}\""),
    }
}

/// The members statement of one kind of collection. Each kind has its own
/// text, so that its "whose" condition is a plain equality the planner
/// takes to an index in the statement's generic (prepared) plan: with one
/// text for both and `$n IS NULL OR …`, a room's collection scanned every
/// booking of the site (7.9 s at 3,000,000, SPEC §27). `$1` is the
/// organizer's digest, `$2` the room, `$3` the person whose own CalDAV
/// names and stored objects apply; `$4`-`$9` as in [`members`].
macro_rules! members_sql {
    (singles: $singles:expr, whose: $whose:expr, series: $series:expr) => {
        concat!(
            "SELECT 'b' AS kind, r.id, r.version::int8 AS version, d.name, d.uid, r.updated_at, NULL::text AS etag ",
            $singles,
            "
               LEFT JOIN dav_event d ON d.reservation_id = r.id AND d.staff_id = $3
              WHERE ",
            $whose,
            " AND r.series_id IS NULL AND (d.body IS NULL OR $3::int8 IS NULL) AND r.status IN ",
            crate::live_statuses!(),
            "
                AND ($5::timestamptz IS NULL OR tstzrange(r.starts_at, r.ends_at, '[)') && tstzrange($5, $6, '[)'))
                AND ($7::int8[] IS NULL OR r.id = ANY($7))
             UNION ALL
             SELECT 's', s.id, (s.version + sum(r.version))::int8, d.name, d.uid, greatest(s.updated_at, max(r.updated_at)),
                    NULL
               FROM booking_series s
               JOIN reservation r ON r.series_id = s.id
               LEFT JOIN dav_event d ON d.series_id = s.id AND d.staff_id = $3
              WHERE (d.body IS NULL OR $3::int8 IS NULL) AND ",
            $series,
            "
                AND ($8::int8[] IS NULL OR s.id = ANY($8))
              GROUP BY s.id, d.name, d.uid
             HAVING bool_or(r.status IN ",
            crate::live_statuses!(),
            " AND r.ends_at > $4)
                AND ($5::timestamptz IS NULL OR bool_or(r.status IN ",
            crate::live_statuses!(),
            "
                     AND tstzrange(r.starts_at, r.ends_at, '[)') && tstzrange($5, $6, '[)')))
             UNION ALL
             SELECT 'o', o.id, 0, o.name, o.uid, coalesce(o.updated_at, o.created_at), o.etag
               FROM dav_event o
              WHERE $3::int8 IS NOT NULL AND o.staff_id = $3 AND o.body IS NOT NULL AND o.deleted_at IS NULL
                AND ($5::timestamptz IS NULL OR o.starts_at IS NULL
                     OR tstzrange(o.starts_at, o.ends_at, '[]') && tstzrange($5, $6, '[)'))
                AND ($9::int8[] IS NULL OR o.id = ANY($9))
              ORDER BY 1, 2"
        )
    };
}

/// A person's `bookings/`: by `reservation_organizer_live_idx`.
const ORGANIZER_MEMBERS: &str = members_sql!(
    singles: "FROM reservation r",
    whose: "r.organizer_digest = $1",
    series: "s.organizer_digest = $1"
);

/// A room's collection: its room rows through the room's exclusion index
/// (`room =`, active rows; live bookings hold active rows).
const ROOM_MEMBERS: &str = members_sql!(
    singles: "FROM reservation_room x JOIN reservation r ON r.id = x.reservation_id",
    whose: "x.room = $2 AND x.active",
    series: "$2 = ANY(s.rooms)"
);

/// The members of a collection, optionally only those with time in
/// `[from, to)`, optionally only `only` (multiget, sync). Singles first,
/// each by start.
pub async fn members(
    conn: &mut Conn,
    scope: &Scope,
    host: &str,
    now: DateTime<Utc>,
    window: Option<(DateTime<Utc>, DateTime<Utc>)>,
    only: Option<&[Target]>,
) -> QueryResult<Vec<Member>> {
    let pick = |f: fn(&Target) -> Option<i64>| only.map(|targets| targets.iter().filter_map(f).collect::<Vec<i64>>());
    let bookings = pick(|t| if let Target::Booking(id) = t { Some(*id) } else { None });
    let series = pick(|t| if let Target::Series(id) = t { Some(*id) } else { None });
    let stored = pick(|t| if let Target::Object(id) = t { Some(*id) } else { None });
    let sql = match scope {
        Scope::Organizer { .. } => ORGANIZER_MEMBERS,
        Scope::Room(_) => ROOM_MEMBERS,
    };
    let rows: Vec<Row> = diesel::sql_query(sql)
        .bind::<Nullable<Text>, _>(scope.digest())
        .bind::<Nullable<Text>, _>(scope.room())
        .bind::<Nullable<Int8>, _>(scope.staff_id())
        .bind::<Timestamptz, _>(now)
        .bind::<Nullable<Timestamptz>, _>(window.map(|w| w.0))
        .bind::<Nullable<Timestamptz>, _>(window.map(|w| w.1))
        .bind::<Nullable<Array<Int8>>, _>(bookings)
        .bind::<Nullable<Array<Int8>>, _>(series)
        .bind::<Nullable<Array<Int8>>, _>(stored)
        .cached()
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(|r| r.into_member(host)).collect())
}

/// The targets member names of a collection name, in one statement
/// whatever their number (a multiget names up to 1,000, SPEC §22): in a
/// person's collection their own CalDAV names first, else a default name
/// (`booking-7.ics`). Names that name nothing are left out.
pub async fn resolve_names(
    conn: &mut Conn,
    staff_id: Option<i64>,
    names: &[&str],
) -> QueryResult<Vec<(String, Target)>> {
    type Own = (String, i64, bool, Option<i64>, Option<i64>);
    let own: Vec<Own> = match staff_id {
        Some(staff_id) if !names.is_empty() => {
            dav_event::table
                .filter(dav_event::staff_id.eq(staff_id))
                .filter(dav_event::name.eq_any(names))
                .filter(dav_event::deleted_at.is_null())
                .select((
                    dav_event::name,
                    dav_event::id,
                    dav_event::body.is_not_null(),
                    dav_event::reservation_id,
                    dav_event::series_id,
                ))
                .load(conn)
                .await?
        }
        _ => Vec::new(),
    };
    Ok(names
        .iter()
        .filter_map(|name| {
            let target = match own.iter().find(|(n, ..)| n == name) {
                // A stored object stands for what it booked (SPEC §23).
                Some((_, id, true, _, _)) => Some(Target::Object(*id)),
                Some((_, _, false, Some(id), _)) => Some(Target::Booking(*id)),
                Some((_, _, false, None, Some(id))) => Some(Target::Series(*id)),
                Some(_) => None,
                None => parse_default_name(name),
            };
            target.map(|t| ((*name).to_owned(), t))
        })
        .collect())
}

pub fn parse_default_name(name: &str) -> Option<Target> {
    let id = |rest: &str| rest.strip_suffix(".ics").and_then(|n| n.parse::<i64>().ok()).filter(|n| *n > 0);
    if let Some(rest) = name.strip_prefix("booking-") {
        return id(rest).map(Target::Booking);
    }
    name.strip_prefix("series-").and_then(id).map(Target::Series)
}

/// A person's CalDAV event by its UID.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct Mapped {
    pub name: String,
    pub reservation_id: Option<i64>,
    pub series_id: Option<i64>,
}

impl Mapped {
    pub fn target(&self) -> Option<Target> {
        match (self.reservation_id, self.series_id) {
            (Some(id), _) => Some(Target::Booking(id)),
            (None, Some(id)) => Some(Target::Series(id)),
            _ => None,
        }
    }
}

pub async fn by_uid(conn: &mut Conn, staff_id: i64, uid: &str) -> QueryResult<Option<Mapped>> {
    dav_event::table
        .filter(dav_event::staff_id.eq(staff_id))
        .filter(dav_event::uid.eq(uid))
        .select((dav_event::name, dav_event::reservation_id, dav_event::series_id))
        .first(conn)
        .await
        .optional()
}

/// The UID and name a target has in a person's collection, if it came
/// through CalDAV.
pub async fn mapping_of(conn: &mut Conn, target: Target) -> QueryResult<Option<(String, String)>> {
    let q = dav_event::table.select((dav_event::uid, dav_event::name));
    match target {
        Target::Booking(id) => q.filter(dav_event::reservation_id.eq(id)).first(conn).await.optional(),
        Target::Series(id) => q.filter(dav_event::series_id.eq(id)).first(conn).await.optional(),
        Target::Object(id) => q.filter(dav_event::id.eq(id)).first(conn).await.optional(),
    }
}
