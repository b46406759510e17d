//! Waitlist entries (WAITING → OFFERED → ACCEPTED | DECLINED | EXPIRED |
//! CANCELLED) and offers (ACTIVE → ACCEPTED | DECLINED | EXPIRED), SPEC §3;
//! an admin's eviction (§13) ends them in those states too.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Int4, Int8, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use serde_json::json;

use super::domain::{Entry, Offer, ResourceRow, UnitsAsk};
use super::{check_policy, check_revision, handoff, invalid_state, owner_mismatch, resources, stale_revision};
use crate::auth::OwnerDigest;
use crate::command::CommandError;
use crate::db::cached::CacheExt;
use crate::db::schema::{
    capacity_hold as hold, capacity_offer as offer, capacity_resource as res, waitlist_entry as entry,
};
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};
use crate::outbox::{self, Intent};

#[derive(QueryableByName)]
struct Sequenced {
    #[diesel(sql_type = Int8)]
    last_sequence: i64,
    #[diesel(sql_type = Int4)]
    policy_version: i32,
}

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = Int8)]
    id: i64,
}

/// Joins the line: one conditional UPDATE hands out the next FIFO sequence,
/// only for a quantity the resource can ever hold and only while the units
/// asked for are not free (or others already wait). The entry's INSERT is
/// judged by the one-live-entry index (`ON CONFLICT … DO NOTHING`): when the
/// owner already waits, the refusal rolls the sequence back with the
/// command's savepoint and names the entry that waits.
pub async fn join(
    conn: &mut Conn,
    resource_id: i64,
    owner: &OwnerDigest,
    ask: UnitsAsk,
    now: DateTime<Utc>,
) -> Result<Entry, CommandError> {
    let sequenced: Option<Sequenced> = diesel::sql_query(
        "UPDATE capacity_resource
            SET last_sequence = last_sequence + 1, waiting_count = waiting_count + 1, updated_at = $5
          WHERE id = $1 AND state = 'OPEN' AND $2 <= capacity
            AND (occupied_count + $2 > capacity OR waiting_count > 0)
            AND ($3::int8 IS NULL OR revision = $3)
            AND ($4::int4 IS NULL OR policy_version = $4)
      RETURNING last_sequence, policy_version",
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
    let Some(Sequenced { last_sequence, policy_version }) = sequenced else {
        return Err(why_not_joined(conn, resource_id, ask).await?);
    };
    let inserted: Option<Id> = diesel::sql_query(
        "INSERT INTO waitlist_entry
                (resource_id, owner_digest, sequence, state, quantity, policy_version, created_at, updated_at)
         VALUES ($1, $2, $3, 'WAITING', $4, $5, $6, $6)
         ON CONFLICT (resource_id, owner_digest) WHERE state IN ('WAITING', 'OFFERED') DO NOTHING
      RETURNING id",
    )
    .bind::<Int8, _>(resource_id)
    .bind::<Text, _>(owner.as_str())
    .bind::<Int8, _>(last_sequence)
    .bind::<Int4, _>(ask.quantity.get())
    .bind::<Int4, _>(policy_version)
    .bind::<Timestamptz, _>(now)
    .cached()
    .get_result(conn)
    .await
    .optional()?;
    let Some(Id { id }) = inserted else {
        // The conflicting entry is committed (ON CONFLICT waited for it).
        let existing: Option<i64> = entry::table
            .filter(entry::resource_id.eq(resource_id))
            .filter(entry::owner_digest.eq(owner.as_str()))
            .filter(entry::state.eq_any(vec!["WAITING", "OFFERED"]))
            .select(entry::id)
            .first(conn)
            .await
            .optional()?;
        return Err(ApiError::already_waiting(existing).into());
    };
    find_entry(conn, id).await?.ok_or_else(|| ApiError::internal().into())
}

/// Words why the join's UPDATE matched no row. A quantity above the capacity
/// can never be served: 400, and nothing (not even the claim) is stored.
async fn why_not_joined(conn: &mut Conn, resource_id: i64, ask: UnitsAsk) -> Result<CommandError, CommandError> {
    let Some(r) = resources::find(conn, resource_id).await? else {
        return Ok(ApiError::not_found("resource").into());
    };
    if ask.quantity.get() > r.capacity {
        return Ok(CommandError::Invalid(
            ApiError::new(ErrorCode::QuantityExceedsCapacity, "the quantity is more than the resource can ever hold")
                .with_details(json!({ "requested": ask.quantity.get(), "capacity": r.capacity })),
        ));
    }
    if r.state != "OPEN" {
        return Ok(ApiError::new(ErrorCode::ResourceClosed, "the resource is closed").into());
    }
    if let Err(e) = check_policy(ask.policy_version, r.policy_version) {
        return Ok(e.into());
    }
    if let Err(e) = check_revision(ask.expected_resource_revision, r.revision) {
        return Ok(e.into());
    }
    Ok(ApiError::new(ErrorCode::CapacityAvailable, "units are free: take a hold instead of waiting")
        .with_details(json!({ "available": r.capacity - r.occupied_count, "requested": ask.quantity.get() }))
        .with_current_revision(r.revision)
        .into())
}

#[derive(QueryableByName)]
struct EntryRow {
    #[diesel(sql_type = Int8)]
    id: i64,
    #[diesel(sql_type = Int8)]
    resource_id: i64,
    #[diesel(sql_type = diesel::sql_types::Text)]
    state: String,
    #[diesel(sql_type = Int8)]
    sequence: i64,
    #[diesel(sql_type = Int8)]
    revision: i64,
    #[diesel(sql_type = Nullable<Int8>)]
    position: Option<i64>,
    #[diesel(sql_type = Int4)]
    quantity: i32,
    #[diesel(sql_type = Nullable<Int8>)]
    offer_id: Option<i64>,
    #[diesel(sql_type = Nullable<Int8>)]
    offer_revision: Option<i64>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    offer_expires_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = diesel::sql_types::Text)]
    owner_digest: String,
}

