//! A person's data, to take away (SPEC §26): one JSON document of their
//! profile, linked identities, bookings (with their rooms and history),
//! series, delegations, app passwords, sessions, mail deliveries to them,
//! access records about them and away days.
//!
//! The document is streamed, never built whole: the sections that grow
//! with time (bookings, series, mail deliveries, access records) are read
//! in keyset pages of [`PAGE`] rows — a page of bookings brings its rooms
//! and history in one statement each, whatever its size — and each page
//! is written out as serde_json pieces before the next is read. The
//! sections one person fills by hand (identities, delegations, app
//! passwords, sessions, away days) are read whole.
//!
//! Everything is read in one `REPEATABLE READ, READ ONLY` transaction on
//! a connection the stream owns ([`Opened`]), so the document shows one
//! moment: a booking moved while the download runs is either before or
//! after the move in every section. The transaction ends the session when
//! it sits idle for [`IDLE_LIMIT`] (a client that stops reading), so a
//! stalled download never holds back the server's cleanup for long; a
//! stream dropped halfway (the client left) gives its connection back
//! with the transaction open, which the pool counts as broken and closes.
//!
//! What exists is exported and nothing more: sessions keep no "last seen"
//! time or address (only when they began and when they end), and never a
//! secret (no password hash, app-password digest, session token or ID
//! token). Access records say when, what and how many people, never who
//! looked or from where: that would name another person.

use std::collections::BTreeMap;

use chrono::{DateTime, TimeZone, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Int8, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use futures_util::{Stream, StreamExt};
use serde::Serialize;
use serde_json::Value;

use crate::db::cached::CacheExt;
use crate::db::schema::{
    app_password, booking_event, delegation, staff_away, staff_identity, staff_session, staff_user,
};
use crate::db::{Conn, DbError};
use crate::rooms::domain::Status;

mod document;
pub use document::*;

/// Rows read per statement of a paged section.
pub const PAGE: i64 = 500;

/// How long the export's transaction may sit idle before PostgreSQL ends it
/// (`idle_in_transaction_session_timeout`): a client that stops reading.
pub const IDLE_LIMIT: &str = "60s";

/// A pooled connection the stream owns.
pub type Owned = diesel_async::pooled_connection::bb8::PooledConnection<'static, diesel_async::AsyncPgConnection>;

/// An export whose snapshot is open and whose person exists: what is left
/// is to stream it.
pub struct Opened {
    conn: Owned,
    person: i64,
    email: Option<String>,
    /// `{"exportedAt":…,"profile":{…}`, already read.
    head: Vec<u8>,
}

/// Opens the snapshot on `conn` and reads the person's profile; `None`
/// (the transaction ended) when there is no such person.
pub async fn open(mut conn: Owned, person: i64) -> Result<Option<Opened>, DbError> {
    crate::db::begin_snapshot(&mut conn).await?;
    let read = async {
        diesel::sql_query(format!("SET LOCAL idle_in_transaction_session_timeout = '{IDLE_LIMIT}'"))
            .execute(&mut *conn)
            .await?;
        profile(&mut conn, person).await
    }
    .await;
    match read {
        Ok(Some((exported_at, profile))) => {
            let mut head = Vec::with_capacity(1024);
            head.extend_from_slice(b"{\"exportedAt\":");
            put(&mut head, &exported_at);
            head.extend_from_slice(b",\"profile\":");
            put(&mut head, &profile);
            Ok(Some(Opened { conn, person, email: profile.email, head }))
        }
        other => crate::db::finish(&mut conn, other.map(|_| None).map_err(DbError::from)).await,
    }
}

impl Opened {
    /// The document as chunks of JSON, each written as soon as its page is
    /// read. A failure halfway ends the stream with the error (the client
    /// sees a cut-off, unparseable document, never a short valid one).
    pub fn stream(self) -> impl Stream<Item = Result<Vec<u8>, DbError>> + 'static {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, DbError>>(2);
        let Opened { mut conn, person, email, head } = self;
        // The writer runs inside the response's own stream (no task of its
        // own): it reads while the client reads, and stops when they leave.
        let writer = async move {
            let mut out = Out { tx, buf: head };
            let written = sections(&mut conn, person, email.as_deref(), &mut out).await;
            match crate::db::finish(&mut conn, written).await {
                Ok(()) => {
                    out.buf.push(b'}');
                    out.flush().await;
                }
                Err(e) => out.fail(e).await,
            }
        };
        let chunks = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
        let driver = futures_util::stream::once(writer).filter_map(|()| async { None::<Result<Vec<u8>, DbError>> });
        futures_util::stream::select(driver, chunks)
    }
}

