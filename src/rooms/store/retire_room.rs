//! `room.retire` (SPEC §8): a room leaves the catalogue, its history stays;
//! with `cancelFutureBookings` its future bookings are cancelled whole
//! (every linked room) in the same transaction, else they refuse it.

use serde::Serialize;

use crate::catalogue::{self, domain::Room};
use crate::command::{Command, CommandError, Ctx, On, Operation, Role};
use crate::db::Conn;

pub static RETIRE: Operation = Operation::new("room.retire", &[Role::Admin]).changes_catalogue();

#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Retire {
    pub cancel_future_bookings: bool,
}

/// Retires a room; with `cancel_future_bookings` its future bookings are
/// cancelled whole (every linked room) in the same transaction.
#[derive(Debug, Clone)]
pub struct RetireRoom {
    pub code: String,
    pub retire: Retire,
}

impl Command for RetireRoom {
    type Output = Room;

    fn operation(&self) -> &'static Operation {
        &RETIRE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::to_value(On { id: &self.code, change: &self.retire }).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Room, CommandError> {
        let (room, future) =
            catalogue::store::retire(conn, &self.code, self.retire.cancel_future_bookings, ctx.now).await?;
        super::cancel_many(conn, &future, ctx, false).await?;
        Ok(room)
    }
}
