//! `room.create` and `room.update`: the admin's changes of the catalogue
//! (retiring a room cancels bookings, so it is the booking side's:
//! `rooms::store::retire_room`). Each is declared as changing the
//! catalogue, so the pipeline tells this process's snapshot to reload at once.

use super::areas::{self, Area, AreaPatch, NewArea};
use super::domain::{NewRoom, Room, RoomPatch};
use super::holidays::{self, Days, HolidayCalendar, NewCalendar};
use super::store;
use crate::command::{Command, CommandError, Ctx, On, Operation, Role};
use crate::db::Conn;

pub static CREATE: Operation = Operation::new("room.create", &[Role::Admin]).creates().changes_catalogue();
pub static UPDATE: Operation = Operation::new("room.update", &[Role::Admin]).changes_catalogue();
pub static CREATE_AREA: Operation = Operation::new("area.create", &[Role::Admin]).creates().changes_catalogue();
pub static UPDATE_AREA: Operation = Operation::new("area.update", &[Role::Admin]).changes_catalogue();
pub static CREATE_HOLIDAY_CALENDAR: Operation =
    Operation::new("holiday_calendar.create", &[Role::Admin]).creates().changes_catalogue();
pub static REPLACE_HOLIDAYS: Operation =
    Operation::new("holiday_calendar.replace_days", &[Role::Admin]).changes_catalogue();

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
        store::create(conn, &self.0, ctx.policy.timezone, ctx.now).await
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
        store::patch(conn, &self.code, &self.patch, ctx.policy.timezone, ctx.now).await
    }
}

/// `area.create` (SPEC §24).
#[derive(Debug, Clone)]
pub struct CreateArea(pub NewArea);

impl Command for CreateArea {
    type Output = Area;

    fn operation(&self) -> &'static Operation {
        &CREATE_AREA
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::to_value(&self.0).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Area, CommandError> {
        areas::create(conn, &self.0, ctx.policy.timezone, ctx.now).await
    }
}

/// `area.update`.
#[derive(Debug, Clone)]
pub struct PatchArea {
    pub code: String,
    pub patch: AreaPatch,
}

impl Command for PatchArea {
    type Output = Area;

    fn operation(&self) -> &'static Operation {
        &UPDATE_AREA
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::to_value(On { id: &self.code, change: &self.patch }).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Area, CommandError> {
        areas::patch(conn, &self.code, &self.patch, ctx.policy.timezone, ctx.now).await
    }
}

/// `holiday_calendar.create` (SPEC §24).
#[derive(Debug, Clone)]
pub struct CreateHolidayCalendar(pub NewCalendar);

impl Command for CreateHolidayCalendar {
    type Output = HolidayCalendar;

    fn operation(&self) -> &'static Operation {
        &CREATE_HOLIDAY_CALENDAR
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::to_value(&self.0).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<HolidayCalendar, CommandError> {
        holidays::create(conn, &self.0, ctx.now).await
    }
}

/// `holiday_calendar.replace_days`: the calendar's days, replaced whole.
#[derive(Debug, Clone)]
pub struct ReplaceHolidays {
    pub code: String,
    pub days: Days,
}

impl Command for ReplaceHolidays {
    type Output = HolidayCalendar;

    fn operation(&self) -> &'static Operation {
        &REPLACE_HOLIDAYS
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::to_value(On { id: &self.code, change: &self.days }).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<HolidayCalendar, CommandError> {
        holidays::replace_days(conn, &self.code, &self.days, ctx.now).await
    }
}
