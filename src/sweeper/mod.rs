//! Expiry sweeper (seed 000 §리더로 선출된 정리 작업자, SPEC §6). Runs in every
//! process; each tick only the process holding a PostgreSQL advisory lock (on
//! a connection of its own) works, within a 5 s budget; a tick that overlaps
//! the previous one in this process is skipped. Two paths share the work:
//! resources where a hand-off may happen (someone waits, or an offer is due)
//! are settled one transaction per resource, at most 32, oldest expiry first;
//! the due holds of all the others are the backlog drain's, set-based batches
//! bounded by rows, not resources (SPEC §11 "the building's clock").
//! Re-sweeping changes nothing: due rows are selected by state. Every
//! change a tick makes is a command of the system principal, run by the same
//! pipeline as a client's (its admission puts it in the background lane).

pub mod on_demand;
pub mod purge;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use chrono::Duration;
use diesel::sql_types::{BigInt, Bool};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use futures_util::StreamExt;
use serde::Serialize;
use tokio::sync::Mutex;

use crate::admission::{Admission, Bulkhead, Lane};
use crate::capacity::expiry::{self, DrainBacklog, SettleResource};
use crate::checkin::release::{ReleaseNoShows, BATCH as RELEASE_BATCH};
use crate::clock::Clock;
use crate::command::{Pipeline, Principal};
use crate::db::{self, Conn, DbError, DbStats, Pool};
use crate::error::ApiError;
use crate::i18n::{I18n, Lang};
use crate::mail::reminders::EnqueueReminders;
use crate::policy::Policy;

pub use expiry::{DueScope, SweepSummary};
pub use on_demand::{SweepNow, SWEEP};

/// Advisory lock key of the sweeper's leader gate ("yeyak-sw").
pub const LEADER_LOCK: i64 = 0x7965_7961_6b2d_7377;
/// Most resources one tick takes.
pub const MAX_RESOURCES: i64 = 32;
/// Time budget of one tick.
pub const TICK_BUDGET: StdDuration = StdDuration::from_secs(5);
/// Due holds one backlog-drain statement expires (one transaction each; it
/// keeps that many resource rows locked for its few milliseconds).
pub const DRAIN_BATCH: i64 = 2000;
/// Resources of one tick settled at the same time (each in its own
/// transaction; the bulkhead's background lane may allow fewer).
const PARALLEL: usize = 4;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum TickOutcome {
    /// This process leads and swept.
    Elected(SweepSummary),
    /// Another process holds the leader gate.
    NotLeader,
    /// The previous tick of this process is still running.
    LocalBusy,
}

#[derive(QueryableByName)]
struct Locked {
    #[diesel(sql_type = Bool)]
    locked: bool,
}

/// The leader gate's connection and whether its session holds the lock.
#[derive(Default)]
struct Gate {
    conn: Option<Conn>,
    held: bool,
}

pub struct Sweeper {
    /// Runs every change of a tick as the system principal.
    pipeline: Arc<Pipeline>,
    pool: Pool,
    clock: Arc<dyn Clock>,
    database_url: String,
    /// The leader gate's own connection; its session holds the lock while this
    /// process leads. If the process dies, PostgreSQL drops the lock with it.
    leader: Mutex<Gate>,
    /// One tick at a time in this process.
    running: Mutex<()>,
    /// The background lane of this process's bulkhead, for the purge.
    bulkhead: Option<Arc<Bulkhead>>,
    metrics: Arc<crate::metrics::Metrics>,
    /// Releases no-show bookings each tick when set (SPEC §11).
    release_no_shows: bool,
    /// Enqueues mail reminders this long before bookings start (SPEC §10).
    reminders: Option<Duration>,
    /// Whether quiet resources' holds go through the backlog drain (always,
    /// except to compare with the per-resource path alone).
    drain: AtomicBool,
    /// What the elected tick purges after its expiry work (SPEC §13).
    purge: purge::Purge,
}

/// yeyak's own background work, as the pipeline and the history see it.
fn system() -> Principal {
    Principal::system("yeyak")
}

/// Who a no-show release names in the booking's history: the catalogue's
/// words in the default language (the history keeps the name as written).
fn releaser() -> Principal {
    Principal::system(&I18n::new(Lang::default()).t("history-actor-no-show"))
}

impl Sweeper {
    /// A sweeper with a pipeline of its own (no Redis, a small background
    /// lane): what tests and benches build. The server shares its pipeline
    /// through [`with_pipeline`](Self::with_pipeline).
    pub fn new(
        pool: Pool,
        stats: Arc<DbStats>,
        clock: Arc<dyn Clock>,
        database_url: &str,
        offer_ttl: Duration,
    ) -> Self {
        let admission = Arc::new(Admission {
            bulkhead: Arc::new(Bulkhead::unbounded(PARALLEL as u32, StdDuration::from_secs(1))),
            redis: None,
            stats: Arc::default(),
        });
        let policy = Policy { offer_ttl, ..Policy::default() };
        let metrics: Arc<crate::metrics::Metrics> = Arc::default();
        let pipeline = Pipeline::new(
            pool.clone(),
            stats,
            admission,
            clock.clone(),
            metrics.clone(),
            Duration::seconds(30),
            policy,
        );
        Sweeper {
            pipeline: Arc::new(pipeline),
            pool,
            clock,
            database_url: database_url.to_owned(),
            leader: Mutex::new(Gate::default()),
            running: Mutex::new(()),
            bulkhead: None,
            metrics,
            release_no_shows: false,
            reminders: None,
            drain: AtomicBool::new(true),
            purge: purge::Purge::default(),
        }
    }

    /// Runs the tick's commands through the server's pipeline (its policy,
    /// admission and metrics).
    pub fn with_pipeline(mut self, pipeline: Arc<Pipeline>) -> Self {
        self.pipeline = pipeline;
        self
    }

