//! What creating or changing a room asks for, parsed with the failing
//! field named.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use super::desk::{ensure_shape, Assignee, Place, RoomKind, Shape};
use super::{bounded, Equipment, Label, Room, RoomCode, DEFAULT_AREA, DEFAULT_CAPACITY, DEFAULT_MAX_DURATION_MINUTES};
use super::{MAX_CAPACITY, MAX_DURATION_LIMIT, MAX_HORIZON_DAYS};
use crate::error::ApiError;

/// A field that may be sent as null to clear it: absent is `None`, null
/// `Some(None)`.
pub(crate) fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// `POST /api/rooms`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "CreateRoomRequest")]
pub struct NewRoomBody {
    pub code: String,
    pub name: String,
    pub area: Option<String>,
    pub capacity: Option<i64>,
    pub equipment: Option<Vec<String>>,
    pub suite: Option<String>,
    pub position: Option<i64>,
    pub check_in_required: Option<bool>,
    pub approval_required: Option<bool>,
    pub max_duration_minutes: Option<i64>,
    pub horizon_days: Option<i64>,
    /// Setup time before each meeting, minutes (0-240, default 0; SPEC §24).
    pub buffer_before_minutes: Option<i64>,
    /// Cleanup time after each meeting, minutes (0-240, default 0).
    pub buffer_after_minutes: Option<i64>,
    /// `room` (default) or `desk` (SPEC §28).
    pub kind: Option<String>,
    /// A desk's holder, by username.
    pub assigned_to: Option<String>,
    /// Its place on the area's plan, fractions 0-1 (both or neither).
    pub x: Option<f64>,
    pub y: Option<f64>,
}

/// `PATCH /api/rooms/{code}`: absent fields stay; `suite` and `horizonDays`
/// may be set to null to clear them.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "UpdateRoomRequest")]
pub struct RoomPatchBody {
    pub name: Option<String>,
    pub area: Option<String>,
    pub capacity: Option<i64>,
    pub equipment: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    pub suite: Option<Option<String>>,
    pub position: Option<i64>,
    pub check_in_required: Option<bool>,
    pub approval_required: Option<bool>,
    pub max_duration_minutes: Option<i64>,
    #[serde(default, deserialize_with = "present")]
    pub horizon_days: Option<Option<i64>>,
    pub buffer_before_minutes: Option<i64>,
    pub buffer_after_minutes: Option<i64>,
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub assigned_to: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    pub x: Option<Option<f64>>,
    #[serde(default, deserialize_with = "present")]
    pub y: Option<Option<f64>>,
}

/// A valid new room; `position` None means "after the last room of the area".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewRoom {
    pub code: RoomCode,
    pub name: Label,
    pub area: Label,
    pub capacity: i32,
    pub equipment: Equipment,
    pub suite: Option<Label>,
    pub position: Option<i32>,
    pub check_in_required: bool,
    pub approval_required: bool,
    pub max_duration_minutes: i32,
    pub horizon_days: Option<i32>,
    pub buffers: Buffers,
    pub kind: RoomKind,
    pub assigned_to: Option<Assignee>,
    pub place: Option<Place>,
}

/// A room's setup and cleanup time, minutes (SPEC §24).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Buffers {
    pub before_minutes: i32,
    pub after_minutes: i32,
}

/// The longest buffer on either side.
pub const MAX_BUFFER_MINUTES: i32 = 240;

fn buffer(field: &str, minutes: i64) -> Result<i32, ApiError> {
    bounded(field, minutes, 0, MAX_BUFFER_MINUTES.into())
}

impl NewRoom {
    pub fn parse(body: NewRoomBody) -> Result<Self, ApiError> {
        let new = NewRoom {
            code: RoomCode::parse("code", &body.code)?,
            name: Label::parse("name", &body.name)?,
            area: Label::parse("area", body.area.as_deref().unwrap_or(DEFAULT_AREA))?,
            capacity: bounded("capacity", body.capacity.unwrap_or(DEFAULT_CAPACITY.into()), 1, MAX_CAPACITY.into())?,
            equipment: Equipment::parse("equipment", body.equipment.as_deref().unwrap_or_default())?,
            suite: body.suite.as_deref().map(|s| Label::parse("suite", s)).transpose()?,
            position: body.position.map(|p| bounded("position", p, 1, 100_000)).transpose()?,
            check_in_required: body.check_in_required.unwrap_or(false),
            approval_required: body.approval_required.unwrap_or(false),
            max_duration_minutes: bounded(
                "maxDurationMinutes",
                body.max_duration_minutes.unwrap_or(DEFAULT_MAX_DURATION_MINUTES.into()),
                1,
                MAX_DURATION_LIMIT.into(),
            )?,
            horizon_days: body
                .horizon_days
                .map(|d| bounded("horizonDays", d, 1, MAX_HORIZON_DAYS.into()))
                .transpose()?,
            buffers: Buffers {
                before_minutes: buffer("bufferBeforeMinutes", body.buffer_before_minutes.unwrap_or(0))?,
                after_minutes: buffer("bufferAfterMinutes", body.buffer_after_minutes.unwrap_or(0))?,
            },
            kind: body.kind.as_deref().map(|k| RoomKind::parse("kind", k)).transpose()?.unwrap_or_default(),
            assigned_to: body.assigned_to.as_deref().map(|a| Assignee::parse("assignedTo", a)).transpose()?,
            place: Place::parse(body.x, body.y)?,
        };
        ensure_shape(&Shape {
            kind: new.kind,
            buffer_before_minutes: new.buffers.before_minutes,
            buffer_after_minutes: new.buffers.after_minutes,
            in_suite: new.suite.is_some(),
            assigned: new.assigned_to.is_some(),
        })?;
        Ok(new)
    }
}

