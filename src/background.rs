//! Background work every process runs: the sweeper's ticks (expiry, no-shows,
//! reminders and the retention purge, elected across processes) and the
//! outbox delivery worker. Both are stopped with the server.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;

use crate::outbox::worker::DeliveryWorker;
use crate::sweeper::{Sweeper, TickOutcome};

pub struct Background {
    handles: Vec<JoinHandle<()>>,
    sweeper: Arc<Sweeper>,
}

/// How many deliveries one worker pass takes.
const DELIVERY_BATCH: i64 = 32;
/// Passes one poll may run back to back while they come back full (a burst
/// of 5,000 reminders is 157 of them).
const DELIVERY_PASSES: usize = 1000;

impl Background {
    pub fn spawn(sweeper: Arc<Sweeper>, sweep_every: Duration, worker: DeliveryWorker, poll_every: Duration) -> Self {
        let ticking = sweeper.clone();
        let sweep = tokio::spawn(async move {
            let mut interval = tokio::time::interval(sweep_every);
            interval.set_missed_tick_behavior(MissedTickBehavior::Skip);
            loop {
                interval.tick().await;
                match ticking.tick().await {
                    Ok(TickOutcome::Elected(s)) if s.scanned_resources > 0 => {
                        tracing::info!(
                            resources = s.scanned_resources,
                            holds = s.expired_holds,
                            offers = s.expired_offers,
                            promoted = s.promoted_entries,
                            released = s.released_units,
                            "sweeper tick"
                        );
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "sweeper tick failed"),
                }
            }
        });
        let deliver = tokio::spawn(async move {
            let mut interval = tokio::time::interval(poll_every);
            interval.set_missed_tick_behavior(MissedTickBehavior::Skip);
            loop {
                interval.tick().await;
                match worker.drain(DELIVERY_BATCH, DELIVERY_PASSES).await {
                    Ok(s) if s.claimed > 0 => tracing::info!(
                        claimed = s.claimed,
                        delivered = s.delivered,
                        retried = s.retried,
                        exhausted = s.exhausted,
                        stale = s.stale,
                        "outbox pass"
                    ),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "outbox pass failed"),
                }
            }
        });
        Background { handles: vec![sweep, deliver], sweeper }
    }

    /// Stops both loops and gives up the sweeper's leadership at once.
    pub async fn stop(self) {
        for h in &self.handles {
            h.abort();
        }
        self.sweeper.resign().await;
    }
}
