//! Booking rules, approval and history (SPEC §12) through the JSON API.

use std::sync::Arc;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::*;

async fn book_as(
    app: &TestApp,
    key: &str,
    owner: &str,
    idem: &str,
    rooms: &[&str],
    s: &str,
    e: &str,
) -> (StatusCode, Value) {
    body(app.create_booking(key, owner, idem, &booking("회의", rooms, s, e)).await).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_quota_is_exact_under_twenty_simultaneous_bookings() {
    let app = Arc::new(TestApp::spawn_with(|c| c.max_active_bookings = Some(5)).await);
    for i in 0..4 {
        let (status, b) =
            book_as(&app, TENANT_ONE, "alice", &format!("pre{i}"), &["A"], &at(1, 8 + i, 0), &at(1, 8 + i, 30)).await;
        assert_eq!(status, StatusCode::CREATED, "{b}");
    }
    let barrier = Arc::new(tokio::sync::Barrier::new(20));
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let (app, barrier) = (app.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                book_as(&app, TENANT_ONE, "alice", &format!("race{i}"), &["B"], &at(2, i, 0), &at(2, i, 30)).await
            })
        })
        .collect();
    let results: Vec<(StatusCode, Value)> =
        futures_util::future::join_all(tasks).await.into_iter().map(|r| r.unwrap()).collect();
    let created = results.iter().filter(|(s, _)| *s == StatusCode::CREATED).count();
    let refused = results.iter().filter(|(s, b)| *s == StatusCode::CONFLICT && b["code"] == "QUOTA_EXCEEDED").count();
    assert_eq!((created, refused), (1, 19), "{results:?}");

    // At the quota: a series that would cross it is refused whole.
    let series = json!({"title": "반복", "rooms": ["C"], "startsAt": at(3, 9, 0), "endsAt": at(3, 10, 0), "recurrence": "FREQ=DAILY;COUNT=2"});
    let (status, err) = post(&app, "/api/series", TENANT_ONE, "alice", "series", series.clone()).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("QUOTA_EXCEEDED")), "{err}");
    assert_eq!(app.count("SELECT count(*) FROM booking_series").await, 0);
    // Cancelling one frees one place: two would still cross, one does not.
    let first = app.count("SELECT min(id) FROM reservation").await;
    assert_eq!(app.cancel_booking(TENANT_ONE, "alice", first, None, &json!({})).await.status(), StatusCode::OK);
    let (status, _) = post(&app, "/api/series", TENANT_ONE, "alice", "series2", series).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let one = json!({"title": "반복", "rooms": ["C"], "startsAt": at(3, 9, 0), "endsAt": at(3, 10, 0), "recurrence": "FREQ=DAILY;COUNT=1"});
    let (status, _) = post(&app, "/api/series", TENANT_ONE, "alice", "series3", one).await;
    assert_eq!(status, StatusCode::CREATED);
    // Someone else, and admins, are not held by alice's quota.
    assert_eq!(
        book_as(&app, TENANT_ONE, "bob", "bob", &["C"], &at(4, 9, 0), &at(4, 10, 0)).await.0,
        StatusCode::CREATED
    );
    for i in 0..6 {
        let (status, _) =
            book_as(&app, ADMIN, "alice", &format!("adm{i}"), &["A"], &at(5, 8 + i, 0), &at(5, 8 + i, 30)).await;
        assert_eq!(status, StatusCode::CREATED, "admins are exempt");
    }
    app.assert_consistent().await;
}

#[tokio::test]
async fn horizon_and_duration_are_refused_on_create_move_and_series() {
    let app = TestApp::spawn().await;
    add_room(&app, json!({"code": "H", "name": "짧은 방", "horizonDays": 7, "maxDurationMinutes": 60})).await;
    let (status, err) = book_as(&app, TENANT_ONE, "a", "far", &["H"], &at(8, 9, 0), &at(8, 10, 0)).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("BEYOND_HORIZON")), "{err}");
    let (status, err) = book_as(&app, TENANT_ONE, "a", "long", &["H"], &at(1, 9, 0), &at(1, 10, 1)).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("BOOKING_TOO_LONG")), "{err}");
    let (status, ok) = book_as(&app, TENANT_ONE, "a", "ok", &["H"], &at(1, 9, 0), &at(1, 10, 0)).await;
    assert_eq!(status, StatusCode::CREATED);
    let id = ok["id"].as_i64().unwrap();
    let (status, err) = body(
        app.move_booking(TENANT_ONE, "a", id, None, &json!({"startsAt": at(9, 9, 0), "endsAt": at(9, 10, 0)})).await,
    )
    .await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("BEYOND_HORIZON")));
    let (status, err) = body(
        app.move_booking(TENANT_ONE, "a", id, None, &json!({"startsAt": at(1, 9, 0), "endsAt": at(1, 11, 0)})).await,
    )
    .await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("BOOKING_TOO_LONG")));
    let series = |rule: &str, end: &str| json!({"title": "s", "rooms": ["H"], "startsAt": at(2, 9, 0), "endsAt": end, "recurrence": rule});
    let (status, err) =
        post(&app, "/api/series", TENANT_ONE, "a", "s1", series("FREQ=DAILY;COUNT=10", &at(2, 10, 0))).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("BEYOND_HORIZON")), "{err}");
    let (status, err) =
        post(&app, "/api/series", TENANT_ONE, "a", "s2", series("FREQ=DAILY;COUNT=2", &at(2, 11, 0))).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("BOOKING_TOO_LONG")));
    // Admins are exempt from the horizon, not from the room's maximum length.
    assert_eq!(book_as(&app, ADMIN, "ops", "adm", &["H"], &at(30, 9, 0), &at(30, 10, 0)).await.0, StatusCode::CREATED);
    assert_eq!(
        book_as(&app, ADMIN, "ops", "adm2", &["H"], &at(30, 11, 0), &at(30, 13, 0)).await.0,
        StatusCode::BAD_REQUEST
    );
    let (_, b) = app.get_json(&format!("/api/bookings/{id}"), TENANT_ONE).await;
    assert_eq!(b["version"], 1, "refused moves changed nothing");
}

