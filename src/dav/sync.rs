//! Sync tokens (RFC 6578) and CTags from the booking history. Every change
//! of a booking writes a `booking_event` row in its own transaction, and
//! each row keeps that transaction's id (`txid`). A token `T` says: "every
//! change written by a transaction below `T` has been seen". It is never
//! above the snapshot's `xmin` (the oldest transaction still running), so a
//! change that commits late — a transaction that started first and ends
//! last — is below no token handed out before it was visible, and the next
//! sync reports it. No second bookkeeping path: whichever door changes a
//! booking, its history row is the change the collections report.
//!
//! An unchanged sync is one statement over the `txid` index: the changes
//! since `T` (none) and the snapshot's `xmin`.

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

/// Which history rows concern a collection: its organizer's bookings, or
/// those of a room (and those that left it: a change of rooms records the
/// rooms before).
const RELEVANT: &str = "($1::text IS NULL OR r.organizer_digest = $1)
    AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM reservation_room x WHERE x.reservation_id = r.id AND x.room = $2)
         OR e.changes -> 'rooms' -> 'before' ? $2)";

#[derive(QueryableByName)]
struct Current {
    #[diesel(sql_type = Int8)]
    xmin: i64,
    #[diesel(sql_type = Nullable<Int8>)]
    last: Option<i64>,
}

/// The collection's token now (also its CTag): below the last change it
/// saw, never above a transaction still running.
pub async fn current(conn: &mut Conn, scope: &Scope) -> QueryResult<Token> {
    let row: Current = diesel::sql_query(format!(
        "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::int8 AS xmin,
                (SELECT max(e.txid) FROM booking_event e JOIN reservation r ON r.id = e.reservation_id
                  WHERE {RELEVANT}) AS last"
    ))
    .bind::<Nullable<Text>, _>(scope_digest(scope))
    .bind::<Nullable<Text>, _>(scope_room(scope))
    .cached()
    .get_result(conn)
    .await?;
    Ok(Token(row.xmin.min(row.last.unwrap_or(0) + 1)))
}

/// What changed in a collection since a token, and the token after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Since {
    /// Bookings with a change since the token (their series, if any,
    /// is the member that changed).
    pub bookings: Vec<(i64, Option<i64>)>,
    pub next: Token,
}

#[derive(QueryableByName)]
struct Changed {
    #[diesel(sql_type = Int8)]
    xmin: i64,
    #[diesel(sql_type = Nullable<Int8>)]
    last: Option<i64>,
    #[diesel(sql_type = Array<Int8>)]
    ids: Vec<i64>,
    #[diesel(sql_type = Array<Nullable<Int8>>)]
    series: Vec<Option<i64>>,
}

/// One statement: the changes since `token` and the next token. `None`
/// when the token is not one this server could have handed out.
pub async fn since(conn: &mut Conn, scope: &Scope, token: Token) -> QueryResult<Option<Since>> {
    let row: Changed = diesel::sql_query(format!(
        "WITH changed AS (
           SELECT DISTINCT r.id, r.series_id, e.txid
             FROM booking_event e JOIN reservation r ON r.id = e.reservation_id
            WHERE e.txid >= $3 AND {RELEVANT})
         SELECT pg_snapshot_xmin(pg_current_snapshot())::text::int8 AS xmin,
                (SELECT max(txid) FROM changed) AS last,
                ARRAY(SELECT DISTINCT id FROM changed ORDER BY id) AS ids,
                ARRAY(SELECT s FROM (SELECT DISTINCT id, series_id AS s FROM changed) d ORDER BY id) AS series"
    ))
    .bind::<Nullable<Text>, _>(scope_digest(scope))
    .bind::<Nullable<Text>, _>(scope_room(scope))
    .bind::<Int8, _>(token.0)
    .cached()
    .get_result(conn)
    .await?;
    if token.0 > row.xmin {
        return Ok(None);
    }
    let next = match row.last {
        None => token,
        Some(last) => Token(row.xmin.min(last + 1).max(token.0)),
    };
    Ok(Some(Since { bookings: row.ids.into_iter().zip(row.series).collect(), next }))
}

fn scope_digest(scope: &Scope) -> Option<&str> {
    match scope {
        Scope::Organizer { digest, .. } => Some(digest),
        Scope::Room(_) => None,
    }
}

fn scope_room(scope: &Scope) -> Option<&str> {
    match scope {
        Scope::Room(code) => Some(code),
        Scope::Organizer { .. } => None,
    }
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
