//! Holds: HELD → CONFIRMED | CANCELLED | EXPIRED (SPEC §3).

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Double, Int4, Int8, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use serde_json::json;

use super::domain::{ExtendBy, Hold, UnitsAsk};
use super::{check_policy, check_revision, handoff, invalid_state, owner_mismatch, resources};
use crate::auth::OwnerDigest;
use crate::command::CommandError;
use crate::db::cached::CacheExt;
use crate::db::schema::capacity_hold as hold;
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};

#[derive(QueryableByName)]
struct Occupied {
    #[diesel(sql_type = Int4)]
    policy_version: i32,
}

/// Takes units with ONE conditional UPDATE (seed 000 §마지막 한 자리): the
/// database decides; zero rows is a rejection, never an exception. A WAITING
/// entry blocks new holds so that nobody passes the queue.
pub async fn create(
    conn: &mut Conn,
    resource_id: i64,
    owner: &OwnerDigest,
    ask: UnitsAsk,
    now: DateTime<Utc>,
    ttl: Duration,
) -> Result<Hold, CommandError> {
    let occupied: Option<Occupied> = diesel::sql_query(
        "UPDATE capacity_resource
            SET occupied_count = occupied_count + $2, revision = revision + 1, updated_at = $5
          WHERE id = $1 AND state = 'OPEN' AND waiting_count = 0
            AND occupied_count + $2 <= capacity
            AND ($3::int8 IS NULL OR revision = $3)
            AND ($4::int4 IS NULL OR policy_version = $4)
      RETURNING policy_version",
    )
    .bind::<Int8, _>(resource_id)
    .bind::<Int4, _>(ask.quantity.get())
    .bind::<Nullable<Int8>, _>(ask.expected_resource_revision)
    .bind::<Nullable<Int4>, _>(ask.policy_version)
    .bind::<Timestamptz, _>(now)
    .cached()
    .get_result(conn)
    .await
    .optional()?;
    let Some(Occupied { policy_version }) = occupied else {
        return Err(why_not_occupied(conn, resource_id, ask).await?.into());
    };
    let created = diesel::insert_into(hold::table)
        .values((
            hold::resource_id.eq(resource_id),
            hold::owner_digest.eq(owner.as_str()),
            hold::state.eq("HELD"),
            hold::quantity.eq(ask.quantity.get()),
            hold::policy_version.eq(policy_version),
            hold::expires_at.eq(now + ttl),
            hold::created_at.eq(now),
            hold::updated_at.eq(now),
        ))
        .returning(Hold::as_returning())
        .get_result(conn)
        .await?;
    Ok(created)
}

/// Names the reason a conditional UPDATE matched no row. The decision was
/// already made by the UPDATE; this read only words the answer.
async fn why_not_occupied(conn: &mut Conn, resource_id: i64, ask: UnitsAsk) -> Result<ApiError, CommandError> {
    let Some(r) = resources::find(conn, resource_id).await? else {
        return Ok(ApiError::not_found("resource"));
    };
    if r.state != "OPEN" {
        return Ok(ApiError::new(ErrorCode::ResourceClosed, "the resource is closed"));
    }
    if let Err(e) = check_policy(ask.policy_version, r.policy_version) {
        return Ok(e);
    }
    Ok(ApiError::new(ErrorCode::CapacityExhaustedOrStale, "no units are available at this revision")
        .with_details(json!({
            "requested": ask.quantity.get(),
            "available": r.capacity - r.occupied_count,
            "waiting": r.waiting_count,
            "expectedResourceRevision": ask.expected_resource_revision,
        }))
        .with_current_revision(r.revision))
}

pub async fn find(conn: &mut Conn, id: i64) -> QueryResult<Option<Hold>> {
    hold::table.find(id).select(Hold::as_select()).first(conn).await.optional()
}

/// Locks a hold and checks that `owner` owns it.
async fn lock_owned(conn: &mut Conn, id: i64, owner: &OwnerDigest) -> Result<Hold, CommandError> {
    let h: Hold = hold::table
        .find(id)
        .select(Hold::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| ApiError::not_found("hold"))?;
    if h.owner_digest != owner.as_str() {
        return Err(owner_mismatch().into());
    }
    Ok(h)
}

fn check_not_expired(h: &Hold, now: DateTime<Utc>) -> Result<(), ApiError> {
    match h.expires_at {
        Some(at) if h.state == "HELD" && at <= now => {
            Err(ApiError::new(ErrorCode::HoldExpired, "the hold has expired").with_details(json!({ "expiresAt": at })))
        }
        _ => Ok(()),
    }
}

async fn set_state(conn: &mut Conn, id: i64, state: &str, now: DateTime<Utc>) -> QueryResult<Hold> {
    diesel::update(hold::table.find(id))
        .set((hold::state.eq(state), hold::revision.eq(hold::revision + 1), hold::updated_at.eq(now)))
        .returning(Hold::as_returning())
        .cached()
        .get_result(conn)
        .await
}