    /// Retention and batch size of the purge an elected tick runs.
    pub fn with_purge(mut self, purge: purge::Purge) -> Self {
        self.purge = purge;
        self
    }

    /// The retention purge of one elected tick, in the background lane.
    pub async fn purge(&self) -> Result<purge::Purged, DbError> {
        let _lane = match &self.bulkhead {
            Some(b) => b.enter(Lane::Background).await,
            None => None,
        };
        let mut conn = self.pool.get().await?;
        let purged = purge::run(&mut conn, self.purge, self.clock.now()).await?;
        for (table, n) in [
            ("staff_session", purged.sessions),
            ("staff_login_throttle", purged.throttle),
            ("address_login_throttle", purged.address_throttle),
            ("notification_outbox", purged.deliveries),
            ("notification_attempt", purged.attempts),
        ] {
            self.metrics.purged_rows.with_label_values(&[table]).inc_by(n);
        }
        if purged.total() > 0 {
            tracing::info!(?purged, "rows past their retention purged");
        }
        Ok(purged)
    }

    /// Also enqueues booking reminders on each elected tick.
    pub fn with_reminders(mut self, ahead: Option<Duration>) -> Self {
        self.reminders = ahead;
        self
    }

    /// Reminders due now, enqueued once each (their delivery ids decide).
    pub async fn enqueue_reminders(&self) -> Result<usize, DbError> {
        let Some(ahead) = self.reminders else { return Ok(0) };
        self.pipeline.run(&system(), None, &EnqueueReminders { ahead }).await.map_err(unavailable)
    }

    /// Also releases no-show bookings on each elected tick.
    pub fn releasing_no_shows(mut self) -> Self {
        self.release_no_shows = true;
        self
    }

    /// The booking side of a tick: no-shows released, a batch per
    /// transaction, at most 20 batches a tick.
    pub async fn release_no_shows(&self) -> Result<usize, DbError> {
        if !self.release_no_shows {
            return Ok(0);
        }
        let mut total = 0;
        for _ in 0..20 {
            let released = self
                .pipeline
                .run(&releaser(), None, &ReleaseNoShows { limit: RELEASE_BATCH })
                .await
                .map_err(unavailable)?;
            total += released;
            if (released as i64) < RELEASE_BATCH {
                break;
            }
        }
        self.metrics.sweeper_items.with_label_values(&["released_bookings"]).inc_by(total as u64);
        Ok(total)
    }

    /// Off, every due resource takes the per-resource path, as before the
    /// backlog drain existed: for tests and benches that compare the two.
    pub fn set_backlog_drain(&self, enabled: bool) {
        self.drain.store(enabled, Ordering::Relaxed);
    }

    /// Counts ticks and items in the application's metrics.
    pub fn with_metrics(mut self, metrics: Arc<crate::metrics::Metrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Runs the purge in the bulkhead's background lane.
    pub fn with_bulkhead(mut self, bulkhead: Arc<Bulkhead>) -> Self {
        self.bulkhead = Some(bulkhead);
        self
    }

    /// Whether this process holds the leader gate now, taking it if free.
    pub async fn try_lead(&self) -> Result<bool, DbError> {
        let mut gate = self.leader.lock().await;
        if gate.conn.is_none() {
            let conn = db::establish(&self.database_url).await.map_err(|e| DbError::Unavailable(e.to_string()))?;
            *gate = Gate { conn: Some(conn), held: false };
        }
        // While we hold it, a live session is proof enough (session locks
        // last as long as the session); taking it again would stack it.
        let sql = if gate.held { "SELECT $1 > 0 AS locked" } else { "SELECT pg_try_advisory_lock($1) AS locked" };
        let conn = gate.conn.as_mut().expect("connected above");
        match diesel::sql_query(sql).bind::<BigInt, _>(LEADER_LOCK).get_result::<Locked>(conn).await {
            Ok(row) => {
                gate.held = row.locked;
                Ok(row.locked)
            }
            Err(e) => {
                // A broken gate connection: drop it, and with it any lock.
                *gate = Gate::default();
                Err(DbError::from(e))
            }
        }
    }

    /// Gives up leadership (shutdown, or a test that moves the lead).
    pub async fn resign(&self) {
        *self.leader.lock().await = Gate::default();
    }

    /// Whether this process holds the leader gate (as last checked).
    pub async fn is_leader(&self) -> bool {
        self.leader.lock().await.held
    }

    /// One scheduled tick: skipped when busy or not leading.
    pub async fn tick(&self) -> Result<TickOutcome, DbError> {
        let outcome = self.tick_once().await;
        let label = match &outcome {
            Ok(TickOutcome::Elected(_)) => "elected",
            Ok(TickOutcome::NotLeader) => "not_leader",
            Ok(TickOutcome::LocalBusy) => "local_busy",
            Err(_) => "failed",
        };
        self.metrics.sweeper_ticks.with_label_values(&[label]).inc();
        outcome
    }

    async fn tick_once(&self) -> Result<TickOutcome, DbError> {
        let Ok(_slot) = self.running.try_lock() else {
            return Ok(TickOutcome::LocalBusy);
        };
        if !self.try_lead().await? {
            return Ok(TickOutcome::NotLeader);
        }
        let summary = self.sweep(MAX_RESOURCES).await?;
        self.release_no_shows().await?;
        self.enqueue_reminders().await?;
        self.purge().await?;
        Ok(TickOutcome::Elected(summary))
    }

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
    async fn sweep(&self, max_resources: i64) -> Result<SweepSummary, DbError> {
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
}

/// A refusal of yeyak's own work is a fault of the database it runs on.
fn unavailable(e: ApiError) -> DbError {
    DbError::Unavailable(e.message)
}
