//! `booking.move`: new times (and optionally a new title, other rooms or
//! another privacy, SPEC §26)
//! for a live booking, re-checked like a new one. Each room copy is
//! replaced in room order; the deleted old copy no longer counts, so a move
//! never conflicts with its own old time. Other rooms (a calendar app's
//! invitation changed, SPEC §17) are linked and checked like a new
//! booking's; the rooms left are recorded in the history.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde::Serialize;

use super::{claim_room, lock_for};
use crate::command::{Command, CommandError, Ctx, On, Operation, Role};
use crate::db::schema::{reservation, reservation_room};
use crate::db::Conn;
use crate::error::ApiError;
use crate::rooms::access::Act;
use crate::rooms::booking::{find, Booking};
use crate::rooms::domain::{RequestedRooms, TimeRange, Title};
use crate::rooms::{events, rules};

pub static MOVE: Operation = Operation::new("booking.move", &[Role::Staff, Role::Admin, Role::Integration]);

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    #[serde(flatten)]
    pub range: TimeRange,
    pub title: Option<Title>,
    pub expected_version: Option<i32>,
    /// Other rooms (absent: the booking keeps its rooms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rooms: Option<RequestedRooms>,
    /// Private or not from now on (absent: as it was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub private: Option<bool>,
}

#[derive(Debug, Clone)]
pub struct MoveBooking {
    pub id: i64,
    pub change: Change,
}

impl Command for MoveBooking {
    type Output = Booking;

    fn operation(&self) -> &'static Operation {
        &MOVE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::to_value(On { id: self.id, change: &self.change }).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Booking, CommandError> {
        move_to(conn, self.id, &self.change, ctx).await
    }
}

async fn move_to(conn: &mut Conn, id: i64, change: &Change, ctx: &Ctx<'_>) -> Result<Booking, CommandError> {
    change.range.ensure_not_past(ctx.now)?;
    let quota = rules::Quota::lock(conn, ctx).await?;
    let current_rooms = find(conn, id).await?.ok_or_else(|| ApiError::not_found("booking"))?.rooms;
    let wanted = change.rooms.as_ref().map_or(current_rooms.as_slice(), |r| r.codes());
    let rooms = rules::resolve(conn, wanted, &change.range, ctx).await?;
    let before = lock_for(conn, id, ctx.principal, Act::Change, change.expected_version).await?;
    quota.ensure_room_for(conn, ctx, 1, Some(id)).await?;
    let title = change.title.as_ref().map_or(before.title.as_str(), Title::as_str).to_owned();
    let retimed = change.range != before.time();
    let new_rooms = rooms.codes();
    let rehoused = new_rooms != before.rooms;
    let (status, checked_in_at) =
        rules::after_move(before.status, before.checked_in_at, retimed || rehoused, &rooms, ctx);
    diesel::update(reservation::table.find(id))
        .set((
            reservation::title.eq(&title),
            reservation::private.eq(change.private.unwrap_or(before.private)),
            reservation::starts_at.eq(change.range.starts_at()),
            reservation::ends_at.eq(change.range.ends_at()),
            reservation::status.eq(status.as_str()),
            reservation::is_exception.eq(before.series_id.is_some() || before.is_exception),
            reservation::checked_in_at.eq(checked_in_at),
            reservation::check_in_required.eq(if rehoused {
                rooms.check_in_required()
            } else {
                before.check_in_required
            }),
            reservation::version.eq(reservation::version + 1),
            reservation::updated_at.eq(ctx.now),
        ))
        .execute(conn)
        .await?;
    if rehoused {
        // Every old copy goes (room order), then every new one is claimed.
        for code in &before.rooms {
            diesel::delete(reservation_room::table.find((id, code))).execute(conn).await?;
        }
        for code in &new_rooms {
            claim_room(conn, id, code, &change.range).await?;
        }
    } else if retimed {
        for code in &new_rooms {
            diesel::delete(reservation_room::table.find((id, code))).execute(conn).await?;
            claim_room(conn, id, code, &change.range).await?;
        }
    }
    let after = find(conn, id).await?.ok_or_else(ApiError::internal)?;
    events::changed(conn, &before, &after, ctx).await?;
    Ok(after)
}