async fn decide(app: &TestApp, key: &str, id: i64, verb: &str, idem: &str, reason: Option<&str>) -> reqwest::Response {
    let body = match reason {
        Some(r) => json!({"reason": r}),
        None => json!({}),
    };
    app.request(Method::POST, &format!("/api/bookings/{id}/{verb}"), key, None)
        .header("Idempotency-Key", idem)
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn pending_bookings_hold_their_time_until_approved_or_rejected() {
    let app = TestApp::spawn().await;
    add_room(&app, json!({"code": "P", "name": "임원 회의실", "approvalRequired": true})).await;
    let (status, pending) = book_as(&app, TENANT_ONE, "alice", "p1", &["P"], &at(1, 10, 0), &at(1, 11, 0)).await;
    assert_eq!((status, pending["status"].as_str()), (StatusCode::CREATED, Some("PENDING")), "{pending}");
    let id = pending["id"].as_i64().unwrap();
    let (status, err) = book_as(&app, TENANT_TWO, "bob", "p2", &["P"], &at(1, 10, 30), &at(1, 11, 30)).await;
    assert_eq!(
        (status, err["code"].as_str()),
        (StatusCode::CONFLICT, Some("ROOM_TIME_TAKEN")),
        "a pending booking holds its time"
    );

    let refused = decide(&app, TENANT_ONE, id, "approve", "x", None).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN, "integration keys may not approve");
    let approved = decide(&app, ADMIN, id, "approve", "ap", None).await;
    assert_eq!(approved.headers()["Idempotency-Replayed"], "false");
    let approved_text = approved.text().await.unwrap();
    let approved: Value = serde_json::from_str(&approved_text).unwrap();
    assert_eq!((approved["status"].as_str(), approved["version"].as_i64()), (Some("CONFIRMED"), Some(2)));
    let replay = decide(&app, ADMIN, id, "approve", "ap", None).await;
    assert_eq!(replay.headers()["Idempotency-Replayed"], "true");
    assert_eq!(replay.text().await.unwrap(), approved_text, "a replay answers the same");
    let again = decide(&app, ADMIN, id, "approve", "ap2", None).await;
    assert_eq!((again.status(), body(again).await.1["code"].as_str()), (StatusCode::CONFLICT, Some("INVALID_STATE")));

    // Reject: the time is free at once, and the reason is kept.
    let (_, second) = book_as(&app, TENANT_ONE, "alice", "p3", &["P"], &at(2, 10, 0), &at(2, 11, 0)).await;
    let sid = second["id"].as_i64().unwrap();
    let (status, rejected) = body(decide(&app, ADMIN, sid, "reject", "rj", Some("임원 회의가 있습니다")).await).await;
    assert_eq!((status, rejected["status"].as_str()), (StatusCode::OK, Some("REJECTED")), "{rejected}");
    assert_eq!(
        book_as(&app, TENANT_TWO, "bob", "p4", &["P"], &at(2, 10, 0), &at(2, 11, 0)).await.0,
        StatusCode::CREATED
    );
    let (_, history) = app.get_json(&format!("/api/bookings/{sid}/history"), TENANT_ONE).await;
    let last = history["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["action"].as_str(), last["changes"]["reason"]["after"].as_str()),
        (Some("rejected"), Some("임원 회의가 있습니다"))
    );
    // Admins book such rooms confirmed; the organizer hears of each decision.
    assert_eq!(book_as(&app, ADMIN, "ops", "p5", &["P"], &at(3, 10, 0), &at(3, 11, 0)).await.1["status"], "CONFIRMED");
    assert_eq!(app.count(&format!("SELECT count(*) FROM notification_outbox WHERE delivery_id = 'booking-{id}-v2-changed' AND kind = 'booking.approved'")).await, 1);
    assert_eq!(app.count(&format!("SELECT count(*) FROM notification_outbox WHERE delivery_id = 'booking-{sid}-v2-changed' AND kind = 'booking.rejected'")).await, 1);
    app.assert_consistent().await;
}

