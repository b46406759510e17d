//! Expiry (seed 000 §리더로 선출된 정리 작업자, SPEC §6, §11): which resources
//! are due, settling one resource (`capacity.settle`), and the set-based
//! backlog drain of resources nobody waits for (`capacity.drain`) — the
//! sweeper's commands, run by the system principal.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Int8, Timestamptz};
use diesel_async::RunQueryDsl;
use serde::{Deserialize, Serialize};

use crate::capacity::domain::ResourceRow;
use crate::capacity::{handoff, resources};
use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::cached::CacheExt;
use crate::db::schema::{
    capacity_hold as hold, capacity_offer as offer, capacity_resource as res, waitlist_entry as entry,
};
use crate::db::Conn;
use crate::outbox::{self, Intent};

/// What a sweep did (`POST /api/admin/sweep`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SweepSummary {
    pub scanned_resources: i64,
    pub expired_holds: i64,
    pub expired_offers: i64,
    /// WAITING entries that waited longer than `YEYAK_WAITLIST_MAX_WAIT_HOURS`.
    pub expired_entries: i64,
    pub promoted_entries: i64,
    pub released_units: i64,
}

impl SweepSummary {
    pub fn add(&mut self, other: &SweepSummary) {
        self.scanned_resources += other.scanned_resources;
        self.expired_holds += other.expired_holds;
        self.expired_offers += other.expired_offers;
        self.expired_entries += other.expired_entries;
        self.promoted_entries += other.promoted_entries;
        self.released_units += other.released_units;
    }
}

#[derive(QueryableByName)]
struct Due {
    #[diesel(sql_type = Int8)]
    resource_id: i64,
}

/// Which due resources the per-resource path takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DueScope {
    /// Every resource with a due hold or offer (the per-resource path alone,
    /// as before the backlog drain; kept to compare the two).
    All,
    /// Only where a hand-off may happen: due holds of an OPEN resource with
    /// someone WAITING, and due offers. Holds of the others are the backlog
    /// drain's ([`drain_unwaited`]).
    HandOff,
}

/// Resources with a HELD hold or an ACTIVE offer past its expiry, or a
/// WAITING entry older than `max_wait`, oldest due time first (partial
/// indexes on `expires_at` and on the entries' `created_at` serve each part).
pub async fn due_resources(
    conn: &mut Conn,
    now: DateTime<Utc>,
    max_wait: Duration,
    limit: i64,
    scope: DueScope,
) -> QueryResult<Vec<i64>> {
    let holds = match scope {
        DueScope::All => "SELECT resource_id, expires_at FROM capacity_hold WHERE state = 'HELD' AND expires_at <= $1",
        DueScope::HandOff => {
            "SELECT h.resource_id, h.expires_at
               FROM capacity_hold h JOIN capacity_resource r ON r.id = h.resource_id
              WHERE h.state = 'HELD' AND h.expires_at <= $1 AND r.state = 'OPEN' AND r.waiting_count > 0"
        }
    };
    let sql = format!(
        "SELECT resource_id FROM (
             {holds}
             UNION ALL
             SELECT resource_id, expires_at FROM capacity_offer WHERE state = 'ACTIVE' AND expires_at <= $1
             UNION ALL
             SELECT resource_id, created_at + ($1 - $3) AS expires_at FROM waitlist_entry
              WHERE state = 'WAITING' AND created_at <= $3
         ) due
         GROUP BY resource_id
         ORDER BY min(expires_at), resource_id
         LIMIT $2"
    );
    let rows: Vec<Due> = diesel::sql_query(sql)
        .bind::<Timestamptz, _>(now)
        .bind::<Int8, _>(limit)
        .bind::<Timestamptz, _>(now - max_wait)
        .cached()
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(|d| d.resource_id).collect())
}

/// What one batch of the backlog drain did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, QueryableByName)]
pub struct Drained {
    /// Due holds of quiet resources the batch looked at (at most the batch
    /// size; fewer means the backlog is empty as of this batch).
    #[diesel(sql_type = Int8)]
    pub candidates: i64,
    #[diesel(sql_type = Int8)]
    pub expired_holds: i64,
    #[diesel(sql_type = Int8)]
    pub resources: i64,
    #[diesel(sql_type = Int8)]
    pub released_units: i64,
    /// `hold.expired` rows written: one per expired hold.
    #[diesel(sql_type = Int8)]
    pub notified: i64,
}

