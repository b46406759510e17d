use super::*;
use crate::error::ErrorCode;

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
        buffer_before_minutes: 0,
        buffer_after_minutes: 0,
        time_zone: "Asia/Seoul".to_owned(),
        kind: RoomKind::Room,
        assigned_to: None,
        x: None,
        y: None,
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
        area: Default::default(),
        kind: RoomKind::Room,
        assigned_to: None,
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
    assert_eq!(field(serde_json::json!({"code": "R", "name": "x", "maxDurationMinutes": 10081})), "maxDurationMinutes");
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