/// Writes `value` as JSON into `buf` (our own types: it cannot fail).
fn put<T: Serialize>(buf: &mut Vec<u8>, value: &T) {
    serde_json::to_writer(buf, value).expect("export types serialize");
}

/// Where the writer puts its chunks.
struct Out {
    tx: tokio::sync::mpsc::Sender<Result<Vec<u8>, DbError>>,
    buf: Vec<u8>,
}

impl Out {
    fn raw(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// Sends what is written so far. The receiver lives in the same stream
    /// as the writer, so it cannot be gone while the writer runs.
    async fn flush(&mut self) {
        if !self.buf.is_empty() {
            let _ = self.tx.send(Ok(std::mem::take(&mut self.buf))).await;
        }
    }

    async fn fail(&mut self, e: DbError) {
        self.buf.clear();
        let _ = self.tx.send(Err(e)).await;
    }

    /// `,"name":[` then each page's items, comma-separated.
    fn open_array(&mut self, name: &str) {
        self.raw(",\"");
        self.raw(name);
        self.raw("\":[");
    }

    /// Writes a page's items and sends them; whether the page was full,
    /// so that another may follow.
    async fn page<T: Serialize>(&mut self, first: &mut bool, page: &[T]) -> bool {
        for item in page {
            self.item(first, item);
        }
        self.flush().await;
        page.len() as i64 == PAGE
    }

    /// `,"name":[…]` read a page at a time by key: `fetch` reads the page
    /// after a key, `key` gives the key of a page's last item. A page
    /// shorter than [`PAGE`] is the last.
    async fn keyset<K, T: Serialize>(
        &mut self,
        name: &str,
        mut after: K,
        key: impl Fn(&T) -> K,
        mut fetch: impl AsyncFnMut(K) -> Result<Vec<T>, DbError>,
    ) -> Result<(), DbError> {
        self.open_array(name);
        let mut first = true;
        loop {
            let page = fetch(after).await?;
            let Some(last) = page.last() else { break };
            after = key(last);
            if !self.page(&mut first, &page).await {
                break;
            }
        }
        self.raw("]");
        Ok(())
    }

    fn item<T: Serialize>(&mut self, first: &mut bool, value: &T) {
        if !std::mem::take(first) {
            self.buf.push(b',');
        }
        put(&mut self.buf, value);
    }

    fn field<T: Serialize>(&mut self, name: &str, value: &T) {
        self.raw(",\"");
        self.raw(name);
        self.raw("\":");
        put(&mut self.buf, value);
    }
}

/// Every section after the profile, in [`PersonalExport`]'s order.
async fn sections(conn: &mut Conn, person: i64, email: Option<&str>, out: &mut Out) -> Result<(), DbError> {
    let identities = identities(conn, person).await?;
    out.field("identities", &identities);
    out.flush().await;
    bookings(conn, person, out).await?;
    series(conn, person, out).await?;
    let delegations = delegations(conn, person).await?;
    out.field("delegations", &delegations);
    let passwords = app_passwords(conn, person).await?;
    out.field("appPasswords", &passwords);
    let sessions = sessions(conn, person).await?;
    out.field("sessions", &sessions);
    out.flush().await;
    mail_deliveries(conn, email, out).await?;
    access_records(conn, person, out).await?;
    let away = away_days(conn, person).await?;
    out.field("awayDays", &away);
    Ok(())
}

type ProfileRow = (
    String,
    String,
    Option<String>,
    bool,
    Option<DateTime<Utc>>,
    Option<String>,
    Option<String>,
    DateTime<Utc>,
    Option<DateTime<Utc>>,
    String,
);

/// The snapshot's instant and the person's account.
async fn profile(conn: &mut Conn, person: i64) -> QueryResult<Option<(DateTime<Utc>, ExportProfile)>> {
    #[derive(QueryableByName)]
    struct Now {
        #[diesel(sql_type = Timestamptz)]
        at: DateTime<Utc>,
    }
    let row: Option<ProfileRow> = staff_user::table
        .find(person)
        .select((
            staff_user::username,
            staff_user::display_name,
            staff_user::email,
            staff_user::is_admin,
            staff_user::disabled_at,
            staff_user::language,
            staff_user::time_zone,
            staff_user::created_at,
            staff_user::last_sign_in_at,
            staff_user::source,
        ))
        .first(conn)
        .await
        .optional()?;
    let Some((username, display_name, email, admin, disabled_at, language, time_zone, created_at, last, source)) = row
    else {
        return Ok(None);
    };
    let now: Now = diesel::sql_query("SELECT now() AS at").cached().get_result(conn).await?;
    Ok(Some((
        now.at,
        ExportProfile {
            username,
            display_name,
            email,
            admin,
            disabled: disabled_at.is_some(),
            disabled_at,
            language,
            time_zone,
            created_at,
            last_sign_in_at: last,
            source,
        },
    )))
}

async fn identities(conn: &mut Conn, person: i64) -> QueryResult<Vec<ExportIdentity>> {
    staff_identity::table
        .filter(staff_identity::user_id.eq(person))
        .order(staff_identity::created_at)
        .select((staff_identity::issuer, staff_identity::subject, staff_identity::created_at))
        .load(conn)
        .await
}

/// A booking's own row, as a page reads it.
#[derive(QueryableByName)]
struct BookingRow {
    #[diesel(sql_type = Int8)]
    id: i64,
    #[diesel(sql_type = Text)]
    title: String,
    #[diesel(sql_type = Text)]
    organizer_name: String,
    #[diesel(sql_type = Bool)]
    organized: bool,
    #[diesel(sql_type = Nullable<Text>)]
    booked_by: Option<String>,
    #[diesel(sql_type = Timestamptz)]
    starts_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    ends_at: DateTime<Utc>,
    #[diesel(sql_type = Text)]
    status: Status,
    #[diesel(sql_type = Bool)]
    private: bool,
    #[diesel(sql_type = Nullable<Int8>)]
    series_id: Option<i64>,
    #[diesel(sql_type = Timestamptz)]
    created_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    cancelled_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    checked_in_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    released_at: Option<DateTime<Utc>>,
}

/// The next page of a person's bookings after (`$2`, `$3`) in (start, id)
/// order: those they organize and those they made for someone, each side
/// read by its own index (`reservation_staff_idx`,
/// `reservation_booked_by_idx`) and merged.
const BOOKINGS_PAGE: &str = "
SELECT r.id, r.title, r.organizer_name, r.organizer_staff_id IS NOT DISTINCT FROM $1 AS organized,
       (SELECT s.username FROM staff_user s WHERE s.id = r.booked_by) AS booked_by,
       r.starts_at, r.ends_at, r.status, r.private, r.series_id, r.created_at,
       r.cancelled_at, r.checked_in_at, r.released_at
  FROM reservation r
 WHERE r.id IN ((SELECT o.id FROM reservation o
                  WHERE o.organizer_staff_id = $1 AND (o.starts_at, o.id) > ($2, $3)
                  ORDER BY o.starts_at, o.id LIMIT $4)
                UNION
                (SELECT b.id FROM reservation b
                  WHERE b.booked_by = $1 AND (b.starts_at, b.id) > ($2, $3)
                  ORDER BY b.starts_at, b.id LIMIT $4))
 ORDER BY r.starts_at, r.id
 LIMIT $4";

/// Before every booking: the keyset's first mark.
fn beginning() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(1, 1, 1, 0, 0, 0).single().expect("a valid instant")
}

