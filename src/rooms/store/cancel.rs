//! `booking.cancel`: its time is free as soon as this commits.

use serde::Serialize;

use super::{lock_for, set_cancelled};
use crate::command::{Command, CommandError, Ctx, On, Operation, Role};
use crate::db::Conn;
use crate::error::ApiError;
use crate::rooms::access::Act;
use crate::rooms::booking::{find, Booking};
use crate::rooms::events;

pub static CANCEL: Operation = Operation::new("booking.cancel", &[Role::Staff, Role::Admin, Role::Integration]);

#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub expected_version: Option<i32>,
}

#[derive(Debug, Clone, Copy)]
pub struct CancelBooking {
    pub id: i64,
    pub expected_version: Option<i32>,
}

impl Command for CancelBooking {
    type Output = Booking;

    fn operation(&self) -> &'static Operation {
        &CANCEL
    }

    fn fingerprint(&self) -> serde_json::Value {
        let change = Change { expected_version: self.expected_version };
        serde_json::to_value(On { id: self.id, change: &change }).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Booking, CommandError> {
        let before = lock_for(conn, self.id, ctx.principal, Act::Change, self.expected_version).await?;
        set_cancelled(conn, &[self.id], ctx.now, true).await?;
        let after = find(conn, self.id).await?.ok_or_else(ApiError::internal)?;
        events::changed(conn, &before, &after, ctx).await?;
        Ok(after)
    }
}