/// HELD → CONFIRMED. Only the hold row is locked: confirming moves no units.
pub async fn confirm(
    conn: &mut Conn,
    id: i64,
    owner: &OwnerDigest,
    expected_revision: Option<i64>,
    policy_version: Option<i32>,
    now: DateTime<Utc>,
) -> Result<Hold, CommandError> {
    let h = lock_owned(conn, id, owner).await?;
    if h.state != "HELD" {
        return Err(invalid_state(&h.state).into());
    }
    check_revision(expected_revision, h.revision)?;
    if policy_version.is_some() {
        let r = resources::find(conn, h.resource_id).await?.ok_or_else(|| ApiError::not_found("resource"))?;
        check_policy(policy_version, r.policy_version)?;
    }
    check_not_expired(&h, now)?;
    Ok(set_state(conn, id, "CONFIRMED", now).await?)
}

/// HELD or CONFIRMED → CANCELLED, then the units go to the next waiter or
/// back to the resource (promote-or-release).
pub async fn cancel(
    conn: &mut Conn,
    id: i64,
    owner: &OwnerDigest,
    expected_revision: Option<i64>,
    policy_version: Option<i32>,
    now: DateTime<Utc>,
    offer_ttl: Duration,
) -> Result<Hold, CommandError> {
    let resource_id = hold::table
        .find(id)
        .select(hold::resource_id)
        .first::<i64>(conn)
        .await
        .optional()?
        .ok_or_else(|| ApiError::not_found("hold"))?;
    let resource = resources::lock(conn, resource_id).await?;
    let h = lock_owned(conn, id, owner).await?;
    if h.state != "HELD" && h.state != "CONFIRMED" {
        return Err(invalid_state(&h.state).into());
    }
    check_revision(expected_revision, h.revision)?;
    check_policy(policy_version, resource.policy_version)?;
    check_not_expired(&h, now)?;
    let cancelled = set_state(conn, id, "CANCELLED", now).await?;
    handoff::promote_or_release(conn, &resource, h.quantity, now, offer_ttl).await?;
    Ok(cancelled)
}

/// Pushes a HELD hold's expiry later with ONE conditional UPDATE: owner,
/// state, expiry, revision and the lifetime cap (`created_at + max_lifetime`,
/// SPEC §13) are all decided in its WHERE; zero rows is a refusal, worded
/// afterwards from the row as it is.
pub async fn extend(
    conn: &mut Conn,
    id: i64,
    owner: &OwnerDigest,
    expected_revision: Option<i64>,
    by: ExtendBy,
    max_lifetime: Duration,
    now: DateTime<Utc>,
) -> Result<Hold, CommandError> {
    let extended: Option<Hold> = diesel::sql_query(
        "UPDATE capacity_hold
            SET expires_at = expires_at + make_interval(secs => $2), revision = revision + 1, updated_at = $3
          WHERE id = $1 AND owner_digest = $4 AND state = 'HELD' AND expires_at > $3
            AND ($5::int8 IS NULL OR revision = $5)
            AND expires_at + make_interval(secs => $2) <= created_at + make_interval(secs => $6)
      RETURNING id, resource_id, state, quantity, revision, policy_version, expires_at, owner_digest",
    )
    .bind::<Int8, _>(id)
    .bind::<Double, _>(by.seconds() as f64)
    .bind::<Timestamptz, _>(now)
    .bind::<Text, _>(owner.as_str())
    .bind::<Nullable<Int8>, _>(expected_revision)
    .bind::<Double, _>(max_lifetime.num_seconds() as f64)
    .cached()
    .get_result(conn)
    .await
    .optional()?;
    match extended {
        Some(h) => Ok(h),
        None => Err(why_not_extended(conn, id, owner, expected_revision, by, max_lifetime, now).await?.into()),
    }
}

/// Names the reason an extend matched no row, in the order the checks of
/// the other transitions use; only the lifetime cap is left at the end.
async fn why_not_extended(
    conn: &mut Conn,
    id: i64,
    owner: &OwnerDigest,
    expected_revision: Option<i64>,
    by: ExtendBy,
    max_lifetime: Duration,
    now: DateTime<Utc>,
) -> Result<ApiError, CommandError> {
    let found: Option<(Hold, DateTime<Utc>)> =
        hold::table.find(id).select((Hold::as_select(), hold::created_at)).first(conn).await.optional()?;
    let Some((h, created_at)) = found else {
        return Ok(ApiError::not_found("hold"));
    };
    if h.owner_digest != owner.as_str() {
        return Ok(owner_mismatch());
    }
    if h.state != "HELD" {
        return Ok(invalid_state(&h.state));
    }
    if let Err(e) = check_revision(expected_revision, h.revision) {
        return Ok(e);
    }
    if let Err(e) = check_not_expired(&h, now) {
        return Ok(e);
    }
    let limit = created_at + max_lifetime;
    Ok(ApiError::new(ErrorCode::HoldLifetimeExceeded, "a hold cannot live longer than its maximum lifetime")
        .with_details(json!({
            "createdAt": created_at,
            "expiresAt": h.expires_at,
            "extendBySeconds": by.seconds(),
            "maxLifetimeSeconds": max_lifetime.num_seconds(),
            "latestExpiresAt": limit,
        })))
}
