//! `room.create` and `room.update`: the admin's changes of the catalogue
//! (retiring a room cancels bookings, so it is the booking side's:
//! `rooms::store::retire_room`). Each is declared as changing the
//! catalogue, so the pipeline tells this process's snapshot to reload at once.

use super::domain::{NewRoom, Room, RoomPatch};
use super::store;
use crate::command::{Command, CommandError, Ctx, On, Operation, Role};
use crate::db::Conn;

pub static CREATE: Operation = Operation::new("room.create", &[Role::Admin]).creates().changes_catalogue();
pub static UPDATE: Operation = Operation::new("room.update", &[Role::Admin]).changes_catalogue();

#[derive(Debug, Clone)]
pub struct CreateRoom(pub NewRoom);

impl Command for CreateRoom {
    type Output = Room;

    fn operation(&self) -> &'static Operation {
        &CREATE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::to_value(&self.0).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Room, CommandError> {
        store::create(conn, &self.0, ctx.now).await
    }
}

#[derive(Debug, Clone)]
pub struct PatchRoom {
    pub code: String,
    pub patch: RoomPatch,
}

impl Command for PatchRoom {
    type Output = Room;

    fn operation(&self) -> &'static Operation {
        &UPDATE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::to_value(On { id: &self.code, change: &self.patch }).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Room, CommandError> {
        store::patch(conn, &self.code, &self.patch, ctx.now).await
    }
}
