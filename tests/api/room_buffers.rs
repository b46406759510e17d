//! Setup and cleanup time (SPEC §24 "Buffers"): a booking occupies its room
//! from its start less the room's before-buffer to its end plus the
//! after-buffer; the `EXCLUDE` constraint alone keeps occupied ranges apart,
//! a refusal caused only by buffers is `ROOM_BUFFER_TAKEN`, and the buffers
//! in force when a booking is made stay with it.

use std::sync::Arc;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::sync::Barrier;

use crate::helpers::*;

async fn set_buffers(app: &TestApp, room: &str, before: i64, after: i64) -> (StatusCode, Value) {
    let body = json!({ "bufferBeforeMinutes": before, "bufferAfterMinutes": after });
    send(app, Method::PATCH, &format!("/api/rooms/{room}"), ADMIN, None, body).await
}

async fn book(
    app: &TestApp,
    idem: &str,
    room: &str,
    (h1, m1): (u32, u32),
    (h2, m2): (u32, u32),
) -> (StatusCode, Value) {
    body(app.create_booking(TENANT_ONE, "ops", idem, &booking("회의", &[room], &at(1, h1, m1), &at(1, h2, m2))).await)
        .await
}

#[tokio::test]
async fn buffers_keep_meetings_apart_and_say_why() {
    let app = TestApp::spawn().await;
    let (status, room) = set_buffers(&app, "A", 15, 30).await;
    assert_eq!(status, StatusCode::OK, "{room}");
    assert_eq!((room["bufferBeforeMinutes"].as_i64(), room["bufferAfterMinutes"].as_i64()), (Some(15), Some(30)));

    let before = fingerprint(&app, &["room"]).await;
    for (field, body) in [
        ("bufferBeforeMinutes", json!({ "bufferBeforeMinutes": 241 })),
        ("bufferAfterMinutes", json!({ "bufferAfterMinutes": -1 })),
    ] {
        let (status, err) = send(&app, Method::PATCH, "/api/rooms/A", ADMIN, None, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
        assert_eq!(err["details"]["field"], field, "{err}");
    }
    assert_eq!(fingerprint(&app, &["room"]).await, before, "a refused change changes nothing");

    assert_eq!(book(&app, "first", "A", (10, 0), (11, 0)).await.0, StatusCode::CREATED);
    // 11:00 + 30 min cleanup + 15 min setup: the next meeting starts at 11:45 at the earliest.
    let (status, err) = book(&app, "too-soon", "A", (11, 10), (12, 0)).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("ROOM_BUFFER_TAKEN")), "{err}");
    assert_eq!(err["message"], "앞뒤 준비 시간과 겹칩니다");
    let (status, err) = book(&app, "overlap", "A", (10, 30), (11, 30)).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("ROOM_TIME_TAKEN")), "{err}");
    let (status, err) = book(&app, "before-it", "A", (9, 0), (9, 50)).await;
    assert_eq!(
        (status, err["code"].as_str()),
        (StatusCode::CONFLICT, Some("ROOM_BUFFER_TAKEN")),
        "its setup time: {err}"
    );
    assert_eq!(book(&app, "in-time", "A", (11, 45), (12, 30)).await.0, StatusCode::CREATED);
    assert_eq!(book(&app, "other-room", "B", (11, 10), (12, 0)).await.0, StatusCode::CREATED, "B has no buffers");

    // A change of the room's buffers leaves the bookings made under the old ones as they were.
    assert_eq!(set_buffers(&app, "A", 0, 0).await.0, StatusCode::OK);
    let (status, err) = book(&app, "after-change", "A", (12, 35), (13, 0)).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("ROOM_BUFFER_TAKEN")), "12:30 + 30: {err}");
    assert_eq!(book(&app, "later", "A", (13, 0), (14, 0)).await.0, StatusCode::CREATED);
    let kept = app
        .count("SELECT count(*) FROM reservation_room WHERE room = 'A' AND active AND buffer_after_minutes = 30")
        .await;
    assert_eq!(kept, 2);
    app.assert_consistent().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_database_alone_decides_who_gets_a_buffered_slot() {
    let app = Arc::new(TestApp::spawn().await);
    assert_eq!(set_buffers(&app, "A", 10, 20).await.0, StatusCode::OK);
    for round in 0..5i64 {
        // Two slots 15 minutes apart: the meetings never overlap across
        // slots, the buffers always do. Ten requests for each, at once.
        let early = booking("앞", &["A"], &at(2 + round, 10, 0), &at(2 + round, 11, 0));
        let late = booking("뒤", &["A"], &at(2 + round, 11, 15), &at(2 + round, 12, 0));
        let barrier = Arc::new(Barrier::new(20));
        let tasks: Vec<_> = (0..20)
            .map(|i| {
                let (app, barrier) = (app.clone(), barrier.clone());
                let b = if i % 2 == 0 { early.clone() } else { late.clone() };
                tokio::spawn(async move {
                    let req = app
                        .request(Method::POST, "/api/bookings", TENANT_ONE, Some(&format!("user-{i}")))
                        .header("Idempotency-Key", format!("r{round}-{i}"))
                        .json(&b);
                    barrier.wait().await;
                    body(req.send().await.expect("sent")).await
                })
            })
            .collect();
        let mut results = Vec::new();
        for t in tasks {
            results.push(t.await.unwrap());
        }
        let created = results.iter().filter(|(s, _)| *s == StatusCode::CREATED).count();
        let refused: Vec<&str> = results
            .iter()
            .filter(|(s, _)| *s == StatusCode::CONFLICT)
            .filter_map(|(_, b)| b["code"].as_str())
            .filter(|c| *c == "ROOM_TIME_TAKEN" || *c == "ROOM_BUFFER_TAKEN")
            .collect();
        assert_eq!((created, refused.len()), (1, 19), "round {round}: {results:?}");
        // The nine who asked for the winner's slot overlap it; the ten of
        // the other slot only touch its buffers.
        let time = refused.iter().filter(|c| **c == "ROOM_TIME_TAKEN").count();
        assert_eq!((time, 19 - time), (9, 10), "round {round}: {refused:?}");
    }
    assert_eq!(app.count("SELECT count(*) FROM reservation WHERE status IN ('CONFIRMED', 'PENDING')").await, 5);
    app.assert_consistent().await;
}
