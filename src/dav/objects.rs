//! The person's stored calendar objects (SPEC §23): `dav_event` rows with
//! the text their calendar app sent (yeyak's own fields written in), its
//! ETag, what it booked, and a tombstone once deleted. The primary key
//! (person, UID) decides that a UID is unique in a collection, inside the
//! transaction that stores the object.

use chrono::{DateTime, Utc};
use diesel::sql_types::{Bool, Int8, Nullable, Text, Timestamptz};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::RunQueryDsl;

use crate::db::cached::CacheExt;
use crate::db::Conn;

/// A stored object as its `PUT` and `DELETE` find it.
#[derive(Debug, Clone, QueryableByName)]
pub struct Stored {
    #[diesel(sql_type = Int8)]
    pub id: i64,
    #[diesel(sql_type = Text)]
    pub uid: String,
    #[diesel(sql_type = Nullable<Text>)]
    pub body: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub etag: Option<String>,
    #[diesel(sql_type = Nullable<Int8>)]
    pub reservation_id: Option<i64>,
    #[diesel(sql_type = Nullable<Int8>)]
    pub series_id: Option<i64>,
    #[diesel(sql_type = Bool)]
    pub deleted: bool,
}

impl Stored {
    /// Live, with a text of its own (not a binding from before §23).
    pub fn is_live(&self) -> bool {
        !self.deleted
    }
}

/// The object at `name` in a person's collection, locked to the end of the
/// transaction (live, a tombstone, or a binding without a stored text).
/// Writers of one name take their turns first — a transaction-scoped
/// advisory lock of (person, name) — so two `PUT`s of a new object at one
/// address are judged one after the other (`If-None-Match: *`: one 201,
/// one 412); a UID across addresses stays the primary key's to decide.
pub async fn lock_by_name(conn: &mut Conn, staff_id: i64, name: &str) -> diesel::QueryResult<Option<Stored>> {
    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtextextended('dav-object:' || $1 || ':' || $2, 0))")
        .bind::<Int8, _>(staff_id)
        .bind::<Text, _>(name)
        .cached()
        .execute(conn)
        .await?;
    diesel::sql_query(
        "SELECT id, uid, body, etag, reservation_id, series_id, deleted_at IS NOT NULL AS deleted
           FROM dav_event WHERE staff_id = $1 AND name = $2 FOR UPDATE",
    )
    .bind::<Int8, _>(staff_id)
    .bind::<Text, _>(name)
    .cached()
    .get_result(conn)
    .await
    .optional()
}

/// What a `PUT` stores.
pub struct Put<'a> {
    pub staff_id: i64,
    pub name: &'a str,
    pub uid: &'a str,
    pub component: &'a str,
    pub body: &'a str,
    pub etag: &'a str,
    pub reservation_id: Option<i64>,
    pub series_id: Option<i64>,
    pub starts_at: Option<DateTime<Utc>>,
    pub ends_at: Option<DateTime<Utc>>,
    pub now: DateTime<Utc>,
}

#[derive(QueryableByName)]
struct Written {
    #[diesel(sql_type = Int8)]
    id: i64,
}

