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

mod bookings;
mod holds;
mod leader;
pub mod on_demand;
pub mod purge;

use leader::Gate;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use chrono::Duration;
use serde::Serialize;
use tokio::sync::Mutex;

use crate::admission::{Admission, Bulkhead};
use crate::capacity::expiry::{self};
use crate::clock::Clock;
use crate::command::{Pipeline, Principal};
use crate::db::{DbError, DbStats, Pool};
use crate::error::ApiError;
use crate::i18n::{I18n, Lang};
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
    /// The server's sweeper: its commands run through the server's one
    /// pipeline (its policy, admission, metrics and pool), the purge in its
    /// bulkhead's background lane.
    pub fn of(pipeline: Arc<Pipeline>, database_url: &str) -> Self {
        Sweeper {
            pool: pipeline.pool().clone(),
            clock: pipeline.clock().clone(),
            metrics: pipeline.metrics().clone(),
            bulkhead: Some(pipeline.admission().bulkhead.clone()),
            pipeline,
            database_url: database_url.to_owned(),
            leader: Mutex::new(Gate::default()),
            running: Mutex::new(()),
            release_no_shows: false,
            reminders: None,
            drain: AtomicBool::new(true),
            purge: purge::Purge::default(),
        }
    }

    /// The sweeper of a process of its own, with that process's pipeline
    /// (no Redis, a small background lane): what tests and benches build to
    /// stand for another yeyak process on the same database.
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
}

/// A refusal of yeyak's own work is a fault of the database it runs on.
fn unavailable(e: ApiError) -> DbError {
    DbError::Unavailable(e.message)
}
