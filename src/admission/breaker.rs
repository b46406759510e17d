//! A circuit breaker for Redis: after `threshold` consecutive failures it
//! opens and Redis is skipped for `open_for`; then one probe is let through
//! (half-open), and its outcome closes or re-opens the breaker.

use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed { failures: u32 },
    Open { until: Instant },
    HalfOpen,
}

#[derive(Debug)]
pub struct Breaker {
    state: Mutex<State>,
    threshold: u32,
    open_for: Duration,
}

impl Breaker {
    pub fn new(threshold: u32, open_for: Duration) -> Self {
        Breaker { state: Mutex::new(State::Closed { failures: 0 }), threshold: threshold.max(1), open_for }
    }

    /// Whether a call to Redis may be made now.
    pub fn allow(&self) -> bool {
        let mut state = self.state.lock().expect("breaker lock");
        match *state {
            State::Closed { .. } => true,
            State::Open { until } if Instant::now() >= until => {
                *state = State::HalfOpen;
                true
            }
            State::Open { .. } | State::HalfOpen => false,
        }
    }

    pub fn success(&self) {
        let mut state = self.state.lock().expect("breaker lock");
        if *state != (State::Closed { failures: 0 }) {
            if matches!(*state, State::HalfOpen) {
                tracing::info!("redis is back; admission uses it again");
            }
            *state = State::Closed { failures: 0 };
        }
    }

    pub fn failure(&self) {
        let mut state = self.state.lock().expect("breaker lock");
        let open = match *state {
            State::Closed { failures } if failures + 1 < self.threshold => {
                *state = State::Closed { failures: failures + 1 };
                false
            }
            _ => true,
        };
        if open {
            if !matches!(*state, State::Open { .. }) {
                tracing::warn!(
                    open_for_ms = self.open_for.as_millis() as u64,
                    "redis failing; admission falls back to PostgreSQL"
                );
            }
            *state = State::Open { until: Instant::now() + self.open_for };
        }
    }

    pub fn is_open(&self) -> bool {
        matches!(*self.state.lock().expect("breaker lock"), State::Open { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_failures_then_probes_once() {
        let b = Breaker::new(2, Duration::from_millis(30));
        assert!(b.allow());
        b.failure();
        assert!(b.allow(), "one failure is not enough");
        b.failure();
        assert!(!b.allow(), "open");
        std::thread::sleep(Duration::from_millis(40));
        assert!(b.allow(), "half-open: one probe");
        assert!(!b.allow(), "only one probe at a time");
        b.failure();
        assert!(!b.allow(), "the failed probe re-opens it");
        std::thread::sleep(Duration::from_millis(40));
        assert!(b.allow());
        b.success();
        assert!(b.allow() && b.allow(), "closed again");
    }
}
