//! Reminders (SPEC §10): each leader tick enqueues the reminders of the
//! bookings starting within `YEYAK_REMINDER_MINUTES` (`outbox::reminders`
//! says how, once for every process and every restart).

use chrono::Duration;

use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::Conn;

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
        Ok(crate::outbox::reminders::enqueue(conn, ctx.now, self.ahead, None).await?)
    }
}
