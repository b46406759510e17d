//! Booking by inviting a room (SPEC §17) is the JSON API's booking command:
//! these wrappers declare the very same operations (`booking.create`,
//! `series.create`: same roles, idempotency scope, metrics), run the same
//! work, and in that same transaction bind the client's UID and resource
//! name to what was booked — so an event is never booked without its UID,
//! nor its UID kept for a refused booking.

use serde_json::json;

use super::store::{self, Target};
use crate::command::{Command, CommandError, Ctx, Operation};
use crate::db::Conn;
use crate::rooms::store::CreateBooking;
use crate::rooms::Booking;
use crate::series::{CreateSeries, Created};

/// The client's names for what a `PUT` books.
#[derive(Debug, Clone)]
pub struct Names {
    pub staff_id: i64,
    pub uid: String,
    pub name: String,
}

/// `booking.create` with the event's UID.
pub struct InviteRooms {
    pub booking: CreateBooking,
    pub names: Names,
}

impl Command for InviteRooms {
    type Output = Booking;

    fn operation(&self) -> &'static Operation {
        self.booking.operation()
    }

    fn fingerprint(&self) -> serde_json::Value {
        json!({ "booking": self.booking.fingerprint(), "uid": self.names.uid, "name": self.names.name })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Booking, CommandError> {
        let booking = self.booking.run(conn, ctx).await?;
        let n = &self.names;
        store::bind(conn, n.staff_id, &n.uid, &n.name, Target::Booking(booking.id), ctx.now).await?;
        Ok(booking)
    }
}

/// `series.create` with the event's UID.
pub struct InviteSeries {
    pub series: CreateSeries,
    pub names: Names,
}

impl Command for InviteSeries {
    type Output = Created;

    fn operation(&self) -> &'static Operation {
        self.series.operation()
    }

    fn fingerprint(&self) -> serde_json::Value {
        json!({ "series": self.series.fingerprint(), "uid": self.names.uid, "name": self.names.name })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Created, CommandError> {
        let created = self.series.run(conn, ctx).await?;
        let n = &self.names;
        store::bind(conn, n.staff_id, &n.uid, &n.name, Target::Series(created.series.id), ctx.now).await?;
        Ok(created)
    }
}
