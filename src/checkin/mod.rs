//! Check-in and no-shows (SPEC §11). A booking of a room that needs a
//! check-in is checked in by its organizer, an admin or the room's door
//! display, inside the window from `open` before its start until `grace`
//! after it; nobody checked in by then, the sweeper releases it
//! (`release`). A series released again and again is struck (`strikes`),
//! and restored by its organizer (`restore`).

pub mod release;
pub mod restore;
pub mod strikes;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::schema::reservation;
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};
use crate::rooms::access::Act;
use crate::rooms::booking::{find, Booking};
use crate::rooms::domain::Status;
use crate::rooms::events;
use crate::rooms::store::{invalid_state, lock_for};

pub use release::ReleaseNoShows;

pub static CHECK_IN: Operation =
    Operation::new("booking.check_in", &[Role::Staff, Role::Admin, Role::Integration, Role::Display]);

#[derive(Debug, Clone, Copy)]
pub struct CheckIn {
    pub id: i64,
}

impl Command for CheckIn {
    type Output = Booking;

    fn operation(&self) -> &'static Operation {
        &CHECK_IN
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::json!(self.id)
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Booking, CommandError> {
        check_in(conn, self.id, ctx).await
    }
}

async fn check_in(conn: &mut Conn, id: i64, ctx: &Ctx<'_>) -> Result<Booking, CommandError> {
    let before = lock_for(conn, id, ctx.principal, Act::CheckIn, None).await?;
    if !before.check_in_required {
        return Err(ApiError::worded(ErrorCode::CheckInNotRequired, serde_json::json!({})).into());
    }
    if before.status != Status::Confirmed {
        return Err(invalid_state(before.status).into());
    }
    if before.checked_in_at.is_some() {
        return Ok(before);
    }
    let (opens, closes) = ctx.policy.check_in_window(before.starts_at);
    if ctx.now < opens || ctx.now >= closes {
        return Err(ApiError::worded(
            ErrorCode::CheckInClosed,
            serde_json::json!({
                "opensAt": opens,
                "closesAt": closes,
                "opensMinutesBefore": ctx.policy.check_in_open.num_minutes(),
                "closesMinutesAfter": ctx.policy.check_in_grace.num_minutes(),
            }),
        )
        .into());
    }
    diesel::update(reservation::table.find(id))
        .set((
            reservation::checked_in_at.eq(ctx.now),
            reservation::version.eq(reservation::version + 1),
            reservation::updated_at.eq(ctx.now),
        ))
        .execute(conn)
        .await?;
    let after = find(conn, id).await?.ok_or_else(ApiError::internal)?;
    events::changed(conn, &before, &after, ctx).await?;
    Ok(after)
}
