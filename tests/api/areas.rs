//! Areas as data (SPEC §24): today's labels are areas, `GET /api/areas`
//! lists them with their time zone and working hours, admin keys create and
//! change them (`AREA_CODE_TAKEN`, `INVALID_TIME_ZONE`), and a room naming
//! a new area creates it with the defaults.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::*;

async fn areas(app: &TestApp) -> Vec<Value> {
    let (status, body) = app.get_json("/api/areas", TENANT_ONE).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["areas"].as_array().unwrap().clone()
}

#[tokio::test]
async fn areas_are_data_that_admins_create_and_change() {
    let app = TestApp::spawn().await;
    let before = areas(&app).await;
    assert!(!before.is_empty(), "today's labels became areas");
    let first = &before[0];
    assert_eq!(first["timeZone"], "Asia/Seoul", "the installation's zone: {first}");
    assert_eq!(first["workingHours"]["mon"], json!(["09:00", "18:00"]));
    assert_eq!(first["workingHours"]["sun"], Value::Null);
    assert_eq!(
        (first["restrictToWorkingHours"].as_bool(), first["holidayCalendar"].clone()),
        (Some(false), Value::Null)
    );

    let ny = json!({ "code": "뉴욕", "name": "New York office", "timeZone": "America/New_York",
                     "workingHours": { "mon": ["08:00", "17:00"], "tue": ["08:00", "17:00"] },
                     "holidayCalendar": null });
    let (status, created) = send(&app, Method::POST, "/api/areas", ADMIN, Some("ny-1"), ny.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(
        (created["timeZone"].as_str(), created["name"].as_str()),
        (Some("America/New_York"), Some("New York office"))
    );
    assert_eq!(created["workingHours"]["wed"], Value::Null, "days not named are closed");
    let (status, again) = send(&app, Method::POST, "/api/areas", ADMIN, Some("ny-1"), ny.clone()).await;
    assert_eq!((status, &again), (StatusCode::CREATED, &created), "a replay answers the same");
    let (status, err) = send(&app, Method::POST, "/api/areas", ADMIN, Some("ny-2"), ny).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("AREA_CODE_TAKEN")), "{err}");

    let stored = fingerprint(&app, &["area"]).await;
    for (idem, body, code, field) in [
        ("bad-zone", json!({ "code": "x", "timeZone": "Mars/Olympus" }), "INVALID_TIME_ZONE", "timeZone"),
        ("no-calendar", json!({ "code": "x", "holidayCalendar": "kr" }), "MALFORMED_REQUEST", "holidayCalendar"),
        (
            "bad-day",
            json!({ "code": "x", "workingHours": { "someday": null } }),
            "MALFORMED_REQUEST",
            "workingHours.someday",
        ),
        (
            "bad-order",
            json!({ "code": "x", "workingHours": { "mon": ["18:00", "09:00"] } }),
            "MALFORMED_REQUEST",
            "workingHours",
        ),
        (
            "bad-time",
            json!({ "code": "x", "workingHours": { "mon": ["9", "18:00"] } }),
            "MALFORMED_REQUEST",
            "workingHours",
        ),
    ] {
        let (status, err) = send(&app, Method::POST, "/api/areas", ADMIN, Some(idem), body).await;
        assert_eq!(
            (status, err["code"].as_str(), err["details"]["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code), Some(field)),
            "{err}"
        );
    }
    let (status, _) =
        send(&app, Method::POST, "/api/areas", TENANT_ONE, Some("not-admin"), json!({ "code": "y" })).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(fingerprint(&app, &["area"]).await, stored, "refusals store nothing");

    let (status, moved) =
        send(&app, Method::PATCH, "/api/areas/뉴욕", ADMIN, Some("p-1"), json!({ "timeZone": "Europe/Berlin" })).await;
    assert_eq!((status, moved["timeZone"].as_str()), (StatusCode::OK, Some("Europe/Berlin")), "{moved}");
    assert_eq!(moved["workingHours"]["mon"], json!(["08:00", "17:00"]), "what the patch did not name stays");
    let (status, home) =
        send(&app, Method::PATCH, "/api/areas/뉴욕", ADMIN, Some("p-2"), json!({ "timeZone": null })).await;
    assert_eq!((status, home["timeZone"].as_str()), (StatusCode::OK, Some("Asia/Seoul")), "{home}");
    let (status, _) = send(&app, Method::PATCH, "/api/areas/없음", ADMIN, Some("p-3"), json!({ "name": "x" })).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    add_room(&app, json!({ "code": "Z1", "name": "별관 회의실", "area": "별관" })).await;
    add_room(&app, json!({ "code": "Z2", "name": "별관 작은 방", "area": "별관" })).await;
    // A room moves to another area, at its last position, in that area's zone.
    add_room(&app, json!({ "code": "Z0", "name": "본관 방", "area": "본관" })).await;
    let (status, moved) =
        send(&app, Method::PATCH, "/api/rooms/Z0", ADMIN, Some("move-a"), json!({ "area": "별관" })).await;
    assert_eq!(
        (status, moved["area"].as_str(), moved["position"].as_i64(), moved["timeZone"].as_str()),
        (StatusCode::OK, Some("별관"), Some(3), Some("Asia/Seoul")),
        "{moved}"
    );
    let (status, moved) =
        send(&app, Method::PATCH, "/api/rooms/Z0", ADMIN, Some("move-ny"), json!({ "area": "뉴욕" })).await;
    assert_eq!(
        (status, moved["position"].as_i64(), moved["timeZone"].as_str()),
        (StatusCode::OK, Some(1), Some("Asia/Seoul")),
        "{moved}"
    );
    let codes: Vec<String> = areas(&app).await.iter().map(|a| a["code"].as_str().unwrap().to_owned()).collect();
    assert!(codes.contains(&"별관".to_owned()) && codes.contains(&"뉴욕".to_owned()), "{codes:?}");
}