/// `"bookings":[…]`, a page at a time: per page one statement for the
/// bookings, one for their rooms and one for their history.
async fn bookings(conn: &mut Conn, person: i64, out: &mut Out) -> Result<(), DbError> {
    let key = |b: &ExportBookingEntry| (b.starts_at, b.id);
    out.keyset("bookings", (beginning(), 0i64), key, async |after| {
        let page: Vec<BookingRow> = diesel::sql_query(BOOKINGS_PAGE)
            .bind::<Int8, _>(person)
            .bind::<Timestamptz, _>(after.0)
            .bind::<Int8, _>(after.1)
            .bind::<Int8, _>(PAGE)
            .cached()
            .load(conn)
            .await?;
        let ids: Vec<i64> = page.iter().map(|b| b.id).collect();
        let mut rooms = rooms_of(conn, &ids).await?;
        let mut history = history_of(conn, &ids).await?;
        Ok(page
            .into_iter()
            .map(|b| ExportBookingEntry {
                id: b.id,
                title: b.title,
                organizer: b.organizer_name,
                organized: b.organized,
                booked_by: b.booked_by,
                rooms: rooms.remove(&b.id).unwrap_or_default(),
                starts_at: b.starts_at,
                ends_at: b.ends_at,
                status: b.status,
                private: b.private,
                series_id: b.series_id,
                created_at: b.created_at,
                cancelled_at: b.cancelled_at,
                checked_in_at: b.checked_in_at,
                released_at: b.released_at,
                history: history.remove(&b.id).unwrap_or_default(),
            })
            .collect())
    })
    .await
}

