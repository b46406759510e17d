//! Approval holds through every change (SPEC §20): a series retimed in a
//! room that needs approval waits for approval again, recorded and
//! announced exactly as a single moved booking is; a new title alone does not.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::*;

async fn patch_series(app: &TestApp, id: i64, body: Value) -> (StatusCode, Value) {
    let res = app
        .request(Method::PATCH, &format!("/api/series/{id}"), TENANT_ONE, Some("alice"))
        .json(&body)
        .send()
        .await
        .unwrap();
    self::body(res).await
}

async fn approve(app: &TestApp, id: i64) {
    let (status, b) =
        send(app, Method::POST, &format!("/api/bookings/{id}/approve"), ADMIN, Some(&format!("ap-{id}")), json!({}))
            .await;
    assert_eq!((status, b["status"].as_str()), (StatusCode::OK, Some("CONFIRMED")), "{b}");
}

/// The last history event of a booking.
async fn last_event(app: &TestApp, id: i64) -> Value {
    let (_, history) = app.get_json(&format!("/api/bookings/{id}/history"), TENANT_ONE).await;
    history["events"].as_array().unwrap().last().unwrap().clone()
}

/// (kind, payload status) of the webhook notice of a booking's version.
async fn notice(app: &TestApp, id: i64, version: i64) -> (String, String) {
    let row = app
        .db()
        .await
        .query_one(
            "SELECT kind, payload->>'status' FROM notification_outbox WHERE delivery_id = $1 AND channel = 'webhook'",
            &[&format!("booking-{id}-v{version}-changed")],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

#[tokio::test]
async fn a_series_retimed_in_an_approval_room_waits_for_approval_again() {
    let app = TestApp::spawn().await;
    add_room(&app, json!({"code": "P", "name": "임원 회의실", "approvalRequired": true})).await;
    let new = json!({"title": "임원 주간", "rooms": ["P"], "startsAt": at(1, 1, 0), "endsAt": at(1, 2, 0),
                     "recurrence": "FREQ=WEEKLY;COUNT=3"});
    let (status, s) = post(&app, "/api/series", TENANT_ONE, "alice", "s", new).await;
    assert_eq!(status, StatusCode::CREATED, "{s}");
    let id = s["series"]["id"].as_i64().unwrap();
    let occ: Vec<i64> = s["created"].as_array().unwrap().iter().map(|b| b["id"].as_i64().unwrap()).collect();
    for o in &occ {
        approve(&app, *o).await;
    }
    // A single booking in the same room, approved and moved: the yardstick.
    let (_, single) = body(
        app.create_booking(TENANT_ONE, "alice", "one", &booking("단건", &["P"], &at(2, 3, 0), &at(2, 4, 0))).await,
    )
    .await;
    let sid = single["id"].as_i64().unwrap();
    approve(&app, sid).await;
    let later = json!({"startsAt": at(2, 5, 0), "endsAt": at(2, 6, 0)});
    let (_, moved) = body(app.move_booking(TENANT_ONE, "alice", sid, None, &later).await).await;
    assert_eq!(moved["status"], "PENDING", "{moved}");

    // A new title alone needs no new approval.
    let (status, edited) = patch_series(&app, id, json!({"title": "임원 주간 회의"})).await;
    assert_eq!(status, StatusCode::OK, "{edited}");
    for b in edited["occurrences"].as_array().unwrap() {
        assert_eq!((b["title"].as_str(), b["status"].as_str()), (Some("임원 주간 회의"), Some("CONFIRMED")), "{b}");
    }
    // The attack: approved at 10:00, then quietly moved to 15:00 (local) in
    // a room that needs approval.
    let (status, edited) = patch_series(&app, id, json!({"startTime": "15:00", "endTime": "16:00"})).await;
    assert_eq!(status, StatusCode::OK, "{edited}");
    for b in edited["occurrences"].as_array().unwrap() {
        assert_eq!(b["status"], "PENDING", "a retimed occurrence waits for approval again: {b}");
    }
    for o in &occ {
        let (_, b) = app.get_json(&format!("/api/bookings/{o}"), TENANT_ONE).await;
        assert_eq!((b["status"].as_str(), b["version"].as_i64()), (Some("PENDING"), Some(4)), "{b}");
        // Recorded and announced exactly as a single move is.
        let event = last_event(&app, *o).await;
        let single_event = last_event(&app, sid).await;
        assert_eq!(event["action"], single_event["action"]);
        assert_eq!(event["changes"]["status"], json!({"before": "CONFIRMED", "after": "PENDING"}), "{event}");
        assert_eq!(event["changes"]["status"], single_event["changes"]["status"]);
        assert_eq!(notice(&app, *o, 4).await, ("booking.moved".to_owned(), "PENDING".to_owned()));
    }
    assert_eq!(notice(&app, sid, 3).await, ("booking.moved".to_owned(), "PENDING".to_owned()));
    let pending = app.count("SELECT count(*) FROM reservation WHERE status = 'PENDING'").await;
    assert_eq!(pending, 4);
    app.assert_consistent().await;
}
