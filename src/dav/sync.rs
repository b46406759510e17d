//! Sync tokens (RFC 6578) and CTags from the collections' change counters
//! (SPEC §23). Every change of a collection — a booking of the person or
//! the room (the trigger on the booking history), a stored calendar object
//! of the person (the trigger on `dav_event`) — bumps that collection's
//! counter in `calendar_feed_version` and leaves a row in
//! `calendar_feed_change` with the counter it took. A counter is bumped
//! under its row's lock, held to the end of the changing transaction, so a
//! collection's changes commit in counter order: a token `T` says "every
//! change up to `T` has been seen", and the next sync reports what came
//! after. A token waits on no transaction but those changing the same
//! collection — not on a long report, a backup or another database of the
//! same server, as tokens made from the server's oldest open transaction
//! did.
//!
//! An unchanged sync is one statement over the change index.

use diesel::prelude::*;
use diesel::sql_types::{Array, Int8, Nullable, Text};
use diesel_async::RunQueryDsl;

use super::store::{Scope, Target};
use crate::db::cached::CacheExt;
use crate::db::Conn;

const PREFIX: &str = "urn:yeyak:sync:";

/// A sync token as clients hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token(pub i64);

impl Token {
    pub fn parse(raw: &str) -> Option<Token> {
        raw.trim().strip_prefix(PREFIX)?.parse::<i64>().ok().filter(|n| *n >= 0).map(Token)
    }

    pub fn uri(self) -> String {
        format!("{PREFIX}{}", self.0)
    }
}

/// The counter a collection's changes bump (the feed keys of
/// `migrations/…_feed_versions`).
pub fn counter_of(scope: &Scope) -> String {
    match scope {
        Scope::Organizer { staff_id, .. } => format!("staff:{staff_id}"),
        Scope::Room(code) => format!("room:{code}"),
    }
}

#[derive(QueryableByName)]
struct Current {
    #[diesel(sql_type = Int8)]
    version: i64,
}

/// The collection's token now (also its CTag).
pub async fn current(conn: &mut Conn, scope: &Scope) -> QueryResult<Token> {
    let row: Current =
        diesel::sql_query("SELECT coalesce((SELECT version FROM calendar_feed_version WHERE feed = $1), 0) AS version")
            .bind::<Text, _>(counter_of(scope))
            .cached()
            .get_result(conn)
            .await?;
    Ok(Token(row.version))
}

/// What changed in a collection since a token, and the token after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Since {
    /// The members that changed or went, in member order: a booking, its
    /// series, or — in a person's collection — the stored object that
    /// booked it or was itself changed or deleted (SPEC §23).
    pub targets: Vec<Target>,
    pub next: Token,
}

#[derive(QueryableByName)]
struct Changed {
    #[diesel(sql_type = Int8)]
    version: i64,
    #[diesel(sql_type = Array<Int8>)]
    ids: Vec<i64>,
    #[diesel(sql_type = Array<Nullable<Int8>>)]
    series: Vec<Option<i64>>,
    #[diesel(sql_type = Array<Int8>)]
    objects: Vec<i64>,
}

/// One statement: the changes since `token` and the next token. `None`
/// when the token is not one this collection could have handed out.
pub async fn since(conn: &mut Conn, scope: &Scope, token: Token) -> QueryResult<Option<Since>> {
    let row: Changed = diesel::sql_query(
        "WITH changed AS (
           SELECT c.reservation_id, c.object_uid FROM calendar_feed_change c WHERE c.feed = $1 AND c.version > $2),
         touched AS (SELECT r.id, r.series_id FROM reservation r WHERE r.id IN (SELECT reservation_id FROM changed)),
         objects AS (
           SELECT o.id, o.reservation_id, o.series_id FROM dav_event o
            WHERE $3::int8 IS NOT NULL AND o.staff_id = $3 AND (o.body IS NOT NULL OR o.deleted_at IS NOT NULL)
              AND (o.uid IN (SELECT object_uid FROM changed WHERE object_uid IS NOT NULL)
                   OR o.reservation_id IN (SELECT id FROM touched)
                   OR o.series_id IN (SELECT series_id FROM touched)))
         SELECT coalesce((SELECT version FROM calendar_feed_version WHERE feed = $1), 0) AS version,
                ARRAY(SELECT t.id FROM touched t WHERE NOT EXISTS (
                        SELECT 1 FROM objects o WHERE o.reservation_id = t.id OR o.series_id = t.series_id)
                       ORDER BY t.id) AS ids,
                ARRAY(SELECT t.series_id FROM touched t WHERE NOT EXISTS (
                        SELECT 1 FROM objects o WHERE o.reservation_id = t.id OR o.series_id = t.series_id)
                       ORDER BY t.id) AS series,
                ARRAY(SELECT id FROM objects ORDER BY id) AS objects",
    )
    .bind::<Text, _>(counter_of(scope))
    .bind::<Int8, _>(token.0)
    .bind::<Nullable<Int8>, _>(scope.staff_id())
    .cached()
    .get_result(conn)
    .await?;
    if token.0 > row.version {
        return Ok(None);
    }
    let bookings =
        row.ids.into_iter().zip(row.series).map(|(id, series)| series.map_or(Target::Booking(id), Target::Series));
    let mut targets: Vec<Target> = bookings.chain(row.objects.into_iter().map(Target::Object)).collect();
    targets.sort_by_key(|t| match t {
        Target::Booking(id) => (0, *id),
        Target::Series(id) => (1, *id),
        Target::Object(id) => (2, *id),
    });
    targets.dedup();
    Ok(Some(Since { targets, next: Token(row.version) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_refuse_others() {
        assert_eq!(Token::parse(&Token(42).uri()), Some(Token(42)));
        for bad in ["", "42", "urn:yeyak:sync:", "urn:yeyak:sync:-1", "urn:yeyak:sync:x", "http://x/sync/1"] {
            assert_eq!(Token::parse(bad), None, "{bad}");
        }
    }
}