/// The rooms of a page of bookings, in each booking's room order.
async fn rooms_of(conn: &mut Conn, ids: &[i64]) -> QueryResult<BTreeMap<i64, Vec<String>>> {
    #[derive(QueryableByName)]
    struct RoomRow {
        #[diesel(sql_type = Int8)]
        reservation_id: i64,
        #[diesel(sql_type = Text)]
        room: String,
    }
    let rows: Vec<RoomRow> = diesel::sql_query(
        "SELECT rr.reservation_id, rr.room
           FROM reservation_room rr LEFT JOIN room rm ON rm.code = rr.room
          WHERE rr.reservation_id = ANY($1)
          ORDER BY rr.reservation_id, rm.position, rr.room",
    )
    .bind::<Array<Int8>, _>(ids)
    .cached()
    .load(conn)
    .await?;
    let mut by_booking: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for r in rows {
        by_booking.entry(r.reservation_id).or_default().push(r.room);
    }
    Ok(by_booking)
}

type EventRow = (i64, DateTime<Utc>, String, String, Option<String>, Value);

/// The history of a page of bookings, each oldest first.
async fn history_of(conn: &mut Conn, ids: &[i64]) -> QueryResult<BTreeMap<i64, Vec<ExportHistoryEntry>>> {
    let rows: Vec<EventRow> = booking_event::table
        .filter(booking_event::reservation_id.eq_any(ids))
        .order((booking_event::reservation_id, booking_event::id))
        .select((
            booking_event::reservation_id,
            booking_event::at,
            booking_event::action,
            booking_event::actor,
            booking_event::actor_for,
            booking_event::changes,
        ))
        .load(conn)
        .await?;
    let mut by_booking: BTreeMap<i64, Vec<ExportHistoryEntry>> = BTreeMap::new();
    for (id, at, action, actor, actor_for, changes) in rows {
        by_booking.entry(id).or_default().push(ExportHistoryEntry { at, action, actor, actor_for, changes });
    }
    Ok(by_booking)
}

/// `"series":[…]` in pages by id.
async fn series(conn: &mut Conn, person: i64, out: &mut Out) -> Result<(), DbError> {
    out.keyset(
        "series",
        0i64,
        |s: &ExportSeriesEntry| s.id,
        async |after| {
            Ok(diesel::sql_query(
                "SELECT s.id, s.title, s.organizer_name, s.organizer_staff_id IS NOT DISTINCT FROM $1 AS organized,
                    (SELECT u.username FROM staff_user u WHERE u.id = s.booked_by) AS booked_by,
                    s.rooms, s.recurrence, s.starts_at, s.ends_at, s.timezone, s.private, s.created_at,
                    s.struck_at, s.restored_at
               FROM booking_series s
              WHERE (s.organizer_staff_id = $1 OR s.booked_by = $1) AND s.id > $2
              ORDER BY s.id
              LIMIT $3",
            )
            .bind::<Int8, _>(person)
            .bind::<Int8, _>(after)
            .bind::<Int8, _>(PAGE)
            .cached()
            .load(conn)
            .await?)
        },
    )
    .await
}

