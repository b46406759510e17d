//! Node-local bulkhead: bounded concurrent database work per process, with a
//! foreground lane (API commands) and a background lane (sweeper, outbox) so
//! that neither starves the other.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    Foreground,
    Background,
}

pub struct Bulkhead {
    foreground: Arc<Semaphore>,
    background: Arc<Semaphore>,
    /// How long a foreground command may wait for a slot before a 429.
    wait: Duration,
}

pub struct LanePermit(#[allow(dead_code)] OwnedSemaphorePermit);

impl Bulkhead {
    /// Splits `pool_size` connections: `background` slots for background work
    /// (at least one), the rest (at least one) for the API.
    pub fn new(pool_size: u32, background: u32, wait: Duration) -> Self {
        let background = background.clamp(1, pool_size.max(2) - 1) as usize;
        let foreground = (pool_size as usize).saturating_sub(background).max(1);
        Self::with_lanes(foreground, background, wait)
    }

    /// A foreground lane without a bound: what a process without a bulkhead
    /// does (only for measuring what the bulkhead prevents).
    pub fn unbounded(background: u32, wait: Duration) -> Self {
        Self::with_lanes(Semaphore::MAX_PERMITS, background.max(1) as usize, wait)
    }

    fn with_lanes(foreground: usize, background: usize, wait: Duration) -> Self {
        Bulkhead {
            foreground: Arc::new(Semaphore::new(foreground)),
            background: Arc::new(Semaphore::new(background)),
            wait,
        }
    }

    /// A slot in `lane`: the foreground waits at most `wait` (then `None`);
    /// the background waits as long as it takes.
    pub async fn enter(&self, lane: Lane) -> Option<LanePermit> {
        match lane {
            Lane::Foreground => tokio::time::timeout(self.wait, self.foreground.clone().acquire_owned())
                .await
                .ok()
                .and_then(Result::ok)
                .map(LanePermit),
            Lane::Background => self.background.clone().acquire_owned().await.ok().map(LanePermit),
        }
    }

    pub fn capacity(&self, lane: Lane) -> usize {
        match lane {
            Lane::Foreground => self.foreground.available_permits(),
            Lane::Background => self.background.available_permits(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_foreground_lane_refuses_after_its_wait_and_background_keeps_its_own() {
        let b = Bulkhead::new(3, 1, Duration::from_millis(20));
        let f1 = b.enter(Lane::Foreground).await.unwrap();
        let _f2 = b.enter(Lane::Foreground).await.unwrap();
        assert!(b.enter(Lane::Foreground).await.is_none(), "full foreground lane refuses");
        let _bg = b.enter(Lane::Background).await.expect("background is not starved by the API");
        drop(f1);
        assert!(b.enter(Lane::Foreground).await.is_some());
    }
}
