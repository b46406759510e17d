//! The door display (SPEC §11): a room's token opens its kiosk page, books
//! now and checks in — and grants nothing else.

use chrono::{Duration, DurationRound, Utc};
use reqwest::StatusCode;
use serde_json::json;
use yeyak::clock::Clock;

use crate::helpers::*;
use crate::web::{Browser, Page, ADMIN_PASSWORD, ADMIN_USER};

/// Creates a display token for `room` through the admin page; returns the address.
pub async fn display_url(admin: &Browser<'_>, room: &str) -> String {
    let edit = admin.get(&format!("/admin/rooms/{room}")).await;
    let made =
        admin.post(&format!("/admin/rooms/{room}/display-token"), &[("csrf_token", &edit.field("csrf_token"))]).await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.html);
    let marker = "id=\"display-url\">";
    let start = made.html.find(marker).expect("the address is shown once") + marker.len();
    made.html[start..].split('<').next().unwrap().to_owned()
}

fn token_of(url: &str) -> String {
    url.split("token=").nth(1).unwrap().to_owned()
}

async fn kiosk_post(app: &TestApp, path: &str, form: &[(&str, &str)]) -> Page {
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let res = client.post(app.url(path)).form(form).send().await.unwrap();
    let status = res.status();
    let location = res.headers().get("location").map(|v| v.to_str().unwrap().to_owned());
    Page { status, location, cookies: vec![], html: res.text().await.unwrap() }
}