/// An entry with its place in line and its offer, if any.
pub async fn find_entry(conn: &mut Conn, id: i64) -> QueryResult<Option<Entry>> {
    let row: Option<EntryRow> = diesel::sql_query(
        "SELECT e.id, e.resource_id, e.state, e.sequence, e.revision, e.quantity, e.owner_digest,
                CASE WHEN e.state = 'WAITING' THEN
                     (SELECT count(*) FROM waitlist_entry w
                       WHERE w.resource_id = e.resource_id AND w.state = 'WAITING' AND w.sequence <= e.sequence)
                END AS position,
                o.id AS offer_id, o.revision AS offer_revision, o.expires_at AS offer_expires_at
           FROM waitlist_entry e LEFT JOIN capacity_offer o ON o.entry_id = e.id
          WHERE e.id = $1",
    )
    .bind::<Int8, _>(id)
    .cached()
    .get_result(conn)
    .await
    .optional()?;
    Ok(row.map(|r| Entry {
        id: r.id,
        resource_id: r.resource_id,
        state: r.state,
        sequence: r.sequence,
        revision: r.revision,
        position: r.position,
        quantity: r.quantity,
        offer_id: r.offer_id,
        offer_revision: r.offer_revision,
        offer_expires_at: r.offer_expires_at,
        owner_digest: r.owner_digest,
    }))
}

