//! SQL of the idempotency record. `acquire` and `finalize` are the two halves
//! of a claim; they run inside the caller's transaction.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Bool, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use uuid::Uuid;

use super::{Fingerprint, Scope, StoredResponse};
use crate::db::cached::CacheExt;
use crate::db::schema::idempotency_record as rec;
use crate::db::Conn;

/// What a request finds when it claims its scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquired {
    /// First time: execute, then finalize with this token.
    New { token: Uuid },
    /// Completed before with the same fingerprint: answer what was stored.
    Replay(StoredResponse),
    /// Same scope, different request: execute nothing.
    FingerprintConflict,
    /// Another owner's lease is live: execute nothing, retry after this many seconds.
    InProgress { retry_after_secs: u32 },
    /// The previous owner's lease expired: the claim is now ours (CAS on the token).
    Takeover { token: Uuid, previous: Uuid },
}

#[derive(Queryable)]
struct Existing {
    fingerprint: String,
    state: String,
    owner_token: Uuid,
    lease_expires_at: DateTime<Utc>,
    response_status: Option<i16>,
    response_body: Option<String>,
}

/// The scope's transaction-level advisory lock, tried without waiting (a
/// concurrent duplicate is answered at once instead of queueing behind the
/// first; two scopes sharing a 64-bit hash only cost a spurious retry), and,
/// only if it was granted, the claim's INSERT: one statement, one round trip.
/// The primary key decides the race between two first-timers.
const CLAIM: &str = "
WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked),
     claim AS (
       INSERT INTO idempotency_record
              (tenant, operation, idempotency_key, fingerprint, state, owner_token, lease_expires_at, created_at)
       SELECT $2, $3, $4, $5, 'IN_PROGRESS', $6, $7, $8 FROM lock WHERE locked
       ON CONFLICT DO NOTHING
       RETURNING 1)
SELECT (SELECT locked FROM lock) AS locked, EXISTS (SELECT 1 FROM claim) AS inserted";

#[derive(QueryableByName)]
struct Claimed {
    #[diesel(sql_type = Bool)]
    locked: bool,
    #[diesel(sql_type = Bool)]
    inserted: bool,
}

/// Claims `scope` for `fingerprint` at `now` with a lease of `lease`.
pub async fn acquire(
    conn: &mut Conn,
    scope: &Scope,
    fingerprint: &Fingerprint,
    now: DateTime<Utc>,
    lease: Duration,
) -> QueryResult<Acquired> {
    let token = Uuid::new_v4();
    let claimed: Claimed = diesel::sql_query(CLAIM)
        .bind::<Text, _>(scope.lock_text())
        .bind::<Text, _>(scope.tenant.as_str())
        .bind::<Text, _>(scope.operation)
        .bind::<Text, _>(scope.key.as_str())
        .bind::<Text, _>(fingerprint.as_str())
        .bind::<diesel::sql_types::Uuid, _>(token)
        .bind::<Timestamptz, _>(now + lease)
        .bind::<Timestamptz, _>(now)
        .cached()
        .get_result(conn)
        .await?;
    if !claimed.locked {
        return Ok(Acquired::InProgress { retry_after_secs: 1 });
    }
    if claimed.inserted {
        return Ok(Acquired::New { token });
    }

    let existing: Existing = rec::table
        .find((scope.tenant.as_str(), scope.operation, scope.key.as_str()))
        .select((
            rec::fingerprint,
            rec::state,
            rec::owner_token,
            rec::lease_expires_at,
            rec::response_status,
            rec::response_body,
        ))
        .for_update()
        .first(conn)
        .await?;

    if existing.fingerprint != fingerprint.as_str() {
        return Ok(Acquired::FingerprintConflict);
    }
    if existing.state == "COMPLETED" {
        let (Some(status), Some(body)) = (existing.response_status, existing.response_body) else {
            // The table's CHECK makes this unrepresentable.
            return Err(diesel::result::Error::NotFound);
        };
        return Ok(Acquired::Replay(StoredResponse { status: status as u16, body }));
    }
    if existing.lease_expires_at > now {
        let left = (existing.lease_expires_at - now).num_seconds().max(0) + 1;
        return Ok(Acquired::InProgress { retry_after_secs: left.min(i64::from(u32::MAX)) as u32 });
    }
    let swapped = diesel::update(
        rec::table
            .find((scope.tenant.as_str(), scope.operation, scope.key.as_str()))
            .filter(rec::owner_token.eq(existing.owner_token))
            .filter(rec::state.eq("IN_PROGRESS")),
    )
    .set((rec::owner_token.eq(token), rec::lease_expires_at.eq(now + lease)))
    .cached()
    .execute(conn)
    .await?;
    if swapped == 1 {
        Ok(Acquired::Takeover { token, previous: existing.owner_token })
    } else {
        Ok(Acquired::InProgress { retry_after_secs: 1 })
    }
}

/// Stores the response, only if `token` still owns the claim. A stale owner
/// returning after a takeover gets `false` and changes nothing.
pub async fn finalize(
    conn: &mut Conn,
    scope: &Scope,
    token: Uuid,
    response: &StoredResponse,
    now: DateTime<Utc>,
) -> QueryResult<bool> {
    let updated = diesel::update(
        rec::table
            .find((scope.tenant.as_str(), scope.operation, scope.key.as_str()))
            .filter(rec::owner_token.eq(token))
            .filter(rec::state.eq("IN_PROGRESS")),
    )
    .set((
        rec::state.eq("COMPLETED"),
        rec::response_status.eq(response.status as i16),
        rec::response_body.eq(&response.body),
        rec::completed_at.eq(now),
    ))
    .cached()
    .execute(conn)
    .await?;
    Ok(updated == 1)
}

/// Drops an unfinished claim that `token` still owns (its work failed before
/// anything was stored), so that a retry runs at once instead of waiting out
/// the lease.
pub async fn release(conn: &mut Conn, scope: &Scope, token: Uuid) -> QueryResult<bool> {
    let deleted = diesel::delete(
        rec::table
            .find((scope.tenant.as_str(), scope.operation, scope.key.as_str()))
            .filter(rec::owner_token.eq(token))
            .filter(rec::state.eq("IN_PROGRESS")),
    )
    .execute(conn)
    .await?;
    Ok(deleted == 1)
}

/// Deletes up to `batch` records created before `cutoff` (completed ones, and
/// claims whose lease ran out too); returns how many went. Small batches keep
/// each delete short next to live traffic.
pub async fn purge_batch(conn: &mut Conn, cutoff: DateTime<Utc>, batch: i64) -> QueryResult<usize> {
    diesel::sql_query(
        "DELETE FROM idempotency_record WHERE ctid IN (
             SELECT ctid FROM idempotency_record
              WHERE created_at < $1 AND (state = 'COMPLETED' OR lease_expires_at < $1)
              ORDER BY created_at LIMIT $2)",
    )
    .bind::<diesel::sql_types::Timestamptz, _>(cutoff)
    .bind::<diesel::sql_types::BigInt, _>(batch)
    .cached()
    .execute(conn)
    .await
}
