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

fn utc(v: &Value) -> String {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap())
        .unwrap()
        .with_timezone(&chrono::Utc)
        .format("%H:%M")
        .to_string()
}

#[tokio::test]
async fn availability_free_busy_and_the_conflicts_of_new_buffers_follow_the_buffers() {
    let app = TestApp::spawn().await;
    assert_eq!(set_buffers(&app, "A", 15, 30).await.0, StatusCode::OK);
    assert_eq!(book(&app, "first", "A", (10, 0), (11, 0)).await.0, StatusCode::CREATED);
    assert_eq!(book(&app, "second", "A", (11, 45), (12, 30)).await.0, StatusCode::CREATED);

    // A new meeting needs its own setup and cleanup clear of theirs: it may
    // end by 09:15 (its 30 minutes' cleanup, then their 15 minutes' setup)
    // and start from 13:15 (12:30, their 30 minutes, its 15).
    let date = &at(1, 0, 0)[..10];
    let (status, reply) = app.get_json(&format!("/api/rooms/A/availability?date={date}"), TENANT_ONE).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    let free: Vec<(String, String)> =
        reply["free"].as_array().unwrap().iter().map(|f| (utc(&f["startsAt"]), utc(&f["endsAt"]))).collect();
    assert_eq!(free, vec![("15:00".into(), "09:15".into()), ("13:15".into(), "15:00".into())], "{reply}");

    let dav = crate::caldav::Dav::person(&app, "kim").await;
    let fb = format!(
        r#"<C:free-busy-query xmlns:C="urn:ietf:params:xml:ns:caldav"><C:time-range start="{}" end="{}"/></C:free-busy-query>"#,
        at(1, 0, 0).replace(['-', ':'], "")[..15].to_owned() + "Z",
        at(2, 0, 0).replace(['-', ':'], "")[..15].to_owned() + "Z",
    );
    let res = dav.report("/dav/calendars/rooms/A/", &fb).await;
    let day = at(1, 0, 0).replace('-', "")[..8].to_owned();
    let lines: Vec<String> =
        res.body.lines().filter(|l| l.starts_with("FREEBUSY")).map(|l| l.replace(&day, "")).collect();
    assert_eq!(
        lines,
        vec![
            "FREEBUSY;FBTYPE=BUSY:T100000Z/T110000Z",
            "FREEBUSY;FBTYPE=BUSY:T114500Z/T123000Z",
            "FREEBUSY;FBTYPE=BUSY-UNAVAILABLE:T094500Z/T100000Z",
            "FREEBUSY;FBTYPE=BUSY-UNAVAILABLE:T110000Z/T114500Z",
            "FREEBUSY;FBTYPE=BUSY-UNAVAILABLE:T123000Z/T130000Z",
        ],
        "{}",
        res.body
    );

    // Longer cleanup now: the two bookings, made under the old buffers, are
    // what the new ones would not have allowed; nothing moves.
    let (status, empty) = app.get_json("/api/rooms/A/buffer-conflicts", ADMIN).await;
    assert_eq!((status, empty["bookings"].as_array().map(Vec::len)), (StatusCode::OK, Some(0)), "{empty}");
    assert_eq!(set_buffers(&app, "A", 0, 60).await.0, StatusCode::OK);
    let (status, conflicts) = app.get_json("/api/rooms/A/buffer-conflicts", ADMIN).await;
    assert_eq!(status, StatusCode::OK, "{conflicts}");
    let titles: Vec<String> = conflicts["bookings"].as_array().unwrap().iter().map(|b| utc(&b["startsAt"])).collect();
    assert_eq!(titles, vec!["10:00", "11:45"], "{conflicts}");
    assert_eq!(app.get_json("/api/rooms/A/buffer-conflicts", TENANT_ONE).await.0, StatusCode::FORBIDDEN);
    assert_eq!(app.get_json("/api/rooms/NOPE/buffer-conflicts", ADMIN).await.0, StatusCode::NOT_FOUND);
    app.assert_consistent().await;
}
