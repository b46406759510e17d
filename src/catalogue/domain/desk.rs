//! Desks and places on a floor plan (SPEC §28): a room's kind, where it
//! sits on its area's plan, and the shape a desk must have (no buffers, no
//! suite; only a desk is assigned to someone). No I/O.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Room;
use crate::error::ApiError;

/// A room (booked by start and end) or a desk (booked by day or half day).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
    diesel::deserialize::FromSqlRow,
)]
#[serde(rename_all = "lowercase")]
pub enum RoomKind {
    #[default]
    Room,
    Desk,
}

impl RoomKind {
    pub fn parse(field: &str, raw: &str) -> Result<Self, ApiError> {
        match raw.trim() {
            "room" => Ok(RoomKind::Room),
            "desk" => Ok(RoomKind::Desk),
            _ => Err(ApiError::malformed(field, "must be `room` or `desk`")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RoomKind::Room => "room",
            RoomKind::Desk => "desk",
        }
    }

    pub fn is_desk(self) -> bool {
        self == RoomKind::Desk
    }
}

impl diesel::deserialize::FromSql<diesel::sql_types::Text, diesel::pg::Pg> for RoomKind {
    fn from_sql(bytes: diesel::pg::PgValue<'_>) -> diesel::deserialize::Result<Self> {
        let text = <String as diesel::deserialize::FromSql<diesel::sql_types::Text, diesel::pg::Pg>>::from_sql(bytes)?;
        RoomKind::parse("kind", &text).map_err(|_| format!("unknown room kind {text}").into())
    }
}

/// A fraction of the plan's width or height, 0 to 1 inclusive: never NaN,
/// so it compares as a whole number would.
#[derive(
    Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize, JsonSchema, diesel::deserialize::FromSqlRow,
)]
#[serde(transparent)]
pub struct Fraction(f64);

impl Eq for Fraction {}

impl Fraction {
    pub fn parse(field: &str, value: f64) -> Result<Self, ApiError> {
        if !(0.0..=1.0).contains(&value) {
            return Err(ApiError::malformed(field, "must be a fraction of the plan, 0-1"));
        }
        Ok(Fraction(value))
    }

    /// The form's text ("0.25"); empty is none.
    pub fn parse_text(field: &str, raw: &str) -> Result<Option<Self>, ApiError> {
        match raw.trim() {
            "" => Ok(None),
            t => t
                .parse::<f64>()
                .map_err(|_| ApiError::malformed(field, "must be a fraction of the plan, 0-1"))
                .and_then(|v| Self::parse(field, v))
                .map(Some),
        }
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

impl diesel::deserialize::FromSql<diesel::sql_types::Double, diesel::pg::Pg> for Fraction {
    fn from_sql(bytes: diesel::pg::PgValue<'_>) -> diesel::deserialize::Result<Self> {
        let v = <f64 as diesel::deserialize::FromSql<diesel::sql_types::Double, diesel::pg::Pg>>::from_sql(bytes)?;
        Fraction::parse("x", v).map_err(|_| format!("plan position {v} outside 0-1").into())
    }
}

/// Where a room or desk sits on its area's plan: both fractions or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Place {
    pub x: Fraction,
    pub y: Fraction,
}

impl Place {
    /// `x` and `y` as given: both, or neither (`None`); one alone is a 400
    /// naming the missing one.
    pub fn parse(x: Option<f64>, y: Option<f64>) -> Result<Option<Self>, ApiError> {
        match (x, y) {
            (None, None) => Ok(None),
            (Some(_), None) => Err(ApiError::malformed("y", "give both x and y, or neither")),
            (None, Some(_)) => Err(ApiError::malformed("x", "give both x and y, or neither")),
            (Some(x), Some(y)) => Ok(Some(Place { x: Fraction::parse("x", x)?, y: Fraction::parse("y", y)? })),
        }
    }
}

/// A username a desk is assigned to, as typed (whether it names a person
/// is the database's answer, inside the catalogue's transaction).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assignee(String);

impl Assignee {
    pub fn parse(field: &str, raw: &str) -> Result<Self, ApiError> {
        let t = raw.trim();
        if !(1..=100).contains(&t.chars().count()) {
            return Err(ApiError::malformed(field, "must be a username"));
        }
        crate::text::ensure_plain(field, t)?;
        Ok(Assignee(t.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What [`ensure_shape`] looks at.
pub struct Shape {
    pub kind: RoomKind,
    pub buffer_before_minutes: i32,
    pub buffer_after_minutes: i32,
    pub in_suite: bool,
    pub assigned: bool,
}

impl Shape {
    pub fn of(room: &Room) -> Shape {
        Shape {
            kind: room.kind,
            buffer_before_minutes: room.buffer_before_minutes,
            buffer_after_minutes: room.buffer_after_minutes,
            in_suite: room.suite.is_some(),
            assigned: room.assigned_to.is_some(),
        }
    }
}

/// The shape a desk must have (SPEC §28): no buffers, no suite (a desk
/// books alone); and only a desk is assigned. A 400 naming the field (the
/// database's `room_desk_alone` says the same, should a writer forget).
pub fn ensure_shape(shape: &Shape) -> Result<(), ApiError> {
    if shape.kind.is_desk() {
        if shape.buffer_before_minutes != 0 {
            return Err(desk_rule("bufferBeforeMinutes", "a desk has no buffers"));
        }
        if shape.buffer_after_minutes != 0 {
            return Err(desk_rule("bufferAfterMinutes", "a desk has no buffers"));
        }
        if shape.in_suite {
            return Err(desk_rule("suite", "a desk books alone: no suite"));
        }
    } else if shape.assigned {
        return Err(ApiError::malformed("assignedTo", "only a desk is assigned to someone"));
    }
    Ok(())
}

/// A 400 naming `field` that a desk's shape refused (`rule: desk`, so a
/// form words it as the desk rule rather than the field's format).
fn desk_rule(field: &str, reason: &str) -> ApiError {
    let mut err = ApiError::malformed(field, reason);
    err.details["rule"] = serde_json::json!("desk");
    err
}
