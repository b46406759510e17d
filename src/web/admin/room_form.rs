//! The room form of `/admin/rooms` (SPEC §8, §24): its fields read into
//! the catalogue's own requests (the JSON fields in snake_case), and the
//! values it shows — a room's, a blank one's, or what was typed when refused.

use crate::catalogue::domain::{NewRoom, NewRoomBody, Room, RoomPatch, RoomPatchBody};
use crate::error::ApiError;
use crate::idempotency::IdempotencyKey;
use crate::web::form::checked;
use crate::web::FormData;

fn number(form: &FormData, name: &str, field: &str) -> Result<Option<i64>, ApiError> {
    match form.get(name).trim() {
        "" => Ok(None),
        raw => raw.parse::<i64>().map(Some).map_err(|_| ApiError::malformed(field, "must be a whole number")),
    }
}

fn text(form: &FormData, name: &str) -> Option<String> {
    Some(form.get(name).trim().to_owned()).filter(|t| !t.is_empty())
}

/// A plan position typed as a fraction ("0.25"); empty is none.
fn fraction(form: &FormData, name: &str) -> Result<Option<f64>, ApiError> {
    Ok(crate::catalogue::domain::Fraction::parse_text(name, form.get(name))?.map(|f| f.get()))
}

fn tags(form: &FormData) -> Vec<String> {
    form.get("equipment").split(',').map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned).collect()
}

pub fn new_room(form: &FormData) -> Result<NewRoom, ApiError> {
    NewRoom::parse(NewRoomBody {
        code: form.get("code").to_owned(),
        name: form.get("name").to_owned(),
        area: text(form, "area"),
        capacity: number(form, "capacity", "capacity")?,
        equipment: Some(tags(form)),
        suite: text(form, "suite"),
        position: number(form, "position", "position")?,
        check_in_required: Some(checked(form, "check_in_required")),
        approval_required: Some(checked(form, "approval_required")),
        max_duration_minutes: number(form, "max_duration_minutes", "maxDurationMinutes")?,
        horizon_days: number(form, "horizon_days", "horizonDays")?,
        buffer_before_minutes: number(form, "buffer_before_minutes", "bufferBeforeMinutes")?,
        buffer_after_minutes: number(form, "buffer_after_minutes", "bufferAfterMinutes")?,
        kind: text(form, "kind"),
        assigned_to: text(form, "assigned_to"),
        x: fraction(form, "x")?,
        y: fraction(form, "y")?,
    })
}

/// The edit form sends every field: empty suite and horizon clear them.
pub fn room_patch(form: &FormData) -> Result<RoomPatch, ApiError> {
    RoomPatch::parse(RoomPatchBody {
        name: Some(form.get("name").to_owned()),
        area: Some(form.get("area").to_owned()),
        capacity: number(form, "capacity", "capacity")?,
        equipment: Some(tags(form)),
        suite: Some(text(form, "suite")),
        position: number(form, "position", "position")?,
        check_in_required: Some(checked(form, "check_in_required")),
        approval_required: Some(checked(form, "approval_required")),
        max_duration_minutes: number(form, "max_duration_minutes", "maxDurationMinutes")?,
        horizon_days: Some(number(form, "horizon_days", "horizonDays")?),
        buffer_before_minutes: Some(number(form, "buffer_before_minutes", "bufferBeforeMinutes")?.unwrap_or(0)),
        buffer_after_minutes: Some(number(form, "buffer_after_minutes", "bufferAfterMinutes")?.unwrap_or(0)),
        kind: text(form, "kind"),
        assigned_to: Some(text(form, "assigned_to")),
        x: Some(fraction(form, "x")?),
        y: Some(fraction(form, "y")?),
    })
}

impl RoomForm {
    /// `(value, catalogue key, chosen)` of each kind.
    pub fn kinds(&self) -> [(&'static str, &'static str, bool); 2] {
        let desk = self.kind == "desk";
        [("room", "plan-kind-room", !desk), ("desk", "plan-kind-desk", desk)]
    }

    pub(super) fn of(room: &Room) -> Self {
        RoomForm {
            code: room.code.clone(),
            code_locked: true,
            name: room.name.clone(),
            area: room.area.clone(),
            capacity: room.capacity.to_string(),
            equipment: room.equipment.join(", "),
            suite: room.suite.clone().unwrap_or_default(),
            position: room.position.to_string(),
            check_in_required: room.check_in_required,
            approval_required: room.approval_required,
            max_duration_minutes: room.max_duration_minutes.to_string(),
            horizon_days: room.horizon_days.map(|d| d.to_string()).unwrap_or_default(),
            buffers: [room.buffer_before_minutes, room.buffer_after_minutes].map(|m| m.to_string()),
            kind: room.kind.as_str().to_owned(),
            assigned_to: room.assigned_to.clone().unwrap_or_default(),
            place: [room.x, room.y].map(|f| f.map(|f| f.get().to_string()).unwrap_or_default()),
            idempotency_key: IdempotencyKey::generate().as_str().to_owned(),
        }
    }

    pub(super) fn kept(form: &FormData) -> Self {
        RoomForm {
            code: form.get("code").to_owned(),
            code_locked: false,
            name: form.get("name").to_owned(),
            area: form.get("area").to_owned(),
            capacity: form.get("capacity").to_owned(),
            equipment: form.get("equipment").to_owned(),
            suite: form.get("suite").to_owned(),
            position: form.get("position").to_owned(),
            check_in_required: checked(form, "check_in_required"),
            approval_required: checked(form, "approval_required"),
            max_duration_minutes: form.get("max_duration_minutes").to_owned(),
            horizon_days: form.get("horizon_days").to_owned(),
            buffers: ["buffer_before_minutes", "buffer_after_minutes"].map(|f| form.get(f).to_owned()),
            kind: form.get("kind").to_owned(),
            assigned_to: form.get("assigned_to").to_owned(),
            place: ["x", "y"].map(|f| form.get(f).to_owned()),
            idempotency_key: form.get("idempotency_key").to_owned(),
        }
    }

    /// An empty form; its area is filled from the catalogue when shown.
    pub(super) fn blank() -> Self {
        RoomForm {
            code: String::new(),
            code_locked: false,
            name: String::new(),
            area: String::new(),
            capacity: "8".into(),
            equipment: String::new(),
            suite: String::new(),
            position: String::new(),
            check_in_required: false,
            approval_required: false,
            max_duration_minutes: "720".into(),
            horizon_days: String::new(),
            buffers: ["0".into(), "0".into()],
            kind: "room".into(),
            assigned_to: String::new(),
            place: [String::new(), String::new()],
            idempotency_key: IdempotencyKey::generate().as_str().to_owned(),
        }
    }
}

/// The values of a room form (as typed, kept when refused).
pub struct RoomForm {
    pub code: String,
    /// The code of an existing room cannot change.
    pub code_locked: bool,
    pub name: String,
    pub area: String,
    pub capacity: String,
    pub equipment: String,
    pub suite: String,
    pub position: String,
    pub check_in_required: bool,
    pub approval_required: bool,
    pub max_duration_minutes: String,
    pub horizon_days: String,
    /// Setup and cleanup minutes (SPEC §24), as typed.
    pub buffers: [String; 2],
    /// `room` or `desk` (SPEC §28).
    pub kind: String,
    /// A desk's holder's username.
    pub assigned_to: String,
    /// `x` and `y` on the area's plan, fractions as typed.
    pub place: [String; 2],
    pub idempotency_key: String,
}
