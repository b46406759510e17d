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

use super::store::Scope;
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
    /// Bookings with a change since the token (their series, if any,
    /// is the member that changed).
    pub bookings: Vec<(i64, Option<i64>)>,
    /// UIDs of the person's stored objects that changed.
    pub objects: Vec<String>,
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
    #[diesel(sql_type = Array<Text>)]
    uids: Vec<String>,
}

/// One statement: the changes since `token` and the next token. `None`
/// when the token is not one this collection could have handed out.
pub async fn since(conn: &mut Conn, scope: &Scope, token: Token) -> QueryResult<Option<Since>> {
    let row: Changed = diesel::sql_query(
        "WITH changed AS (
           SELECT c.reservation_id, c.object_uid FROM calendar_feed_change c WHERE c.feed = $1 AND c.version > $2)
         SELECT coalesce((SELECT version FROM calendar_feed_version WHERE feed = $1), 0) AS version,
                ARRAY(SELECT r.id FROM reservation r WHERE r.id IN (SELECT reservation_id FROM changed) ORDER BY r.id) AS ids,
                ARRAY(SELECT r.series_id FROM reservation r WHERE r.id IN (SELECT reservation_id FROM changed) ORDER BY r.id) AS series,
                ARRAY(SELECT DISTINCT object_uid FROM changed WHERE object_uid IS NOT NULL ORDER BY 1) AS uids",
    )
    .bind::<Text, _>(counter_of(scope))
    .bind::<Int8, _>(token.0)
    .cached()
    .get_result(conn)
    .await?;
    if token.0 > row.version {
        return Ok(None);
    }
    Ok(Some(Since {
        bookings: row.ids.into_iter().zip(row.series).collect(),
        objects: row.uids,
        next: Token(row.version),
    }))
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