/// The expiry backlog path (SPEC §11 "the building's clock"): one statement
/// expires up to `batch` due holds of resources nobody waits for, oldest
/// first, lowers each resource's `occupied_count` by their units (revision
/// +1, as promote-or-release does when it releases) and enqueues one
/// `hold.expired` per hold: what [`expire_resource`] does for such a
/// resource, without a round trip per resource.
///
/// The resource rows are locked first (the order every hand-off uses) and
/// "nobody waiting" is re-checked on the row as locked, so a waiter who joined
/// meanwhile sends the resource to the FIFO path instead. Rows another
/// transaction holds are skipped (`SKIP LOCKED`), never waited for; the state
/// test on the locked hold makes a second run, or a second sweeper, a no-op.
pub async fn drain_unwaited(conn: &mut Conn, now: DateTime<Utc>, batch: i64) -> QueryResult<Drained> {
    diesel::sql_query(
        "WITH cand AS (
             SELECT h.id, h.resource_id
               FROM capacity_hold h JOIN capacity_resource r ON r.id = h.resource_id
              WHERE h.state = 'HELD' AND h.expires_at <= $1
                AND (r.waiting_count = 0 OR r.state <> 'OPEN')
              ORDER BY h.expires_at, h.id
              LIMIT $2),
         quiet AS (
             SELECT cand.id AS hold_id, r.id
               FROM cand JOIN capacity_resource r ON r.id = cand.resource_id
              WHERE r.waiting_count = 0 OR r.state <> 'OPEN'
                FOR UPDATE OF r SKIP LOCKED),
         picked AS (
             SELECT h.id
               FROM quiet JOIN capacity_hold h ON h.id = quiet.hold_id
              WHERE h.state = 'HELD' AND h.expires_at <= $1
                FOR UPDATE OF h SKIP LOCKED),
         expired AS (
             UPDATE capacity_hold h
                SET state = 'EXPIRED', revision = h.revision + 1, updated_at = $1
               FROM picked
              WHERE h.id = picked.id AND h.state = 'HELD'
          RETURNING h.id, h.resource_id, h.quantity),
         freed AS (
             SELECT resource_id, sum(quantity)::int4 AS units FROM expired GROUP BY resource_id),
         released AS (
             UPDATE capacity_resource r
                SET occupied_count = r.occupied_count - freed.units, revision = r.revision + 1, updated_at = $1
               FROM freed
              WHERE r.id = freed.resource_id
          RETURNING freed.units),
         notified AS (
             INSERT INTO notification_outbox (delivery_id, kind, payload, status, next_attempt_at, created_at)
             SELECT 'hold-' || id || '-expired', 'hold.expired',
                    jsonb_build_object('holdId', id, 'resourceId', resource_id), 'PENDING', $1, $1
               FROM expired
             ON CONFLICT DO NOTHING
          RETURNING 1)
         SELECT (SELECT count(*) FROM cand) AS candidates,
                (SELECT count(*) FROM expired) AS expired_holds,
                (SELECT count(*) FROM released) AS resources,
                (SELECT COALESCE(sum(units), 0) FROM released)::int8 AS released_units,
                (SELECT count(*) FROM notified) AS notified",
    )
    .bind::<Timestamptz, _>(now)
    .bind::<Int8, _>(batch)
    .cached()
    .get_result(conn)
    .await
}

