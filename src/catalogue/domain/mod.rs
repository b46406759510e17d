//! The room catalogue's values (SPEC §8) as types that cannot hold invalid
//! values: a room and its attributes here, what a create or a patch asks for
//! in `change`, and the linking rule in `linking` (rooms link only within
//! one suite, as a contiguous run of its positions). No I/O.

mod change;
mod desk;
mod linking;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

pub(crate) use change::present;
pub use change::{NewRoom, NewRoomBody, RoomPatch, RoomPatchBody};
pub use desk::{ensure_shape, Assignee, Fraction, Place, RoomKind, Shape};
pub use linking::{combinations, unknown_room, Bookable, LinkedRooms};

/// Area a room belongs to when none is given. Data, not a text: the same
/// value as the `area` column's default in
/// `migrations/2026-12-01-000001_rooms_as_data/up.sql` (rooms keep it as
/// entered, in every language), so it is the one Hangul literal outside
/// `i18n/` that `tests/api/words_in_catalogues.rs` allows, by name.
pub const DEFAULT_AREA: &str = "본관";
pub const DEFAULT_CAPACITY: i32 = 8;
pub const DEFAULT_MAX_DURATION_MINUTES: i32 = 720;
/// The longest booking any room may allow (a week).
pub const MAX_DURATION_LIMIT: i32 = 10_080;
pub const MAX_HORIZON_DAYS: i32 = 3_650;
pub const MAX_CAPACITY: i32 = 10_000;
const MAX_TAGS: usize = 32;

/// How many rooms a free-room search answers (SPEC §27): the best `limit`
/// by smallest sufficient capacity, 100 unless asked, at most 1,000, so a
/// campus of 5,000 rooms never sends them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchLimit(i64);

impl SearchLimit {
    pub const DEFAULT: SearchLimit = SearchLimit(100);
    pub const MAX: i64 = 1_000;

    /// `None` or empty is the default; anything but a whole number 1-1000 is
    /// a 400 naming `field`.
    pub fn parse(field: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        match raw.map(str::trim) {
            None | Some("") => Ok(Self::DEFAULT),
            Some(raw) => {
                raw.parse::<i64>().ok().filter(|n| (1..=Self::MAX).contains(n)).map(SearchLimit).ok_or_else(|| {
                    ApiError::malformed(field, format!("must be a whole number of rooms, 1-{}", Self::MAX))
                })
            }
        }
    }

    pub fn get(self) -> i64 {
        self.0
    }
}

/// `[A-Za-z0-9][A-Za-z0-9_-]{0,31}`: safe in URLs and file names (`{code}.ics`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct RoomCode(String);