/// A valid change of a room's attributes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoomPatch {
    pub name: Option<Label>,
    pub area: Option<Label>,
    pub capacity: Option<i32>,
    pub equipment: Option<Equipment>,
    pub suite: Option<Option<Label>>,
    pub position: Option<i32>,
    pub check_in_required: Option<bool>,
    pub approval_required: Option<bool>,
    pub max_duration_minutes: Option<i32>,
    pub horizon_days: Option<Option<i32>>,
    pub buffer_before_minutes: Option<i32>,
    pub buffer_after_minutes: Option<i32>,
    pub kind: Option<RoomKind>,
    pub assigned_to: Option<Option<Assignee>>,
    /// `Some(None)` takes the room off the plan.
    pub place: Option<Option<Place>>,
}

impl RoomPatch {
    pub fn parse(body: RoomPatchBody) -> Result<Self, ApiError> {
        Ok(RoomPatch {
            name: body.name.as_deref().map(|n| Label::parse("name", n)).transpose()?,
            area: body.area.as_deref().map(|a| Label::parse("area", a)).transpose()?,
            capacity: body.capacity.map(|c| bounded("capacity", c, 1, MAX_CAPACITY.into())).transpose()?,
            equipment: body.equipment.as_deref().map(|e| Equipment::parse("equipment", e)).transpose()?,
            suite: body.suite.map(|s| s.as_deref().map(|s| Label::parse("suite", s)).transpose()).transpose()?,
            position: body.position.map(|p| bounded("position", p, 1, 100_000)).transpose()?,
            check_in_required: body.check_in_required,
            approval_required: body.approval_required,
            max_duration_minutes: body
                .max_duration_minutes
                .map(|m| bounded("maxDurationMinutes", m, 1, MAX_DURATION_LIMIT.into()))
                .transpose()?,
            horizon_days: body
                .horizon_days
                .map(|h| h.map(|d| bounded("horizonDays", d, 1, MAX_HORIZON_DAYS.into())).transpose())
                .transpose()?,
            buffer_before_minutes: body.buffer_before_minutes.map(|m| buffer("bufferBeforeMinutes", m)).transpose()?,
            buffer_after_minutes: body.buffer_after_minutes.map(|m| buffer("bufferAfterMinutes", m)).transpose()?,
            kind: body.kind.as_deref().map(|k| RoomKind::parse("kind", k)).transpose()?,
            assigned_to: body
                .assigned_to
                .map(|a| a.as_deref().map(|a| Assignee::parse("assignedTo", a)).transpose())
                .transpose()?,
            place: match (body.x, body.y) {
                (None, None) => None,
                (x, y) => Some(Place::parse(x.flatten(), y.flatten())?),
            },
        })
    }

    /// The room with this change applied, refused when a desk would not
    /// have a desk's shape (SPEC §28).
    pub fn apply_checked(&self, room: &Room) -> Result<Room, ApiError> {
        let next = self.apply(room);
        ensure_shape(&Shape::of(&next))?;
        Ok(next)
    }

    /// The room with this change applied.
    pub fn apply(&self, room: &Room) -> Room {
        let mut r = room.clone();
        if let Some(v) = &self.name {
            r.name = v.as_str().to_owned();
        }
        if let Some(v) = &self.area {
            r.area = v.as_str().to_owned();
        }
        if let Some(v) = self.capacity {
            r.capacity = v;
        }
        if let Some(v) = &self.equipment {
            r.equipment = v.tags();
        }
        if let Some(v) = &self.suite {
            r.suite = v.as_ref().map(|s| s.as_str().to_owned());
        }
        if let Some(v) = self.position {
            r.position = v;
        }
        if let Some(v) = self.check_in_required {
            r.check_in_required = v;
        }
        if let Some(v) = self.approval_required {
            r.approval_required = v;
        }
        if let Some(v) = self.max_duration_minutes {
            r.max_duration_minutes = v;
        }
        if let Some(v) = self.horizon_days {
            r.horizon_days = v;
        }
        if let Some(v) = self.buffer_before_minutes {
            r.buffer_before_minutes = v;
        }
        if let Some(v) = self.buffer_after_minutes {
            r.buffer_after_minutes = v;
        }
        if let Some(v) = self.kind {
            r.kind = v;
        }
        if let Some(v) = &self.assigned_to {
            r.assigned_to = v.as_ref().map(|a| a.as_str().to_owned());
        }
        if let Some(v) = self.place {
            r.x = v.map(|p| p.x);
            r.y = v.map(|p| p.y);
        }
        r
    }
}
