//! The booking side of a tick: no-show bookings released (SPEC §11) and
//! reminders enqueued (SPEC §10), each as a command through the pipeline.

use chrono::Duration;

use super::{releaser, system, unavailable, Sweeper};
use crate::checkin::release::{ReleaseNoShows, BATCH as RELEASE_BATCH};
use crate::db::DbError;
use crate::mail::reminders::EnqueueReminders;

impl Sweeper {
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
}
