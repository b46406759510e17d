//! Admission in front of PostgreSQL (seed 000 §Redis가 멈춰도…, SPEC §6). It
//! only ever *reduces* load; PostgreSQL still decides everything.
//!
//! Order per mutating command: the node-local bulkhead (always), then in one
//! Redis round trip the in-flight suppressor (a duplicate of a running command
//! gets 409 at once) and the distributed semaphore (permits that expire by
//! themselves). A Redis error
//! never refuses a command: it falls back to PostgreSQL, and a circuit
//! breaker stops paying Redis timeouts while Redis is down.

pub mod breaker;
pub mod bulkhead;
pub mod redis_gate;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::error::{ApiError, ErrorCode};
use crate::idempotency::Scope;
pub use bulkhead::{Bulkhead, Lane};
pub use redis_gate::RedisGate;

/// What the admission layer did, for metrics and `/readyz`.
#[derive(Debug, Default)]
pub struct AdmissionStats {
    pub admitted: AtomicU64,
    pub rejected: AtomicU64,
    pub fallback: AtomicU64,
    pub suppressed: AtomicU64,
    /// Commands past admission right now, and the most ever at once.
    pub in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionCounters {
    pub admitted: u64,
    pub rejected: u64,
    pub fallback: u64,
    pub suppressed: u64,
    pub max_in_flight: usize,
}

impl AdmissionStats {
    pub fn snapshot(&self) -> AdmissionCounters {
        AdmissionCounters {
            admitted: self.admitted.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
            fallback: self.fallback.load(Ordering::Relaxed),
            suppressed: self.suppressed.load(Ordering::Relaxed),
            max_in_flight: self.max_in_flight.load(Ordering::Relaxed),
        }
    }
}

/// The admission layer of one process.
pub struct Admission {
    pub bulkhead: Arc<Bulkhead>,
    pub redis: Option<RedisGate>,
    pub stats: Arc<AdmissionStats>,
}

/// Held while a command runs; dropping it releases everything it took, in
/// every path (success, error, panic).
pub struct Ticket {
    _lane: Option<bulkhead::LanePermit>,
    pass: Option<redis_gate::Pass>,
    /// Foreground commands are counted in flight; background work is not.
    stats: Option<Arc<AdmissionStats>>,
}

impl Ticket {
    /// Releases the in-flight lock and the permit (one round trip) before
    /// answering.
    pub async fn finish(mut self) {
        if let Some(pass) = self.pass.take() {
            pass.leave().await;
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(stats) = &self.stats {
            stats.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
        drop(self.pass.take());
    }
}

fn rejected(reason: &str) -> ApiError {
    ApiError::new(ErrorCode::AdmissionRejected, format!("too busy ({reason}); retry shortly")).with_retry_after(1)
}

impl Admission {
    /// Admits one command, or refuses it before any database work. The
    /// background lane (the sweeper's own work) waits for its slot and
    /// skips the Redis gate: it is yeyak's work, not a client's.
    pub async fn admit(&self, lane: Lane, scope: Option<&Scope>) -> Result<Ticket, ApiError> {
        if lane == Lane::Background {
            let slot = self.bulkhead.enter(Lane::Background).await;
            return Ok(Ticket { _lane: slot, pass: None, stats: None });
        }
        let stats = &self.stats;
        let lane = self.bulkhead.enter(Lane::Foreground).await.ok_or_else(|| {
            stats.rejected.fetch_add(1, Ordering::Relaxed);
            rejected("node bulkhead full")
        })?;
        let mut pass = None;
        if let Some(redis) = &self.redis {
            match redis.enter(scope).await {
                Ok(redis_gate::Entry::Admitted(p)) => pass = Some(p),
                Ok(redis_gate::Entry::InProgress) => {
                    stats.suppressed.fetch_add(1, Ordering::Relaxed);
                    return Err(ApiError::new(
                        ErrorCode::CommandInProgress,
                        "the same command is in progress; retry later",
                    )
                    .with_retry_after(1));
                }
                Ok(redis_gate::Entry::NoPermit) => {
                    stats.rejected.fetch_add(1, Ordering::Relaxed);
                    return Err(rejected("no distributed permit"));
                }
                // Redis is away: the PostgreSQL record decides duplicates
                // and the node bulkhead alone bounds the load.
                Err(_) => {
                    stats.fallback.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        stats.admitted.fetch_add(1, Ordering::Relaxed);
        let now = stats.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        stats.max_in_flight.fetch_max(now, Ordering::Relaxed);
        Ok(Ticket { _lane: Some(lane), pass, stats: Some(stats.clone()) })
    }

    /// A foreground slot for a short read outside the pipeline (a stored API
    /// key's lookup), so a flood of unknown keys waits in the bulkhead
    /// instead of taking the pool; 429 after the bulkhead's wait (SPEC §20).
    pub async fn read_slot(&self) -> Result<bulkhead::LanePermit, ApiError> {
        self.bulkhead.enter(Lane::Foreground).await.ok_or_else(|| {
            self.stats.rejected.fetch_add(1, Ordering::Relaxed);
            rejected("node bulkhead full")
        })
    }

    /// Redis as `/readyz` reports it: disabled, ok, or degraded (never failed).
    pub async fn redis_status(&self) -> &'static str {
        match &self.redis {
            None => "disabled",
            Some(r) if r.ping(Duration::from_millis(200)).await => "ok",
            Some(_) => "degraded",
        }
    }
}