#[tokio::test]
async fn the_display_token_opens_its_room_and_nothing_else() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let url = display_url(&admin, "A").await;
    let token = token_of(&url);
    assert_eq!(
        app.count("SELECT count(*) FROM room_display_token WHERE token_hash LIKE 'yd_%'").await,
        0,
        "only a digest is stored"
    );

    let anyone = reqwest::Client::new();
    let page = anyone.get(app.url(&url)).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let refresh = page.headers()["refresh"].to_str().unwrap().to_owned();
    assert_eq!(refresh, format!("30; url={url}"), "it redraws itself without JavaScript");
    let html = page.text().await.unwrap();
    assert!(html.contains("회의실 A") && html.contains("비어 있음"));
    // Not an API key: every JSON route the served OpenAPI document lists,
    // with its own method, answers 401 to the display token.
    let doc: serde_json::Value = anyone.get(app.url("/api/openapi.json")).send().await.unwrap().json().await.unwrap();
    let mut walked = 0;
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for method in ops.as_object().unwrap().keys() {
            let concrete = path.replace("{id}", "1").replace("{code}", "A").replace("{delivery_id}", "1");
            let res = anyone
                .request(reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(), app.url(&concrete))
                .bearer_auth(&token)
                .header("Idempotency-Key", "display-walk")
                .json(&json!({}))
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{method} {path} with a display token");
            walked += 1;
        }
    }
    assert!(walked > 30, "the walk covered the API ({walked} routes)");
    // Not another room's display, not without the token.
    assert_eq!(
        anyone.get(app.url(&format!("/display/B?token={token}"))).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(anyone.get(app.url("/display/A?token=yd_wrong")).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    assert_eq!(anyone.get(app.url("/display/A")).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    let booked =
        kiosk_post(&app, "/display/B/book", &[("token", &token), ("minutes", "15"), ("idempotency_key", "k")]).await;
    assert_eq!(booked.status, StatusCode::NOT_FOUND, "another room's book-now");
    // Nor a staff session: the admin pages still want a sign-in.
    let no_session = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    assert_eq!(
        no_session.get(app.url(&format!("/admin/rooms?token={token}"))).send().await.unwrap().status(),
        StatusCode::SEE_OTHER
    );

    // Revoked: gone on the next request.
    let edit = admin.get("/admin/rooms/A").await;
    assert!(edit.html.contains("사용 중인 토큰: 1개"));
    let revoked = admin.post("/admin/rooms/A/display-token/revoke", &[("csrf_token", &edit.field("csrf_token"))]).await;
    assert!(revoked.html.contains("1개를 폐기했습니다"));
    assert_eq!(anyone.get(app.url(&url)).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    // Its forms too: a revoked token books and checks in nothing.
    let booked =
        kiosk_post(&app, "/display/A/book", &[("token", &token), ("minutes", "15"), ("idempotency_key", "r1")]).await;
    assert_eq!(booked.status, StatusCode::NOT_FOUND, "book-now with a revoked token");
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 0);
}

#[tokio::test]
async fn book_now_and_check_in_at_the_door() {
    let app = TestApp::spawn().await;
    add_room(&app, json!({"code": "D1", "name": "문 앞 회의실", "checkInRequired": true})).await;
    add_room(&app, json!({"code": "D2", "name": "옆 회의실", "checkInRequired": true})).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let url = display_url(&admin, "D1").await;
    let token = token_of(&url);
    let now = app.clock.now();

    // Free now: book 30 minutes from this minute.
    let free = reqwest::get(app.url(&url)).await.unwrap().text().await.unwrap();
    assert!(free.contains("value=\"15\"") && free.contains("value=\"60\""));
    let key = free.split("name=\"idempotency_key\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    let booked =
        kiosk_post(&app, "/display/D1/book", &[("token", &token), ("minutes", "30"), ("idempotency_key", &key)]).await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    // The same rendered form again books nothing more.
    kiosk_post(&app, "/display/D1/book", &[("token", &token), ("minutes", "30"), ("idempotency_key", &key)]).await;
    let (_, list) = app
        .get_json(&format!("/api/bookings?from={}&to={}", enc(now), enc(now + Duration::hours(2))), TENANT_ONE)
        .await;
    let made = &list["bookings"][0];
    assert_eq!(list["bookings"].as_array().unwrap().len(), 1);
    assert_eq!(made["organizer"], "도어 디스플레이 (문 앞 회의실)");
    let start = now.duration_trunc(Duration::minutes(1)).unwrap();
    assert_eq!(
        (made["startsAt"].clone(), made["endsAt"].clone()),
        (json!(start), json!(start + Duration::minutes(30)))
    );
    let busy = reqwest::get(app.url(&url)).await.unwrap().text().await.unwrap();
    assert!(busy.contains("사용 중") && !busy.contains("value=\"15\""), "no book-now while busy");
    let refused =
        kiosk_post(&app, "/display/D1/book", &[("token", &token), ("minutes", "15"), ("idempotency_key", "again")])
            .await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert!(refused.html.contains("이미 예약된 시간입니다"));

    // Check in its own booking at the door, not another room's.
    let id = made["id"].as_i64().unwrap().to_string();
    assert!(busy.contains(&format!("name=\"booking_id\" value=\"{id}\"")), "the check-in button is offered");
    let (_, other) = body(
        app.create_booking(
            TENANT_ONE,
            "bob",
            "o",
            &booking("옆", &["D2"], &start.to_rfc3339(), &(start + Duration::hours(1)).to_rfc3339()),
        )
        .await,
    )
    .await;
    let other_id = other["id"].as_i64().unwrap().to_string();
    let elsewhere = kiosk_post(
        &app,
        "/display/D1/check-in",
        &[("token", &token), ("booking_id", &other_id), ("idempotency_key", "c0")],
    )
    .await;
    assert_eq!(elsewhere.status, StatusCode::NOT_FOUND);
    // A revoked token checks in nothing, not even its own room's booking;
    // a token issued afterwards does.
    let edit = admin.get("/admin/rooms/D1").await;
    admin.post("/admin/rooms/D1/display-token/revoke", &[("csrf_token", &edit.field("csrf_token"))]).await;
    let revoked =
        kiosk_post(&app, "/display/D1/check-in", &[("token", &token), ("booking_id", &id), ("idempotency_key", "c9")])
            .await;
    assert_eq!(revoked.status, StatusCode::NOT_FOUND, "check-in with a revoked token");
    let (_, b) = app.get_json(&format!("/api/bookings/{id}"), TENANT_ONE).await;
    assert!(b["checkedInAt"].is_null(), "the revoked token checked nothing in");
    let token = token_of(&display_url(&admin, "D1").await);
    let checked =
        kiosk_post(&app, "/display/D1/check-in", &[("token", &token), ("booking_id", &id), ("idempotency_key", "c1")])
            .await;
    assert_eq!(checked.status, StatusCode::SEE_OTHER, "{}", checked.html);
    let (_, b) = app.get_json(&format!("/api/bookings/{id}"), TENANT_ONE).await;
    assert!(b["checkedInAt"].is_string());
    let (_, o) = app.get_json(&format!("/api/bookings/{other_id}"), TENANT_ONE).await;
    assert!(o["checkedInAt"].is_null());
    let (_, h) = app.get_json(&format!("/api/bookings/{id}/history"), TENANT_ONE).await;
    assert_eq!(h["events"][1]["actor"], "도어 디스플레이 (문 앞 회의실)");
}

fn enc(t: chrono::DateTime<Utc>) -> String {
    t.to_rfc3339().replace('+', "%2B").replace(':', "%3A")
}