/// One resource, one transaction: lock it, expire its due holds and offers
/// (and their entries), hand the freed units on or release them, and enqueue
/// the notifications. Selecting by state makes a second run a no-op.
pub async fn expire_resource(
    conn: &mut Conn,
    resource_id: i64,
    now: DateTime<Utc>,
    offer_ttl: Duration,
    max_wait: Duration,
) -> Result<SweepSummary, CommandError> {
    let resource = resources::lock(conn, resource_id).await?;
    // Entries that waited too long leave the line first, so that the
    // hand-off below offers the units to whoever waits behind them.
    let stale: Vec<i64> = diesel::update(
        entry::table
            .filter(entry::resource_id.eq(resource_id))
            .filter(entry::state.eq("WAITING"))
            .filter(entry::created_at.le(now - max_wait)),
    )
    .set((entry::state.eq("EXPIRED"), entry::revision.eq(entry::revision + 1), entry::updated_at.eq(now)))
    .returning(entry::id)
    .cached()
    .get_results(conn)
    .await?;
    let resource = if stale.is_empty() {
        resource
    } else {
        diesel::update(res::table.find(resource_id))
            .set(res::waiting_count.eq(res::waiting_count - stale.len() as i32))
            .returning(ResourceRow::as_returning())
            .get_result(conn)
            .await?
    };
    let holds: Vec<(i64, i32)> = diesel::update(
        hold::table
            .filter(hold::resource_id.eq(resource_id))
            .filter(hold::state.eq("HELD"))
            .filter(hold::expires_at.le(now)),
    )
    .set((hold::state.eq("EXPIRED"), hold::revision.eq(hold::revision + 1), hold::updated_at.eq(now)))
    .returning((hold::id, hold::quantity))
    .cached()
    .get_results(conn)
    .await?;
    let offers: Vec<(i64, i64, i32)> = diesel::update(
        offer::table
            .filter(offer::resource_id.eq(resource_id))
            .filter(offer::state.eq("ACTIVE"))
            .filter(offer::expires_at.le(now)),
    )
    .set((offer::state.eq("EXPIRED"), offer::revision.eq(offer::revision + 1), offer::updated_at.eq(now)))
    .returning((offer::id, offer::entry_id, offer::quantity))
    .cached()
    .get_results(conn)
    .await?;
    let entry_ids: Vec<i64> = offers.iter().map(|(_, e, _)| *e).collect();
    if !entry_ids.is_empty() {
        diesel::update(entry::table.filter(entry::id.eq_any(&entry_ids)))
            .set((entry::state.eq("EXPIRED"), entry::revision.eq(entry::revision + 1), entry::updated_at.eq(now)))
            .cached()
            .execute(conn)
            .await?;
    }
    let intents: Vec<Intent> = holds
        .iter()
        .map(|(hold_id, _)| Intent::hold_expired(*hold_id, resource_id))
        .chain(offers.iter().map(|(offer_id, entry_id, _)| Intent::offer_expired(*entry_id, *offer_id, resource_id)))
        .chain(stale.iter().map(|entry_id| Intent::waitlist_expired(*entry_id, resource_id)))
        .collect();
    outbox::enqueue_all(conn, &intents, now).await?;
    let freed: i32 = holds.iter().map(|(_, q)| q).sum::<i32>() + offers.iter().map(|(_, _, q)| q).sum::<i32>();
    let handoff = handoff::promote_or_release(conn, &resource, freed, now, offer_ttl).await?;
    Ok(SweepSummary {
        scanned_resources: 1,
        expired_holds: holds.len() as i64,
        expired_offers: offers.len() as i64,
        expired_entries: stale.len() as i64,
        promoted_entries: handoff.promoted_entries,
        released_units: handoff.released_units,
    })
}

pub static SETTLE: Operation = Operation::new("capacity.settle", &[Role::System]);
pub static DRAIN: Operation = Operation::new("capacity.drain", &[Role::System]);

/// Settles one due resource (see [`expire_resource`]).
#[derive(Debug, Clone, Copy)]
pub struct SettleResource {
    pub resource_id: i64,
    /// The tick's instant: every resource of a tick is judged at it.
    pub now: DateTime<Utc>,
}

impl Command for SettleResource {
    type Output = SweepSummary;

    fn operation(&self) -> &'static Operation {
        &SETTLE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::json!({ "resourceId": self.resource_id })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<SweepSummary, CommandError> {
        let p = ctx.policy;
        expire_resource(conn, self.resource_id, self.now, p.offer_ttl, p.waitlist_max_wait).await
    }
}

/// One batch of the backlog drain (see [`drain_unwaited`]).
#[derive(Debug, Clone, Copy)]
pub struct DrainBacklog {
    pub batch: i64,
    pub now: DateTime<Utc>,
}

impl Command for DrainBacklog {
    type Output = Drained;

    fn operation(&self) -> &'static Operation {
        &DRAIN
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::json!({ "batch": self.batch })
    }

    async fn run(&self, conn: &mut Conn, _: &Ctx<'_>) -> Result<Drained, CommandError> {
        Ok(drain_unwaited(conn, self.now, self.batch).await?)
    }
}