async fn delegations(conn: &mut Conn, person: i64) -> QueryResult<ExportDelegations> {
    let delegates = delegation::table
        .inner_join(staff_user::table.on(staff_user::id.eq(delegation::delegate)))
        .filter(delegation::person.eq(person))
        .order(staff_user::username)
        .select((staff_user::username, staff_user::display_name, delegation::created_at))
        .load(conn)
        .await?;
    let delegate_for = delegation::table
        .inner_join(staff_user::table.on(staff_user::id.eq(delegation::person)))
        .filter(delegation::delegate.eq(person))
        .order(staff_user::username)
        .select((staff_user::username, staff_user::display_name, delegation::created_at))
        .load(conn)
        .await?;
    Ok(ExportDelegations { delegates, delegate_for })
}

async fn app_passwords(conn: &mut Conn, person: i64) -> QueryResult<Vec<ExportAppPassword>> {
    app_password::table
        .filter(app_password::staff_id.eq(person))
        .order(app_password::id)
        .select((app_password::label, app_password::created_at, app_password::last_used_at, app_password::revoked_at))
        .load(conn)
        .await
}

async fn sessions(conn: &mut Conn, person: i64) -> QueryResult<Vec<ExportSession>> {
    staff_session::table
        .filter(staff_session::user_id.eq(person))
        .order(staff_session::created_at)
        .select((staff_session::created_at, staff_session::expires_at))
        .load(conn)
        .await
}

/// `"mailDeliveries":[…]`: the outbox's mail rows addressed to `email`
/// (every mail payload names its recipient as `to`: booking notices, reminders,
/// iMIP messages), in pages by (created, delivery id). Nothing without an
/// email; mail to an address they no longer have is not theirs to find.
async fn mail_deliveries(conn: &mut Conn, email: Option<&str>, out: &mut Out) -> Result<(), DbError> {
    let key = |m: &ExportMailDelivery| (m.created_at, m.delivery_id.clone());
    out.keyset("mailDeliveries", (beginning(), String::new()), key, async |after| {
        let Some(email) = email else { return Ok(Vec::new()) };
        Ok(diesel::sql_query(
            "SELECT delivery_id, kind, status, created_at, delivered_at
               FROM notification_outbox
              WHERE channel = 'mail' AND lower(payload ->> 'to') = lower($1)
                AND (created_at, delivery_id) > ($2, $3)
              ORDER BY created_at, delivery_id
              LIMIT $4",
        )
        .bind::<Text, _>(email)
        .bind::<Timestamptz, _>(after.0)
        .bind::<Text, _>(after.1)
        .bind::<Int8, _>(PAGE)
        .cached()
        .load(conn)
        .await?)
    })
    .await
}

/// `"accessRecords":[…]` about them, in pages by id; who looked and from
/// where are not read at all.
async fn access_records(conn: &mut Conn, person: i64, out: &mut Out) -> Result<(), DbError> {
    out.keyset(
        "accessRecords",
        0i64,
        |r: &ExportAccessRecord| r.id,
        async |after| {
            Ok(diesel::sql_query(
                "SELECT id, at, kind, people FROM access_record WHERE subject = $1 AND id > $2 ORDER BY id LIMIT $3",
            )
            .bind::<Int8, _>(person)
            .bind::<Int8, _>(after)
            .bind::<Int8, _>(PAGE)
            .cached()
            .load(conn)
            .await?)
        },
    )
    .await
}

async fn away_days(conn: &mut Conn, person: i64) -> QueryResult<Vec<ExportAwaySpan>> {
    staff_away::table
        .filter(staff_away::staff_id.eq(person))
        .order((staff_away::from_date, staff_away::to_date))
        .select((staff_away::from_date, staff_away::to_date, staff_away::created_at))
        .load(conn)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_make_one_json_document() {
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        let mut out = Out { tx, buf: b"{\"a\":1".to_vec() };
        out.open_array("list");
        let mut first = true;
        for v in [1, 2, 3] {
            out.item(&mut first, &v);
        }
        out.raw("]");
        out.open_array("empty");
        out.raw("]");
        out.field("x", &serde_json::json!({"y": "\"quoted\""}));
        out.buf.push(b'}');
        let doc: Value = serde_json::from_slice(&out.buf).unwrap();
        assert_eq!(doc, serde_json::json!({"a": 1, "list": [1, 2, 3], "empty": [], "x": {"y": "\"quoted\""}}));
    }
}