/// Leaves the line (WAITING → CANCELLED). The new head may fit the free
/// units its predecessor did not, so the hand-off runs with nothing freed.
pub async fn leave(
    conn: &mut Conn,
    id: i64,
    owner: &OwnerDigest,
    expected_revision: Option<i64>,
    now: DateTime<Utc>,
    offer_ttl: Duration,
) -> Result<Entry, CommandError> {
    let (resource_id, owner_digest) = entry::table
        .find(id)
        .select((entry::resource_id, entry::owner_digest))
        .first::<(i64, String)>(conn)
        .await
        .optional()?
        .ok_or_else(|| ApiError::not_found("waitlist entry"))?;
    if owner_digest != owner.as_str() {
        return Err(owner_mismatch().into());
    }
    resources::lock(conn, resource_id).await?;
    let (state, revision) =
        entry::table.find(id).select((entry::state, entry::revision)).for_update().first::<(String, i64)>(conn).await?;
    if state != "WAITING" {
        return Err(invalid_state(&state).into());
    }
    check_revision(expected_revision, revision)?;
    diesel::update(entry::table.find(id))
        .set((entry::state.eq("CANCELLED"), entry::revision.eq(entry::revision + 1), entry::updated_at.eq(now)))
        .cached()
        .execute(conn)
        .await?;
    // The row as it now is, for the hand-off (still under our lock).
    let resource: ResourceRow = diesel::update(res::table.find(resource_id))
        .set(res::waiting_count.eq(res::waiting_count - 1))
        .returning(ResourceRow::as_returning())
        .cached()
        .get_result(conn)
        .await?;
    handoff::promote_or_release(conn, &resource, 0, now, offer_ttl).await?;
    find_entry(conn, id).await?.ok_or_else(|| ApiError::internal().into())
}

pub async fn find_offer(conn: &mut Conn, id: i64) -> QueryResult<Option<Offer>> {
    offer::table.find(id).select(Offer::as_select()).first(conn).await.optional()
}

/// Locks the resource, then the offer, and checks owner, state, expiry and
/// revision: knowing an offer's id is not enough to take it.
async fn lock_live_offer(
    conn: &mut Conn,
    id: i64,
    owner: &OwnerDigest,
    expected_revision: Option<i64>,
    now: DateTime<Utc>,
) -> Result<(Offer, ResourceRow), CommandError> {
    let resource_id = offer::table
        .find(id)
        .select(offer::resource_id)
        .first::<i64>(conn)
        .await
        .optional()?
        .ok_or_else(|| ApiError::not_found("offer"))?;
    let resource = resources::lock(conn, resource_id).await?;
    let o: Offer = offer::table.find(id).select(Offer::as_select()).for_update().first(conn).await?;
    if o.owner_digest != owner.as_str() {
        return Err(owner_mismatch().into());
    }
    if o.state != "ACTIVE" {
        return Err(invalid_state(&o.state).into());
    }
    if o.expires_at <= now {
        return Err(ApiError::new(ErrorCode::OfferExpired, "the offer has expired")
            .with_details(json!({ "expiresAt": o.expires_at }))
            .into());
    }
    if let Some(expected) = expected_revision {
        if expected != o.revision {
            return Err(stale_revision(expected, o.revision).into());
        }
    }
    Ok((o, resource))
}

async fn close_offer(
    conn: &mut Conn,
    o: &Offer,
    state: &str,
    hold_id: Option<i64>,
    now: DateTime<Utc>,
) -> QueryResult<Offer> {
    diesel::update(entry::table.find(o.entry_id))
        .set((entry::state.eq(state), entry::revision.eq(entry::revision + 1), entry::updated_at.eq(now)))
        .cached()
        .execute(conn)
        .await?;
    diesel::update(offer::table.find(o.id))
        .set((
            offer::state.eq(state),
            offer::hold_id.eq(hold_id),
            offer::revision.eq(offer::revision + 1),
            offer::updated_at.eq(now),
        ))
        .returning(Offer::as_returning())
        .cached()
        .get_result(conn)
        .await
}

