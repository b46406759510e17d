//! The catalogue in the browser: `/admin/rooms` forms, the day page by
//! area, and `/find`.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;
use crate::web::{tomorrow, Browser, ADMIN_PASSWORD, ADMIN_USER};

/// Signs in a new non-admin person.
pub async fn staff_member<'a>(app: &'a TestApp, admin: &Browser<'_>, user: &str) -> Browser<'a> {
    let page = admin.get("/admin/staff").await;
    let added = admin
        .post(
            "/admin/staff",
            &[
                ("username", user),
                ("display_name", user),
                ("password", "correct-horse-1"),
                ("csrf_token", &page.field("csrf_token")),
            ],
        )
        .await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.html);
    let b = Browser::new(app);
    b.sign_in(user, "correct-horse-1").await;
    b
}

#[tokio::test]
async fn admins_add_edit_and_retire_rooms_through_the_forms() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let page = admin.get("/admin/rooms").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.html.contains("회의실 A"));
    let (csrf, key) = (page.field("csrf_token"), page.field("idempotency_key"));
    let form = |code: &'static str, key: String| {
        vec![
            ("code", code.to_owned()),
            ("name", "창가 회의실".to_owned()),
            ("area", "2층".to_owned()),
            ("capacity", "6".to_owned()),
            ("equipment", "Projector, video".to_owned()),
            ("suite", "".to_owned()),
            ("position", "".to_owned()),
            ("check_in_required", "1".to_owned()),
            ("max_duration_minutes", "120".to_owned()),
            ("horizon_days", "".to_owned()),
            ("csrf_token", csrf.clone()),
            ("idempotency_key", key),
        ]
    };
    let post = |path: &'static str, fields: Vec<(&'static str, String)>| {
        let b = &admin;
        async move {
            let borrowed: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
            b.post(path, &borrowed).await
        }
    };
    let added = post("/admin/rooms", form("W1", key.clone())).await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.html);
    assert!(added.html.contains("창가 회의실 (W1) 회의실을 추가했습니다"));
    let (_, room) = app.get_json("/api/rooms/W1", TENANT_ONE).await;
    assert_eq!(
        (&room["area"], &room["capacity"], &room["equipment"], &room["checkInRequired"], &room["maxDurationMinutes"]),
        (&json!("2층"), &json!(6), &json!(["projector", "video"]), &json!(true), &json!(120))
    );
    // The same rendered form again adds nothing; a bad field is named in Korean.
    post("/admin/rooms", form("W1", key)).await;
    assert_eq!(app.count("SELECT count(*) FROM room WHERE code = 'W1'").await, 1);
    let mut bad = form("W2", "bad-cap".into());
    bad[3].1 = "zero".into();
    let refused = post("/admin/rooms", bad).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.html.contains("좌석 수는 1~10000 사이의 숫자입니다") && refused.html.contains("value=\"W2\""));
    let taken = post("/admin/rooms", form("A", "dup".into())).await;
    assert_eq!(taken.status, StatusCode::CONFLICT);

    // Edit: every field from the form; an empty horizon stays none.
    let edit = admin.get("/admin/rooms/W1").await;
    assert!(edit.html.contains("readonly"));
    let mut changed = form("W1", edit.field("idempotency_key"));
    changed[1].1 = "창가 큰 회의실".into();
    changed[3].1 = "10".into();
    let saved = post("/admin/rooms/W1", changed).await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.html);
    let (_, room) = app.get_json("/api/rooms/W1", TENANT_ONE).await;
    assert_eq!(
        (&room["name"], &room["capacity"], &room["horizonDays"]),
        (&json!("창가 큰 회의실"), &json!(10), &json!(null))
    );

    // Retire: refused while a booking is ahead, then with the box checked.
    let (status, _) =
        body(app.create_booking(TENANT_ONE, "alice", "w1", &booking("x", &["W1"], &at(1, 10, 0), &at(1, 11, 0))).await)
            .await;
    assert_eq!(status, StatusCode::CREATED);
    let edit = admin.get("/admin/rooms/W1").await;
    let retire_key = {
        let marker = "action=\"/admin/rooms/W1/retire\"";
        let form = &edit.html[edit.html.find(marker).unwrap()..];
        let start = form.find("name=\"idempotency_key\" value=\"").unwrap() + 30;
        form[start..].split('"').next().unwrap().to_owned()
    };
    let kept =
        post("/admin/rooms/W1/retire", vec![("csrf_token", csrf.clone()), ("idempotency_key", "no-cancel".into())])
            .await;
    assert_eq!(kept.status, StatusCode::CONFLICT);
    assert!(kept.html.contains("앞으로의 예약 1건"));
    let retired = post(
        "/admin/rooms/W1/retire",
        vec![("cancel_future_bookings", "1".into()), ("csrf_token", csrf.clone()), ("idempotency_key", retire_key)],
    )
    .await;
    assert_eq!(retired.status, StatusCode::OK, "{}", retired.html);
    assert!(retired.html.contains("폐지했습니다") && retired.html.contains("폐지됨"));
    assert_eq!(app.count("SELECT count(*) FROM reservation WHERE cancelled_at IS NULL").await, 0);
    app.assert_consistent().await;
}

