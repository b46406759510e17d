//! `admin.sweep`: an admin's on-demand sweep (`POST /api/admin/sweep`).

use super::{SweepSummary, Sweeper};
use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::Conn;

pub static SWEEP: Operation = Operation::new("admin.sweep", &[Role::Admin]).spans_transactions();

/// An admin's on-demand sweep (`POST /api/admin/sweep`): it commits one
/// transaction per resource, so its claim is committed first.
pub struct SweepNow<'a> {
    pub sweeper: &'a Sweeper,
    pub max_resources: i64,
}

impl Command for SweepNow<'_> {
    type Output = SweepSummary;

    fn operation(&self) -> &'static Operation {
        &SWEEP
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::json!({ "maxResources": self.max_resources })
    }

    async fn run(&self, _: &mut Conn, _: &Ctx<'_>) -> Result<SweepSummary, CommandError> {
        Ok(self.sweeper.sweep_now(self.max_resources).await?)
    }
}
