//! Reminders (SPEC §10): each leader tick enqueues the reminders of the
//! bookings starting within `YEYAK_REMINDER_MINUTES` (`outbox::reminders`
//! says how, once for every process and every restart).

use chrono::{DateTime, Duration, Utc};

use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::Conn;

/// Enqueues due reminders; returns how many were new.
pub async fn enqueue_due(conn: &mut Conn, now: DateTime<Utc>, ahead: Duration) -> diesel::QueryResult<usize> {
    crate::outbox::reminders::enqueue(conn, now, ahead, None).await
}

pub static ENQUEUE: Operation = Operation::new("mail.enqueue_reminders", &[Role::System]);

/// The reminders of one tick: bookings starting within `ahead`.
#[derive(Debug, Clone, Copy)]
pub struct EnqueueReminders {
    pub ahead: Duration,
}

impl Command for EnqueueReminders {
    type Output = usize;

    fn operation(&self) -> &'static Operation {
        &ENQUEUE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::json!({ "aheadSeconds": self.ahead.num_seconds() })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<usize, CommandError> {
        Ok(enqueue_due(conn, ctx.now, self.ahead).await?)
    }
}
