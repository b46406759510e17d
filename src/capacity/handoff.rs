//! promote-or-release (seed 000 §임시 예약을 취소해도…, SPEC §3): freed units go
//! to the FIFO head of the waitlist as ACTIVE offers without lowering
//! `occupied_count`; only units nobody in line can take are released. One
//! service for cancel, decline, leave and (later) expiry.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde::Serialize;

use super::domain::ResourceRow;
use crate::command::CommandError;
use crate::db::cached::CacheExt;
use crate::db::schema::{capacity_offer as offer, capacity_resource as res, waitlist_entry as entry};
use crate::db::Conn;
use crate::outbox::{self, Intent};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Handoff {
    /// Offers made, in queue order.
    pub offer_ids: Vec<i64>,
    pub promoted_entries: i64,
    pub released_units: i64,
}

/// Hands `freed` units (still counted in `occupied_count`) to the waiters in
/// FIFO order while the head fits, using the resource's free units too; stops
/// at the first waiter that does not fit, so nobody is passed. `resource` is
/// the row as the caller locked it in this transaction (`resources::lock`),
/// with any change the caller made since applied.
pub async fn promote_or_release(
    conn: &mut Conn,
    resource: &ResourceRow,
    freed: i32,
    now: DateTime<Utc>,
    offer_ttl: Duration,
) -> Result<Handoff, CommandError> {
    let resource_id = resource.id;
    // Units a waiter may take: the freed ones plus any already free.
    let mut pool = freed + (resource.capacity - resource.occupied_count);
    let mut handed = 0;
    let mut summary = Handoff::default();
    // A closed resource hands nothing out; its waiters keep their place.
    let mut waiting = if resource.state == "OPEN" { resource.waiting_count } else { 0 };
    while waiting > 0 {
        let head: Option<(i64, String, i32)> = entry::table
            .filter(entry::resource_id.eq(resource_id))
            .filter(entry::state.eq("WAITING"))
            .order(entry::sequence)
            .select((entry::id, entry::owner_digest, entry::quantity))
            .for_update()
            .first(conn)
            .await
            .optional()?;
        let Some((entry_id, owner_digest, quantity)) = head else {
            break;
        };
        if quantity > pool {
            break;
        }
        let offer_id: i64 = diesel::insert_into(offer::table)
            .values((
                offer::resource_id.eq(resource_id),
                offer::entry_id.eq(entry_id),
                offer::owner_digest.eq(&owner_digest),
                offer::state.eq("ACTIVE"),
                offer::quantity.eq(quantity),
                offer::expires_at.eq(now + offer_ttl),
                offer::created_at.eq(now),
                offer::updated_at.eq(now),
            ))
            .returning(offer::id)
            .get_result(conn)
            .await?;
        diesel::update(entry::table.find(entry_id))
            .set((entry::state.eq("OFFERED"), entry::revision.eq(entry::revision + 1), entry::updated_at.eq(now)))
            .cached()
            .execute(conn)
            .await?;
        outbox::enqueue(conn, &Intent::offer_created(entry_id, offer_id, resource_id, now + offer_ttl), now).await?;
        pool -= quantity;
        handed += quantity;
        waiting -= 1;
        summary.offer_ids.push(offer_id);
        summary.promoted_entries += 1;
    }
    let occupied = resource.occupied_count - freed + handed;
    let moved = occupied != resource.occupied_count;
    diesel::update(res::table.find(resource_id))
        .set((
            res::occupied_count.eq(occupied),
            res::waiting_count.eq(res::waiting_count - summary.promoted_entries as i32),
            // The revision moves only when occupied_count does (SPEC §3).
            res::revision.eq(res::revision + i64::from(moved)),
            res::updated_at.eq(now),
        ))
        .cached()
        .execute(conn)
        .await?;
    summary.released_units = i64::from((freed - handed).max(0));
    Ok(summary)
}
