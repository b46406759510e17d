//! Titles, display names, labels and `organizerName` refuse control
//! characters (SPEC §20): 400 naming the field, at every door, nothing stored.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

#[tokio::test]
async fn control_characters_are_refused_in_every_name_naming_the_field() {
    let app = TestApp::spawn().await;
    let refused = |status: StatusCode, body: &Value, field: &str| {
        assert_eq!(
            (status, body["code"].as_str(), body["details"]["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some("MALFORMED_REQUEST"), Some(field)),
            "{body}"
        );
    };
    for (i, bad) in
        ["회의\u{2028}주입", "회의\u{2029}주입", "첫 줄\n둘째 줄", "a\u{7f}b", "a\u{1b}[31mb"].iter().enumerate()
    {
        let b = booking(bad, &["A"], &at(1, 10, 0), &at(1, 11, 0));
        let (status, err) = body(app.create_booking(TENANT_ONE, "alice", &format!("t{i}"), &b).await).await;
        refused(status, &err, "title");
        let mut b = booking("회의", &["A"], &at(1, 10, 0), &at(1, 11, 0));
        b["organizerName"] = json!(bad);
        let (status, err) = body(app.create_booking(TENANT_ONE, "alice", &format!("o{i}"), &b).await).await;
        refused(status, &err, "organizerName");
        let series = json!({"title": bad, "rooms": ["A"], "startsAt": at(1, 10, 0), "endsAt": at(1, 11, 0),
                            "recurrence": "FREQ=DAILY;COUNT=2"});
        let (status, err) = post(&app, "/api/series", TENANT_ONE, "alice", &format!("s{i}"), series).await;
        refused(status, &err, "title");
        let (status, err) = send(
            &app,
            Method::POST,
            "/api/rooms",
            ADMIN,
            Some(&format!("r{i}")),
            json!({"code": format!("Z{i}"), "name": bad}),
        )
        .await;
        refused(status, &err, "name");
        let key = json!({"tenant": "t9", "role": "integration", "label": bad});
        let (status, err) = send(&app, Method::POST, "/api/admin/keys", ADMIN, None, key).await;
        refused(status, &err, "label");
    }
    // A retitle by PATCH is refused the same way.
    let (_, ok) = body(
        app.create_booking(TENANT_ONE, "alice", "ok", &booking("회의", &["A"], &at(1, 10, 0), &at(1, 11, 0))).await,
    )
    .await;
    let retitle = json!({"startsAt": at(1, 10, 0), "endsAt": at(1, 11, 0), "title": "새\u{2028}제목"});
    let (status, err) =
        body(app.move_booking(TENANT_ONE, "alice", ok["id"].as_i64().unwrap(), None, &retitle).await).await;
    refused(status, &err, "title");
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 1, "only the clean booking");
    assert_eq!(app.count("SELECT count(*) FROM booking_series").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM room WHERE code LIKE 'Z%'").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM api_key WHERE tenant = 't9'").await, 0);

    // The admin forms: a person's display name and a key's label.
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    for bad in ["김\u{2028}민지", "김\u{0}민지", "김\u{7f}"] {
        let page = admin.get("/admin/staff").await;
        let form = [
            ("username", "kim"),
            ("display_name", bad),
            ("password", "correct-horse-1"),
            ("csrf_token", &page.field("csrf_token")),
        ];
        let added = admin.post("/admin/staff", &form).await;
        assert_eq!(added.status, StatusCode::BAD_REQUEST, "{bad:?}: {}", added.html);
        let form =
            [("tenant", "t9"), ("role", "integration"), ("label", bad), ("csrf_token", &page.field("csrf_token"))];
        let key = admin.post("/admin/keys", &form).await;
        assert_eq!(key.status, StatusCode::BAD_REQUEST, "{bad:?}: {}", key.html);
    }
    assert_eq!(app.count("SELECT count(*) FROM staff_user WHERE username = 'kim'").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM api_key WHERE tenant = 't9'").await, 0);
}
