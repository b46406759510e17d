//! The room catalogue's values (SPEC §8) as types that cannot hold invalid
//! values, and the linking rule: rooms link only within one suite, as a
//! contiguous run of its positions. No I/O.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::error::{ApiError, ErrorCode};

/// Area a room belongs to when none is given.
pub const DEFAULT_AREA: &str = "본관";
pub const DEFAULT_CAPACITY: i32 = 8;
pub const DEFAULT_MAX_DURATION_MINUTES: i32 = 720;
/// The longest booking any room may allow (a week).
pub const MAX_DURATION_LIMIT: i32 = 10_080;
pub const MAX_HORIZON_DAYS: i32 = 3_650;
pub const MAX_CAPACITY: i32 = 10_000;
const MAX_TAGS: usize = 32;

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
/// no control characters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Label(String);

impl Label {
    pub fn parse(field: &str, raw: &str) -> Result<Self, ApiError> {
        let t = raw.trim();
        let len = t.chars().count();
        if !(1..=100).contains(&len) {
            return Err(ApiError::malformed(field, "must be 1-100 characters"));
        }
        if t.chars().any(char::is_control) {
            return Err(ApiError::malformed(field, "must not contain control characters"));
        }
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

fn bounded(field: &str, value: i64, min: i64, max: i64) -> Result<i32, ApiError> {
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
}

/// Reads a field that may be absent (keep), null (clear) or a value (set).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
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
}

impl NewRoom {
    pub fn parse(body: NewRoomBody) -> Result<Self, ApiError> {
        Ok(NewRoom {
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
        })
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
        })
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
        r
    }
}

/// One room asked for in a booking, as read (and share-locked) inside the
/// booking's transaction, with the active members of its suite in position
/// order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bookable {
    pub code: String,
    pub suite: Option<String>,
    pub position: i32,
    pub max_duration_minutes: i32,
    pub horizon_days: Option<i32>,
    pub approval_required: bool,
    pub check_in_required: bool,
    pub suite_members: Vec<String>,
}

/// Rooms that may be booked together, in position order (the order of every
/// write to `reservation_room`, seed 002 §교착), with the rules they share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedRooms {
    rooms: Vec<Bookable>,
}

impl LinkedRooms {
    /// Applies the linking rule to the rooms `asked` for, given what the
    /// database holds of them (`found`: active rooms only).
    pub fn link(asked: &[String], mut found: Vec<Bookable>) -> Result<Self, ApiError> {
        for code in asked {
            if !found.iter().any(|r| &r.code == code) {
                return Err(unknown_room(code));
            }
        }
        found.sort_by(|a, b| (a.position, &a.code).cmp(&(b.position, &b.code)));
        if found.len() > 1 {
            let suite = found[0].suite.clone();
            let same_suite = suite.is_some() && found.iter().all(|r| r.suite == suite);
            let members = &found[0].suite_members;
            let indices: Vec<Option<usize>> = found.iter().map(|r| members.iter().position(|m| m == &r.code)).collect();
            let contiguous = indices.iter().all(Option::is_some)
                && indices.windows(2).all(|w| w[1].zip(w[0]).is_some_and(|(b, a)| b == a + 1));
            if !same_suite || !contiguous {
                return Err(not_linkable(&found));
            }
        }
        Ok(LinkedRooms { rooms: found })
    }

    pub fn codes(&self) -> Vec<String> {
        self.rooms.iter().map(|r| r.code.clone()).collect()
    }

    /// The strictest maximum length among the rooms.
    pub fn max_duration_minutes(&self) -> i32 {
        self.rooms.iter().map(|r| r.max_duration_minutes).min().unwrap_or(DEFAULT_MAX_DURATION_MINUTES)
    }

    /// The shortest horizon among the rooms that have one.
    pub fn horizon_days(&self) -> Option<i32> {
        self.rooms.iter().filter_map(|r| r.horizon_days).min()
    }

    pub fn approval_required(&self) -> bool {
        self.rooms.iter().any(|r| r.approval_required)
    }

    pub fn check_in_required(&self) -> bool {
        self.rooms.iter().any(|r| r.check_in_required)
    }
}

pub fn unknown_room(code: &str) -> ApiError {
    ApiError::new(ErrorCode::UnknownRoom, format!("알 수 없는 회의실입니다: {code}"))
        .with_details(serde_json::json!({ "field": "rooms", "room": code }))
}

