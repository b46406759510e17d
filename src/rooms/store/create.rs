//! `booking.create`: one room or a linked run of rooms, on all or none (SPEC §2).

use serde::Serialize;

use super::{insert, NewRows};
use crate::command::{Command, CommandError, Ctx, Operation, ResultCounter, Role};
use crate::db::Conn;
use crate::error::ApiError;
use crate::error::ErrorCode;
use crate::rooms::booking::{find, Booking};
use crate::rooms::desks::When;
use crate::rooms::domain::{RequestedRooms, Title};
use crate::rooms::{access, events, rules};

pub static CREATE: Operation =
    Operation::new("booking.create", &[Role::Staff, Role::Admin, Role::Integration, Role::Display])
        .creates()
        .counted_in(ResultCounter::Bookings);

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateBooking {
    pub title: Title,
    pub rooms: RequestedRooms,
    /// Instants, or a desk's date and unit (SPEC §28).
    #[serde(flatten)]
    pub when: When,
    pub organizer_name: Title,
    /// SPEC §26: its title, organizer and attendees for the organizer,
    /// their delegates and admins only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub private: bool,
}

impl Command for CreateBooking {
    type Output = Booking;

    fn operation(&self) -> &'static Operation {
        &CREATE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Booking, CommandError> {
        create(conn, self, ctx).await
    }
}

async fn create(conn: &mut Conn, new: &CreateBooking, ctx: &Ctx<'_>) -> Result<Booking, CommandError> {
    access::ensure_may_book(ctx.principal, new.rooms.codes()).map_err(CommandError::Invalid)?;
    // Inside the command, so that a retry after the start time replays the
    // first answer instead of being judged afresh.
    if let When::Range(range) = &new.when {
        range.ensure_not_past(ctx.now)?;
    }
    let quota = rules::Quota::lock(conn, ctx).await?;
    let (rooms, range) = rules::resolve_when(conn, new.rooms.codes(), &new.when, ctx).await?;
    if matches!(new.when, When::Desk(_)) && range.ends_at() <= ctx.now {
        // A desk's day or half may be taken while it lasts: who comes in
        // at ten books this morning's desk.
        return Err(ApiError::worded(ErrorCode::BookingInPast, serde_json::json!({ "field": "date" })).into());
    }
    quota.ensure_room_for(conn, ctx, 1, None).await?;
    let row = NewRows {
        title: new.title.as_str(),
        organizer_name: new.organizer_name.as_str(),
        status: rules::initial_status(&rooms, ctx),
        private: new.private,
        check_in_required: rooms.check_in_required(),
        series: None,
    };
    let id = insert(conn, &row, range, &rooms.codes(), ctx).await?;
    let booking = find(conn, id).await?.ok_or_else(ApiError::internal)?;
    events::created(conn, &[&booking], ctx).await?;
    Ok(booking)
}