#[tokio::test]
async fn staff_who_are_not_admins_cannot_touch_the_catalogue() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let kim = staff_member(&app, &admin, "kim").await;
    assert_eq!(kim.get("/admin/rooms").await.status, StatusCode::FORBIDDEN);
    assert_eq!(kim.get("/admin/rooms/A").await.status, StatusCode::FORBIDDEN);
    let day = kim.get("/rooms").await;
    let csrf = day.field("csrf_token");
    for path in ["/admin/rooms", "/admin/rooms/A", "/admin/rooms/A/retire"] {
        let page = kim
            .post(
                path,
                &[
                    ("code", "K1"),
                    ("name", "x"),
                    ("cancel_future_bookings", "1"),
                    ("csrf_token", &csrf),
                    ("idempotency_key", "k"),
                ],
            )
            .await;
        assert_eq!(page.status, StatusCode::FORBIDDEN, "{path}");
    }
    assert_eq!(app.count("SELECT count(*) FROM room WHERE active").await, 3);
    assert_eq!(app.count("SELECT count(*) FROM room").await, 3);
}

#[tokio::test]
async fn the_day_page_shows_one_area_and_find_links_to_a_filled_form() {
    let app = TestApp::spawn().await;
    for i in 1..=40 {
        let equipment = if i % 3 == 0 { json!(["projector"]) } else { json!([]) };
        add_room(
            &app,
            json!({"code": format!("T{i:02}"), "name": format!("타워 {i:02}"), "area": "타워",
                               "capacity": 2 + i % 10, "equipment": equipment}),
        )
        .await;
    }
    let b = Browser::new(&app);
    b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let date = tomorrow(&app);
    let main = b.get(&format!("/rooms?date={date}")).await;
    assert!(main.html.contains("회의실 A") && !main.html.contains("타워 01"), "the first area by default");
    assert!(main.html.contains("cols3") && main.html.contains("aria-label=\"구역\""));
    let tower = b.get(&format!("/rooms?date={date}&area=%ED%83%80%EC%9B%8C")).await;
    assert_eq!(tower.status, StatusCode::OK);
    assert!(tower.html.contains("cols40") && tower.html.contains("타워 40") && !tower.html.contains("회의실 A</div>"));
    assert!(tower.html.contains("11명 · projector"), "headers show seats and equipment");

    // Book through the tower's form; the redirect returns to the tower.
    let (csrf, key) = (tower.field("csrf_token"), tower.field("idempotency_key"));
    let booked = b
        .post(
            "/bookings",
            &[
                ("title", "타워 회의"),
                ("date", &date),
                ("start", "10:00"),
                ("end", "11:00"),
                ("rooms", "T03"),
                ("area", "타워"),
                ("csrf_token", &csrf),
                ("idempotency_key", &key),
            ],
        )
        .await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    assert!(booked.location.unwrap().contains("area=%ED%83%80%EC%9B%8C"));

    // Find: 10 seats and a projector at 10:00-11:00 → T18 (10 seats), T09 and T39 (11).
    let found = b.get(&format!("/find?date={date}&start=10:00&end=11:00&capacity=10&equipment=projector")).await;
    assert_eq!(found.status, StatusCode::OK);
    let order: Vec<usize> = ["(T18)", "(T09)", "(T39)"].iter().map(|c| found.html.find(c).expect(c)).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "smallest sufficient first");
    assert!(found.html.contains("빈 회의실 3곳") && !found.html.contains("(T03)"));
    let link = found.html.split("<a href=\"").find(|s| s.contains("room=T09")).unwrap().split('"').next().unwrap();
    let link = link.replace("&amp;", "&").replace("&#38;", "&");
    let filled = b.get(&link).await;
    assert_eq!(filled.status, StatusCode::OK);
    assert!(
        filled.html.contains("value=\"T09\" checked") && filled.html.contains("value=\"10:00\""),
        "{link}: {}",
        filled.html
    );
    let refused = b.get(&format!("/find?date={date}&start=11:00&end=10:00")).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
}