fn actions(history: &Value) -> Vec<String> {
    history["events"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn history_has_exactly_one_event_per_change_and_none_for_refusals() {
    let app = TestApp::spawn().await;
    let (_, b) = book_as(&app, TENANT_ONE, "alice", "h1", &["A", "B"], &at(1, 10, 0), &at(1, 11, 0)).await;
    let id = b["id"].as_i64().unwrap();
    let (_, other) = book_as(&app, TENANT_ONE, "bob", "h2", &["C"], &at(1, 12, 0), &at(1, 13, 0)).await;
    let moved = app
        .move_booking(TENANT_ONE, "alice", id, None, &json!({"startsAt": at(1, 14, 0), "endsAt": at(1, 15, 0)}))
        .await;
    assert_eq!(moved.status(), StatusCode::OK);
    let retitled = app
        .move_booking(
            TENANT_ONE,
            "alice",
            id,
            None,
            &json!({"startsAt": at(1, 14, 0), "endsAt": at(1, 15, 0), "title": "새 이름"}),
        )
        .await;
    assert_eq!(retitled.status(), StatusCode::OK);
    // Refused: taken, not the organizer, stale version. Nothing recorded.
    let (_, blocker) = book_as(&app, TENANT_ONE, "bob", "h3", &["B"], &at(1, 16, 0), &at(1, 17, 0)).await;
    assert_eq!(
        app.move_booking(TENANT_ONE, "alice", id, None, &json!({"startsAt": at(1, 16, 0), "endsAt": at(1, 17, 0)}))
            .await
            .status(),
        StatusCode::CONFLICT
    );
    assert_eq!(app.cancel_booking(TENANT_ONE, "mallory", id, None, &json!({})).await.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        app.cancel_booking(TENANT_ONE, "alice", id, None, &json!({"expectedVersion": 1})).await.status(),
        StatusCode::CONFLICT
    );
    assert_eq!(app.cancel_booking(TENANT_ONE, "alice", id, None, &json!({})).await.status(), StatusCode::OK);

    let (status, history) = app.get_json(&format!("/api/bookings/{id}/history"), TENANT_ONE).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(actions(&history), ["created", "moved", "retitled", "cancelled"], "{history:#}");
    let e = history["events"].as_array().unwrap();
    assert_eq!(e[0]["actor"], "t1");
    assert_eq!(e[0]["changes"]["rooms"]["after"], json!(["A", "B"]));
    let utc = |s: String| chrono::DateTime::parse_from_rfc3339(&s).unwrap().with_timezone(&chrono::Utc);
    assert_eq!(e[1]["changes"]["startsAt"], json!({"before": utc(at(1, 10, 0)), "after": utc(at(1, 14, 0))}));
    assert_eq!(e[1]["changes"].as_object().unwrap().len(), 2, "only start and end changed: {}", e[1]);
    assert_eq!(e[2]["changes"], json!({"title": {"before": "회의", "after": "새 이름"}}));
    assert_eq!(e[3]["changes"]["status"], json!({"before": "CONFIRMED", "after": "CANCELLED"}));
    for b in [&other, &blocker] {
        let (_, h) = app.get_json(&format!("/api/bookings/{}/history", b["id"]), TENANT_ONE).await;
        assert_eq!(actions(&h), ["created"]);
    }
    let (status, _) = app.get_json("/api/bookings/999999/history", TENANT_ONE).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(app.count("SELECT count(*) FROM booking_event").await, 3 + 3, "six changes in all");

    // Series edits record one event per occurrence they change.
    let s = json!({"title": "주간", "rooms": ["C"], "startsAt": at(2, 9, 0), "endsAt": at(2, 10, 0), "recurrence": "FREQ=WEEKLY;COUNT=3"});
    let (_, created) = post(&app, "/api/series", TENANT_ONE, "alice", "s", s).await;
    let sid = created["series"]["id"].as_i64().unwrap();
    let res = app
        .request(Method::PATCH, &format!("/api/series/{sid}"), TENANT_ONE, Some("alice"))
        .json(&json!({"title": "주간 회의"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    for occ in created["created"].as_array().unwrap() {
        let (_, h) = app.get_json(&format!("/api/bookings/{}/history", occ["id"]), TENANT_ONE).await;
        assert_eq!(actions(&h), ["created", "retitled"]);
    }
    app.assert_consistent().await;
}
