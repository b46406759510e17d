//! The capacity side of a tick (seed 000, SPEC §6): expired holds and
//! offers settled per resource, a few resources at once, or a backlog
//! drained set-based; and the admin's sweep on demand.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use futures_util::StreamExt;

use super::{system, unavailable, SweepSummary, Sweeper, DRAIN_BATCH, PARALLEL, TICK_BUDGET};
use crate::capacity::expiry::{self, DrainBacklog, DueScope, SettleResource};
use crate::db::DbError;

impl Sweeper {
    /// Holds this process's tick slot (what a running tick holds).
    pub async fn hold_slot(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.running.lock().await
    }

    /// An admin's on-demand sweep: waits for a running tick, then works
    /// without the leader gate (per-resource transactions, and drain batches
    /// that skip locked rows, make that safe).
    pub async fn sweep_now(&self, max_resources: i64) -> Result<SweepSummary, DbError> {
        let _slot = self.running.lock().await;
        let summary = self.sweep(max_resources).await?;
        self.release_no_shows().await?;
        self.enqueue_reminders().await?;
        Ok(summary)
    }

    /// The hand-off path first (at most `max_resources`, people wait there),
    /// then the backlog drain with what is left of the tick's budget.
    pub(super) async fn sweep(&self, max_resources: i64) -> Result<SweepSummary, DbError> {
        let started = Instant::now();
        let now = self.clock.now();
        let drain = AtomicBool::load(&self.drain, Ordering::Relaxed);
        let scope = if drain { DueScope::HandOff } else { DueScope::All };
        let mut summary = self.settle_each(max_resources, scope, now, started).await?;
        if drain {
            summary.add(&self.drain_backlog(now, started).await?);
        }
        Ok(summary)
    }

    /// Takes up to `max_resources` resources with due items in `scope`,
    /// oldest first, and settles each in its own transaction within the tick
    /// budget.
    async fn settle_each(
        &self,
        max_resources: i64,
        scope: DueScope,
        now: chrono::DateTime<chrono::Utc>,
        started: Instant,
    ) -> Result<SweepSummary, DbError> {
        let due = {
            let mut conn = self.pool.get().await?;
            let max_wait = self.pipeline.policy().waitlist_max_wait;
            expiry::due_resources(&mut conn, now, max_wait, max_resources, scope).await?
        };
        // Resources are independent (one row lock each), so a few settle at
        // once; the bulkhead's background lane bounds how many connections
        // that takes from the API.
        let mut settled = futures_util::stream::iter(due)
            .map(|resource_id| self.settle(resource_id, now, started))
            .buffer_unordered(PARALLEL);
        let mut summary = SweepSummary::default();
        while let Some(one) = settled.next().await {
            let one = one?;
            summary.add(&one);
            self.count_items(&one);
        }
        Ok(summary)
    }

    /// Expires quiet resources' due holds in batches of [`DRAIN_BATCH`], one
    /// transaction each, until none is left or the tick's budget is spent.
    async fn drain_backlog(
        &self,
        now: chrono::DateTime<chrono::Utc>,
        started: Instant,
    ) -> Result<SweepSummary, DbError> {
        let mut summary = SweepSummary::default();
        while started.elapsed() < TICK_BUDGET {
            let drain = DrainBacklog { batch: DRAIN_BATCH, now };
            let batch = self.pipeline.run(&system(), None, &drain).await.map_err(unavailable)?;
            let one = SweepSummary {
                scanned_resources: batch.resources,
                expired_holds: batch.expired_holds,
                released_units: batch.released_units,
                ..SweepSummary::default()
            };
            summary.add(&one);
            self.count_items(&one);
            // Fewer candidates than a batch: nothing more is due. None
            // expired: what is left is locked by others, for the next tick.
            if batch.candidates < DRAIN_BATCH || batch.expired_holds == 0 {
                break;
            }
        }
        Ok(summary)
    }

    fn count_items(&self, one: &SweepSummary) {
        let items = &self.metrics.sweeper_items;
        for (kind, n) in [
            ("expired_holds", one.expired_holds),
            ("expired_offers", one.expired_offers),
            ("expired_entries", one.expired_entries),
            ("promoted_entries", one.promoted_entries),
            ("released_units", one.released_units),
        ] {
            items.with_label_values(&[kind]).inc_by(n as u64);
        }
    }

    /// One resource's transaction, unless the tick's budget is spent.
    async fn settle(
        &self,
        resource_id: i64,
        now: chrono::DateTime<chrono::Utc>,
        started: Instant,
    ) -> Result<SweepSummary, DbError> {
        if started.elapsed() >= TICK_BUDGET {
            return Ok(SweepSummary::default());
        }
        self.pipeline.run(&system(), None, &SettleResource { resource_id, now }).await.map_err(unavailable)
    }

    /// Off, every due resource takes the per-resource path, as before the
    /// backlog drain existed: for tests and benches that compare the two.
    pub fn set_backlog_drain(&self, enabled: bool) {
        self.drain.store(enabled, Ordering::Relaxed);
    }
}