/// ACTIVE → ACCEPTED: the units change owner into a CONFIRMED hold;
/// `occupied_count` stays as it is (they were never released).
pub async fn accept(
    conn: &mut Conn,
    id: i64,
    owner: &OwnerDigest,
    expected_revision: Option<i64>,
    now: DateTime<Utc>,
) -> Result<Offer, CommandError> {
    let (o, resource) = lock_live_offer(conn, id, owner, expected_revision, now).await?;
    let hold_id: i64 = diesel::insert_into(hold::table)
        .values((
            hold::resource_id.eq(o.resource_id),
            hold::owner_digest.eq(&o.owner_digest),
            hold::state.eq("CONFIRMED"),
            hold::quantity.eq(o.quantity),
            hold::policy_version.eq(resource.policy_version),
            hold::expires_at.eq(None::<DateTime<Utc>>),
            hold::created_at.eq(now),
            hold::updated_at.eq(now),
        ))
        .returning(hold::id)
        .get_result(conn)
        .await?;
    Ok(close_offer(conn, &o, "ACCEPTED", Some(hold_id), now).await?)
}

/// ACTIVE → DECLINED, then the units go to the next waiter or are released.
pub async fn decline(
    conn: &mut Conn,
    id: i64,
    owner: &OwnerDigest,
    expected_revision: Option<i64>,
    now: DateTime<Utc>,
    offer_ttl: Duration,
) -> Result<Offer, CommandError> {
    let (o, resource) = lock_live_offer(conn, id, owner, expected_revision, now).await?;
    let declined = close_offer(conn, &o, "DECLINED", None, now).await?;
    handoff::promote_or_release(conn, &resource, o.quantity, now, offer_ttl).await?;
    Ok(declined)
}

/// An admin's eviction (SPEC §13), in the state names of §3: a WAITING
/// entry leaves the line as CANCELLED (as when its owner leaves); an OFFERED
/// one and its live offer end EXPIRED (withdrawn before an answer), and the
/// offer's units (still counted in `occupied_count`) go to the next waiter or
/// back, in this transaction. The `waitlist.evicted` notice says who ended it.
pub async fn evict(
    conn: &mut Conn,
    id: i64,
    expected_revision: Option<i64>,
    now: DateTime<Utc>,
    offer_ttl: Duration,
) -> Result<Entry, CommandError> {
    let resource_id = entry::table
        .find(id)
        .select(entry::resource_id)
        .first::<i64>(conn)
        .await
        .optional()?
        .ok_or_else(|| ApiError::not_found("waitlist entry"))?;
    resources::lock(conn, resource_id).await?;
    let (state, revision) =
        entry::table.find(id).select((entry::state, entry::revision)).for_update().first::<(String, i64)>(conn).await?;
    if state != "WAITING" && state != "OFFERED" {
        return Err(invalid_state(&state).into());
    }
    check_revision(expected_revision, revision)?;
    let ended = if state == "WAITING" { "CANCELLED" } else { "EXPIRED" };
    diesel::update(entry::table.find(id))
        .set((entry::state.eq(ended), entry::revision.eq(entry::revision + 1), entry::updated_at.eq(now)))
        .execute(conn)
        .await?;
    // The offer of an OFFERED entry is withdrawn; its units are freed below.
    let withdrawn: Option<(i64, i32)> =
        diesel::update(offer::table.filter(offer::entry_id.eq(id)).filter(offer::state.eq("ACTIVE")))
            .set((offer::state.eq("EXPIRED"), offer::revision.eq(offer::revision + 1), offer::updated_at.eq(now)))
            .returning((offer::id, offer::quantity))
            .get_result(conn)
            .await
            .optional()?;
    let left_line = i32::from(state == "WAITING");
    let resource: ResourceRow = diesel::update(res::table.find(resource_id))
        .set(res::waiting_count.eq(res::waiting_count - left_line))
        .returning(ResourceRow::as_returning())
        .get_result(conn)
        .await?;
    let freed = withdrawn.map_or(0, |(_, q)| q);
    let offer_id = withdrawn.map(|(o, _)| o);
    outbox::enqueue(conn, &Intent::waitlist_evicted(id, offer_id, resource_id), now).await?;
    handoff::promote_or_release(conn, &resource, freed, now, offer_ttl).await?;
    find_entry(conn, id).await?.ok_or_else(|| ApiError::internal().into())
}