/// Stores the object: new, or over its own earlier version or a tombstone
/// of its UID. `None` when its UID is a live object at another name (the
/// primary key decided; `CALDAV:no-uid-conflict`).
pub async fn store(conn: &mut Conn, put: &Put<'_>) -> diesel::QueryResult<Option<i64>> {
    // A tombstone of another UID at this name gives the name up.
    diesel::sql_query(
        "DELETE FROM dav_event WHERE staff_id = $1 AND name = $2 AND uid <> $3 AND deleted_at IS NOT NULL",
    )
    .bind::<Int8, _>(put.staff_id)
    .bind::<Text, _>(put.name)
    .bind::<Text, _>(put.uid)
    .cached()
    .execute(conn)
    .await?;
    let written: Option<Written> = diesel::sql_query(
        "INSERT INTO dav_event AS d (staff_id, uid, name, component, body, etag, reservation_id, series_id,
                                     starts_at, ends_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
         ON CONFLICT (staff_id, uid) DO UPDATE
            SET name = excluded.name, component = excluded.component, body = excluded.body, etag = excluded.etag,
                reservation_id = excluded.reservation_id, series_id = excluded.series_id,
                starts_at = excluded.starts_at, ends_at = excluded.ends_at,
                updated_at = excluded.updated_at, deleted_at = NULL
          WHERE d.name = excluded.name OR d.deleted_at IS NOT NULL
         RETURNING d.id",
    )
    .bind::<Int8, _>(put.staff_id)
    .bind::<Text, _>(put.uid)
    .bind::<Text, _>(put.name)
    .bind::<Text, _>(put.component)
    .bind::<Text, _>(put.body)
    .bind::<Text, _>(put.etag)
    .bind::<Nullable<Int8>, _>(put.reservation_id)
    .bind::<Nullable<Int8>, _>(put.series_id)
    .bind::<Nullable<Timestamptz>, _>(put.starts_at)
    .bind::<Nullable<Timestamptz>, _>(put.ends_at)
    .bind::<Timestamptz, _>(put.now)
    .cached()
    .get_result(conn)
    .await
    .optional()?;
    Ok(written.map(|w| w.id))
}

/// A deleted object: its text goes, its UID and name stay as a tombstone
/// until reused, so a sync reports the removal.
pub async fn bury(conn: &mut Conn, id: i64, now: DateTime<Utc>) -> diesel::QueryResult<()> {
    diesel::sql_query(
        "UPDATE dav_event SET body = NULL, etag = NULL, reservation_id = NULL, series_id = NULL,
                              deleted_at = $2, updated_at = $2
          WHERE id = $1",
    )
    .bind::<Int8, _>(id)
    .bind::<Timestamptz, _>(now)
    .cached()
    .execute(conn)
    .await?;
    Ok(())
}

/// A stored object as a `GET` answers it, with the status of what it
/// booked: one statement.
#[derive(Debug, Clone, QueryableByName)]
pub struct Read {
    #[diesel(sql_type = Int8)]
    pub id: i64,
    #[diesel(sql_type = Text)]
    pub body: String,
    #[diesel(sql_type = Text)]
    pub etag: String,
    #[diesel(sql_type = Timestamptz)]
    pub updated_at: DateTime<Utc>,
    /// The booking's (or the series' first live occurrence's) status and a
    /// version that moves with every change of what it booked.
    #[diesel(sql_type = Nullable<Text>)]
    pub booked: Option<String>,
    #[diesel(sql_type = Nullable<Int8>)]
    pub booked_version: Option<i64>,
}

/// The live stored object at `name`, if any.
pub async fn read(conn: &mut Conn, staff_id: i64, name: &str) -> diesel::QueryResult<Option<Read>> {
    diesel::sql_query(concat!(
        "SELECT o.id, o.body, o.etag, o.updated_at,
                coalesce(r.status, (SELECT x.status FROM reservation x
                                     WHERE x.series_id = o.series_id ORDER BY x.status IN ",
        crate::live_statuses!(),
        " DESC, x.starts_at
                                     LIMIT 1)) AS booked,
                coalesce(r.version::int8, (SELECT s.version + sum(x.version) FROM booking_series s
                                             JOIN reservation x ON x.series_id = s.id
                                            WHERE s.id = o.series_id GROUP BY s.version)) AS booked_version
           FROM dav_event o LEFT JOIN reservation r ON r.id = o.reservation_id
          WHERE o.staff_id = $1 AND o.name = $2 AND o.body IS NOT NULL AND o.deleted_at IS NULL"
    ))
    .bind::<Int8, _>(staff_id)
    .bind::<Text, _>(name)
    .cached()
    .get_result(conn)
    .await
    .optional()
}