impl RoomCode {
    pub fn parse(field: &str, raw: &str) -> Result<Self, ApiError> {
        let raw = raw.trim();
        let ok = (1..=32).contains(&raw.len())
            && raw.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
            && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !ok {
            return Err(ApiError::malformed(field, "must be 1-32 of [A-Za-z0-9_-], starting with a letter or digit"));
        }
        Ok(RoomCode(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A short label (room name, area, suite): 1-100 characters after trimming,
/// no control characters (`text::is_forbidden`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Label(String);

impl Label {
    pub fn parse(field: &str, raw: &str) -> Result<Self, ApiError> {
        let t = raw.trim();
        let len = t.chars().count();
        if !(1..=100).contains(&len) {
            return Err(ApiError::malformed(field, "must be 1-100 characters"));
        }
        crate::text::ensure_plain(field, t)?;
        Ok(Label(t.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A set of lowercase equipment tags (`projector`, `video`, `whiteboard`):
/// each `[a-z0-9][a-z0-9-]{0,31}`, at most 32. Input is trimmed and
/// lowercased, so "Projector " is `projector`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Equipment(BTreeSet<String>);

impl Equipment {
    pub fn parse<S: AsRef<str>>(field: &str, tags: &[S]) -> Result<Self, ApiError> {
        let mut set = BTreeSet::new();
        for tag in tags {
            let tag = tag.as_ref().trim().to_lowercase();
            let ok = (1..=32).contains(&tag.len())
                && tag.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
                && tag.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !ok {
                return Err(ApiError::malformed(field, format!("`{tag}` is not a tag: use 1-32 of [a-z0-9-]")));
            }
            set.insert(tag);
        }
        if set.len() > MAX_TAGS {
            return Err(ApiError::malformed(field, format!("at most {MAX_TAGS} tags")));
        }
        Ok(Equipment(set))
    }

    /// Tags from a comma-separated text (the admin form).
    pub fn parse_list(field: &str, text: &str) -> Result<Self, ApiError> {
        let tags: Vec<&str> = text.split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
        Self::parse(field, &tags)
    }

    pub fn tags(&self) -> Vec<String> {
        self.0.iter().cloned().collect()
    }
}

pub(crate) fn bounded(field: &str, value: i64, min: i64, max: i64) -> Result<i32, ApiError> {
    if !(min..=max).contains(&value) {
        return Err(ApiError::malformed(field, format!("must be {min}-{max}")));
    }
    Ok(value as i32)
}

/// A room as the API shows it (every attribute of SPEC §8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, diesel::Queryable, diesel::Selectable)]
#[diesel(table_name = crate::db::schema::room)]
#[serde(rename_all = "camelCase")]
pub struct Room {
    pub code: String,
    pub name: String,
    pub area: String,
    /// Seats.
    pub capacity: i32,
    /// Lowercase tags, sorted.
    pub equipment: Vec<String>,
    /// Rooms link only with rooms of the same suite (null: books alone).
    pub suite: Option<String>,
    /// Order inside the area; linked rooms are contiguous in it.
    pub position: i32,
    pub check_in_required: bool,
    pub approval_required: bool,
    pub max_duration_minutes: i32,
    /// How many days ahead the room may be booked (null: no limit).
    pub horizon_days: Option<i32>,
    /// False once retired: kept for history, no new bookings.
    pub active: bool,
    /// Setup time before each meeting, minutes (SPEC §24): a booking
    /// occupies the room from its start less this.
    pub buffer_before_minutes: i32,
    /// Cleanup time after each meeting, minutes: to its end plus this.
    pub buffer_after_minutes: i32,
    /// Its area's IANA time zone (SPEC §24), in which its times are shown
    /// and read. Every area has one (`areas::settle_zones`).
    #[diesel(select_expression = diesel::dsl::sql::<diesel::sql_types::Text>(ROOM_ZONE_SQL))]
    #[diesel(select_expression_type = diesel::expression::SqlLiteral<diesel::sql_types::Text>)]
    pub time_zone: String,
    /// `room` or `desk` (SPEC §28).
    pub kind: RoomKind,
    /// The username a desk is assigned to (null: anyone may book it).
    #[diesel(select_expression = diesel::dsl::sql::<diesel::sql_types::Nullable<diesel::sql_types::Text>>(ROOM_ASSIGNEE_SQL))]
    #[diesel(select_expression_type = diesel::expression::SqlLiteral<diesel::sql_types::Nullable<diesel::sql_types::Text>>)]
    pub assigned_to: Option<String>,
    /// Where it sits on its area's plan, a fraction of the image's width
    /// (null: not placed).
    #[diesel(column_name = plan_x)]
    pub x: Option<Fraction>,
    /// The same of its height.
    #[diesel(column_name = plan_y)]
    pub y: Option<Fraction>,
}

/// A room row's assignee's username, as a column of a query on `room`.
pub const ROOM_ASSIGNEE_SQL: &str = "(SELECT s.username FROM staff_user s WHERE s.id = room.assigned_to)";

/// A room row's area zone, as a column of a query on `room`.
pub const ROOM_ZONE_SQL: &str = "COALESCE((SELECT a.time_zone FROM area a WHERE a.code = room.area), 'UTC')";

impl Room {
    /// The zone its times are in (UTC only if the name were unknown).
    pub fn zone(&self) -> chrono_tz::Tz {
        self.time_zone.parse().unwrap_or(chrono_tz::UTC)
    }
}

/// The active rooms of the installation as the pages show them: ordered by
/// area, then position.
#[derive(Debug, Clone, Default)]
pub struct RoomCatalog {
    rooms: Vec<Room>,
}

impl RoomCatalog {
    pub fn new(mut rooms: Vec<Room>) -> Self {
        rooms.retain(|r| r.active);
        rooms.sort_by(|a, b| (&a.area, a.position, &a.code).cmp(&(&b.area, b.position, &b.code)));
        RoomCatalog { rooms }
    }

    pub fn rooms(&self) -> &[Room] {
        &self.rooms
    }

    pub fn get(&self, code: &str) -> Option<&Room> {
        self.rooms.iter().find(|r| r.code == code)
    }

    /// Areas in order, each once.
    /// The area a page shows: the one asked for when it has rooms, else
    /// the first, else the default area.
    pub fn shown_area(&self, asked: Option<&str>) -> String {
        let areas = self.areas();
        asked
            .filter(|a| areas.iter().any(|x| x == a))
            .map(str::to_owned)
            .or_else(|| areas.first().cloned())
            .unwrap_or_else(|| DEFAULT_AREA.to_owned())
    }

    pub fn areas(&self) -> Vec<String> {
        let mut areas: Vec<String> = Vec::new();
        for r in &self.rooms {
            if areas.last() != Some(&r.area) {
                areas.push(r.area.clone());
            }
        }
        areas
    }

    /// The zone of an area's rooms (`home` for an area without rooms).
    pub fn zone_of_area(&self, area: &str, home: chrono_tz::Tz) -> chrono_tz::Tz {
        self.rooms.iter().find(|r| r.area == area).map_or(home, Room::zone)
    }

    /// The zone of a room (`home` for a room not in the catalogue).
    pub fn zone_of_room(&self, code: &str, home: chrono_tz::Tz) -> chrono_tz::Tz {
        self.get(code).map_or(home, Room::zone)
    }

    pub fn in_area(&self, area: &str) -> Vec<Room> {
        self.rooms.iter().filter(|r| r.area == area).cloned().collect()
    }

    /// Every bookable set: each room alone, and each contiguous run of two
    /// or more rooms of a suite; shortest first.
    pub fn combinations(&self) -> Vec<Vec<String>> {
        combinations(&self.rooms)
    }

    /// Every equipment tag some room has, sorted.
    pub fn equipment(&self) -> Vec<String> {
        let tags: BTreeSet<&String> = self.rooms.iter().flat_map(|r| &r.equipment).collect();
        tags.into_iter().cloned().collect()
    }
}
