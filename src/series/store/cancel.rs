//! `series.cancel`: every live occurrence from a date (or from now) on,
//! exceptions included (SPEC §9).

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{live_from, lock};
use crate::command::{Command, CommandError, Ctx, On, Operation, Role};
use crate::db::Conn;
use crate::rooms::store::cancel_many;
use crate::series::WithOccurrences;

pub static CANCEL: Operation = Operation::new("series.cancel", &[Role::Staff, Role::Admin, Role::Integration]);

#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub from: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Copy)]
pub struct CancelSeries {
    pub id: i64,
    pub from: Option<DateTime<Utc>>,
}

impl Command for CancelSeries {
    type Output = WithOccurrences;

    fn operation(&self) -> &'static Operation {
        &CANCEL
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::to_value(On { id: self.id, change: &Change { from: self.from } }).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<WithOccurrences, CommandError> {
        let series = lock(conn, self.id, ctx).await?;
        let from = self.from.map_or(ctx.now, |f| f.max(ctx.now));
        let ids = live_from(conn, self.id, from, false).await?;
        let occurrences = cancel_many(conn, &ids, ctx, false).await?;
        Ok(WithOccurrences { series, occurrences })
    }
}