fn not_linkable(found: &[Bookable]) -> ApiError {
    let names: Vec<&str> = found.iter().map(|r| r.code.as_str()).collect();
    let suites: BTreeSet<Option<&str>> = found.iter().map(|r| r.suite.as_deref()).collect();
    let hint = match (suites.len(), found[0].suite_members.as_slice()) {
        (1, members) if members.len() >= 3 && found[0].suite.is_some() => {
            let runs: Vec<String> =
                (2..=members.len()).flat_map(|len| members.windows(len).map(|w| w.join("+"))).take(4).collect();
            format!(
                " (예: {}). {}+{}처럼 가운데를 건너뛸 수 없습니다.",
                runs.join(", "),
                members[0],
                members[members.len() - 1]
            )
        }
        (1, _) if found[0].suite.is_some() => " 가운데 방을 건너뛸 수 없습니다.".to_owned(),
        _ => " 서로 다른 묶음이거나 묶음이 없는 방은 따로 예약해 주세요.".to_owned(),
    };
    ApiError::new(ErrorCode::RoomCombinationNotAllowed, format!("이어진 회의실만 함께 예약할 수 있습니다{hint}"))
        .with_details(serde_json::json!({ "field": "rooms", "rooms": names }))
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
    pub fn areas(&self) -> Vec<String> {
        let mut areas: Vec<String> = Vec::new();
        for r in &self.rooms {
            if areas.last() != Some(&r.area) {
                areas.push(r.area.clone());
            }
        }
        areas
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

/// See [`RoomCatalog::combinations`]; `rooms` must be active and ordered.
pub fn combinations(rooms: &[Room]) -> Vec<Vec<String>> {
    let mut runs: Vec<(usize, usize, Vec<String>)> = Vec::new();
    for (i, r) in rooms.iter().enumerate() {
        runs.push((1, i, vec![r.code.clone()]));
    }
    let mut suites: Vec<&str> = rooms.iter().filter_map(|r| r.suite.as_deref()).collect();
    suites.sort_unstable();
    suites.dedup();
    for suite in suites {
        let members: Vec<(usize, &Room)> =
            rooms.iter().enumerate().filter(|(_, r)| r.suite.as_deref() == Some(suite)).collect();
        for len in 2..=members.len() {
            for w in members.windows(len) {
                runs.push((len, w[0].0, w.iter().map(|(_, r)| r.code.clone()).collect()));
            }
        }
    }
    runs.sort_by_key(|(len, first, _)| (*len, *first));
    runs.into_iter().map(|(_, _, codes)| codes).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room(code: &str, area: &str, suite: Option<&str>, position: i32) -> Room {
        Room {
            code: code.into(),
            name: code.into(),
            area: area.into(),
            capacity: 8,
            equipment: vec![],
            suite: suite.map(Into::into),
            position,
            check_in_required: false,
            approval_required: false,
            max_duration_minutes: 720,
            horizon_days: None,
            active: true,
        }
    }

    fn bookable(code: &str, suite: Option<&str>, position: i32, members: &[&str]) -> Bookable {
        Bookable {
            code: code.into(),
            suite: suite.map(Into::into),
            position,
            max_duration_minutes: 720,
            horizon_days: None,
            approval_required: false,
            check_in_required: false,
            suite_members: members.iter().map(|m| m.to_string()).collect(),
        }
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn the_default_catalogue_combines_as_in_part_one() {
        let c = RoomCatalog::new(vec![
            room("C", "본관", Some("ABC"), 3),
            room("A", "본관", Some("ABC"), 1),
            room("B", "본관", Some("ABC"), 2),
        ]);
        let expected: Vec<Vec<String>> =
            vec![s(&["A"]), s(&["B"]), s(&["C"]), s(&["A", "B"]), s(&["B", "C"]), s(&["A", "B", "C"])];
        assert_eq!(c.combinations(), expected);
    }

    #[test]
    fn suites_link_only_inside_themselves() {
        let c = RoomCatalog::new(vec![
            room("A", "본관", Some("ABC"), 1),
            room("B", "본관", Some("ABC"), 2),
            room("X", "본관", None, 3),
            room("P", "2F", Some("P"), 1),
            room("Q", "2F", Some("P"), 2),
        ]);
        let combos = c.combinations();
        assert!(combos.contains(&s(&["P", "Q"])) && combos.contains(&s(&["A", "B"])));
        assert!(!combos.iter().any(|c| c.len() > 1 && c.contains(&"X".to_string())));
        assert_eq!(combos.len(), 5 + 2);
        assert_eq!(c.areas(), s(&["2F", "본관"]));
    }

    #[test]
    fn linking_rule() {
        let abc = ["A", "B", "C"];
        let a = bookable("A", Some("ABC"), 1, &abc);
        let b = bookable("B", Some("ABC"), 2, &abc);
        let c = bookable("C", Some("ABC"), 3, &abc);
        let x = bookable("X", None, 4, &[]);
        let ok = |asked: &[&str], found: Vec<Bookable>| LinkedRooms::link(&s(asked), found);
        assert_eq!(ok(&["C", "A", "B"], vec![c.clone(), a.clone(), b.clone()]).unwrap().codes(), s(&["A", "B", "C"]));
        assert_eq!(ok(&["A", "C"], vec![a.clone(), c.clone()]).unwrap_err().code, ErrorCode::RoomCombinationNotAllowed);
        assert!(ok(&["A", "C"], vec![a.clone(), c.clone()]).unwrap_err().message.starts_with("이어진 회의실만"));
        assert_eq!(ok(&["B", "X"], vec![b.clone(), x.clone()]).unwrap_err().code, ErrorCode::RoomCombinationNotAllowed);
        assert_eq!(ok(&["X"], vec![x]).unwrap().codes(), s(&["X"]));
        assert_eq!(ok(&["A", "D"], vec![a.clone()]).unwrap_err().code, ErrorCode::UnknownRoom);
        // Another suite with the same positions never links with this one.
        let p = bookable("P", Some("P"), 2, &["P"]);
        assert_eq!(ok(&["A", "P"], vec![a, p]).unwrap_err().code, ErrorCode::RoomCombinationNotAllowed);
    }

    #[test]
    fn rules_of_linked_rooms_are_the_strictest() {
        let mut a = bookable("A", Some("S"), 1, &["A", "B"]);
        let mut b = bookable("B", Some("S"), 2, &["A", "B"]);
        a.max_duration_minutes = 60;
        b.horizon_days = Some(30);
        b.approval_required = true;
        let l = LinkedRooms::link(&s(&["A", "B"]), vec![a, b]).unwrap();
        assert_eq!((l.max_duration_minutes(), l.horizon_days(), l.approval_required()), (60, Some(30), true));
    }

    #[test]
    fn attributes_are_parsed_with_the_field_named() {
        let body = |json: serde_json::Value| serde_json::from_value::<NewRoomBody>(json).unwrap();
        let r = NewRoom::parse(body(serde_json::json!({"code": "R1", "name": " 큰 회의실 ",
            "equipment": ["Projector ", "video", "video"]})))
        .unwrap();
        assert_eq!((r.name.as_str(), r.area.as_str(), r.capacity), ("큰 회의실", DEFAULT_AREA, 8));
        assert_eq!(r.equipment.tags(), s(&["projector", "video"]));
        let field = |json: serde_json::Value| NewRoom::parse(body(json)).unwrap_err().details["field"].clone();
        assert_eq!(field(serde_json::json!({"code": "a b", "name": "x"})), "code");
        assert_eq!(field(serde_json::json!({"code": "R", "name": ""})), "name");
        assert_eq!(field(serde_json::json!({"code": "R", "name": "x", "capacity": 0})), "capacity");
        assert_eq!(field(serde_json::json!({"code": "R", "name": "x", "equipment": ["a b"]})), "equipment");
        assert_eq!(
            field(serde_json::json!({"code": "R", "name": "x", "maxDurationMinutes": 10081})),
            "maxDurationMinutes"
        );
        assert_eq!(field(serde_json::json!({"code": "R", "name": "x", "horizonDays": 0})), "horizonDays");
        assert_eq!(field(serde_json::json!({"code": "R", "name": "x", "suite": " "})), "suite");
    }

    #[test]
    fn a_patch_tells_absent_from_null() {
        let patch: RoomPatchBody = serde_json::from_value(serde_json::json!({"suite": null, "capacity": 4})).unwrap();
        let p = RoomPatch::parse(patch).unwrap();
        assert_eq!((p.suite.clone(), p.capacity, p.horizon_days), (Some(None), Some(4), None));
        let r = p.apply(&room("A", "본관", Some("ABC"), 1));
        assert_eq!((r.suite, r.capacity), (None, 4));
    }
}
