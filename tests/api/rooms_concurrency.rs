//! Races on rooms (seed 002 §4, §5, §교착): many connections at once, released
//! together by a barrier; open transactions held by a second connection.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::sync::Barrier;

use crate::helpers::*;

/// Sends all bodies at the same instant; returns (status, body) per request.
async fn race(app: &Arc<TestApp>, bodies: Vec<(String, Value)>) -> Vec<(StatusCode, Value)> {
    let barrier = Arc::new(Barrier::new(bodies.len()));
    let tasks: Vec<_> = bodies
        .into_iter()
        .enumerate()
        .map(|(i, (idem, b))| {
            let (app, barrier) = (app.clone(), barrier.clone());
            tokio::spawn(async move {
                let req = app
                    .request(reqwest::Method::POST, "/api/bookings", TENANT_ONE, Some(&format!("user-{i}")))
                    .header("Idempotency-Key", idem)
                    .json(&b);
                barrier.wait().await;
                body(req.send().await.expect("sent")).await
            })
        })
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

fn assert_no_deadlock_text(results: &[(StatusCode, Value)]) {
    for (_, b) in results {
        assert!(!b.to_string().to_lowercase().contains("deadlock"), "{b}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_requests_for_one_slot_give_exactly_one_booking_each_round() {
    let app = Arc::new(TestApp::spawn().await);
    for round in 0..10 {
        let slot = booking("경합", &["A"], &at(1 + round, 10, 0), &at(1 + round, 11, 0));
        let results = race(&app, (0..20).map(|i| (format!("r{round}-{i}"), slot.clone())).collect()).await;
        let created = results.iter().filter(|(s, _)| *s == StatusCode::CREATED).count();
        let taken = results
            .iter()
            .filter(|(s, b)| {
                *s == StatusCode::CONFLICT && b["code"] == "ROOM_TIME_TAKEN" && b["message"] == "이미 예약된 시간입니다"
            })
            .count();
        assert_eq!((created, taken), (1, 19), "round {round}: {results:?}");
        assert_no_deadlock_text(&results);
    }
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 10);
    app.assert_consistent().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_plus_b_against_b_plus_c_has_exactly_one_winner() {
    let app = Arc::new(TestApp::spawn().await);
    for round in 0..50 {
        let day = 1 + round / 10;
        let hour = 8 + (round % 10) as u32;
        let results = race(
            &app,
            vec![
                (format!("ab-{round}"), booking("AB", &["A", "B"], &at(day, hour, 0), &at(day, hour + 1, 0))),
                (format!("bc-{round}"), booking("BC", &["B", "C"], &at(day, hour, 0), &at(day, hour + 1, 0))),
            ],
        )
        .await;
        let mut statuses: Vec<u16> = results.iter().map(|(s, _)| s.as_u16()).collect();
        statuses.sort();
        assert_eq!(statuses, [201, 409], "round {round}: {results:?}");
        assert_no_deadlock_text(&results);
    }
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 50);
    app.assert_consistent().await;
}

/// Opens a transaction on a raw connection that books `room` for the slot and
/// does not commit yet.
async fn hold_open(app: &TestApp, room: &str, starts: &str, ends: &str) -> tokio_postgres::Client {
    let client = app.db().await;
    client.batch_execute("BEGIN").await.unwrap();
    let row = client
        .query_one(
            "INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at)
             VALUES ('held', 'test', 'x', $1::text::timestamptz, $2::text::timestamptz, now(), now()) RETURNING id",
            &[&starts, &ends],
        )
        .await
        .unwrap();
    let id: i64 = row.get(0);
    client
        .execute(
            "INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
             VALUES ($1, $2, $3::text::timestamptz, $4::text::timestamptz, true)",
            &[&id, &room, &starts, &ends],
        )
        .await
        .unwrap();
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn unrelated_requests_do_not_wait_for_an_open_overlapping_transaction() {
    let app = Arc::new(TestApp::spawn().await);
    let held = hold_open(&app, "A", &at(1, 10, 0), &at(1, 11, 0)).await;

    // Another room at the same time, and the same room at another time: both
    // complete while the transaction stays open.
    let (b1, b2) =
        (booking("B", &["B"], &at(1, 10, 0), &at(1, 11, 0)), booking("A later", &["A"], &at(1, 11, 0), &at(1, 12, 0)));
    let other_room = app.create_booking(TENANT_ONE, "bob", "k1", &b1);
    let other_time = app.create_booking(TENANT_ONE, "bob", "k2", &b2);
    let (r1, r2) = tokio::time::timeout(Duration::from_secs(5), async { tokio::join!(other_room, other_time) })
        .await
        .expect("unrelated requests must not wait");
    assert_eq!(r1.status(), StatusCode::CREATED);
    assert_eq!(r2.status(), StatusCode::CREATED);

    // The overlapping request waits for the open transaction...
    let waiting = {
        let app = app.clone();
        tokio::spawn(async move {
            body(
                app.create_booking(
                    TENANT_ONE,
                    "carol",
                    "k3",
                    &booking("A overlap", &["A"], &at(1, 10, 30), &at(1, 11, 0)),
                )
                .await,
            )
            .await
        })
    };
    until_waiting_for_locks(&app.db().await, 1).await;
    assert!(!waiting.is_finished(), "the overlapping request must wait for the open transaction");
    // ...and gets its answer once it commits.
    held.batch_execute("COMMIT").await.unwrap();
    let (status, b) = tokio::time::timeout(Duration::from_secs(5), waiting).await.unwrap().unwrap();
    assert_eq!(status, StatusCode::CONFLICT, "{b}");
    assert_eq!(b["code"], "ROOM_TIME_TAKEN");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rolled_back_holder_lets_the_waiter_through() {
    let app = Arc::new(TestApp::spawn().await);
    let held = hold_open(&app, "C", &at(1, 10, 0), &at(1, 11, 0)).await;
    let waiting = {
        let app = app.clone();
        tokio::spawn(async move {
            app.create_booking(TENANT_ONE, "carol", "k", &booking("C", &["C"], &at(1, 10, 0), &at(1, 11, 0))).await
        })
    };
    until_waiting_for_locks(&app.db().await, 1).await;
    assert!(!waiting.is_finished());
    held.batch_execute("ROLLBACK").await.unwrap();
    let res = tokio::time::timeout(Duration::from_secs(5), waiting).await.unwrap().unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    app.assert_consistent().await;
}

/// Two moves to the same new time that write A and B in opposite orders: the
/// raw connection writes B then A (as a client that ignores room order would),
/// the server writes A then B. PostgreSQL detects the real deadlock in the
/// server's backend (its deadlock_timeout is shorter), the server re-runs its
/// transaction, and ends with ROOM_TIME_TAKEN while the other move succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_real_deadlock_is_retried_and_ends_in_one_success_and_one_taken() {
    let app = Arc::new(TestApp::spawn().await);
    let x = app.create_booking(TENANT_ONE, "alice", "x", &booking("X", &["A", "B"], &at(1, 8, 0), &at(1, 9, 0))).await;
    let x: Value = x.json().await.unwrap();
    let y = app.create_booking(TENANT_ONE, "bob", "y", &booking("Y", &["A", "B"], &at(1, 14, 0), &at(1, 15, 0))).await;
    let y: Value = y.json().await.unwrap();
    let (x_id, y_id) = (x["id"].as_i64().unwrap(), y["id"].as_i64().unwrap());
    let (new_start, new_end) = (at(1, 10, 0), at(1, 11, 0));

    let raw = app.db().await;
    raw.batch_execute("SET deadlock_timeout = '10s'; BEGIN").await.unwrap();
    let move_y = |room: &'static str| {
        let (s, e) = (new_start.clone(), new_end.clone());
        let raw = &raw;
        async move {
            raw.execute(
                "UPDATE reservation_room SET starts_at = $1::text::timestamptz, ends_at = $2::text::timestamptz
                  WHERE reservation_id = $3 AND room = $4",
                &[&s, &e, &y_id, &room],
            )
            .await
        }
    };
    raw.execute(
        "UPDATE reservation SET starts_at = $1::text::timestamptz, ends_at = $2::text::timestamptz WHERE id = $3",
        &[&new_start, &new_end, &y_id],
    )
    .await
    .unwrap();
    move_y("B").await.unwrap();

    let retries_before = app.state.db_stats.retries();
    let server_move = {
        let app = app.clone();
        let change = json!({"startsAt": new_start, "endsAt": new_end});
        tokio::spawn(async move { body(app.move_booking(TENANT_ONE, "alice", x_id, Some("mx"), &change).await).await })
    };
    // Once the server has written A and waits for our B, close the cycle from our side.
    until_waiting_for_locks(&app.db().await, 1).await;
    move_y("A").await.expect("the raw move survives: the server's backend is the deadlock victim");
    raw.batch_execute("COMMIT").await.unwrap();

    let (status, b) = tokio::time::timeout(Duration::from_secs(15), server_move).await.unwrap().unwrap();
    assert_eq!(status, StatusCode::CONFLICT, "{b}");
    assert_eq!(b["code"], "ROOM_TIME_TAKEN");
    assert!(app.state.db_stats.retries() > retries_before, "the server must have retried after 40P01");
    let (_, y_now) = app.get_json(&format!("/api/bookings/{y_id}"), TENANT_ONE).await;
    assert_eq!(
        y_now["startsAt"],
        json!(chrono::DateTime::parse_from_rfc3339(&new_start).unwrap().with_timezone(&chrono::Utc))
    );
    let (_, x_now) = app.get_json(&format!("/api/bookings/{x_id}"), TENANT_ONE).await;
    assert_eq!(x_now["version"], 1, "the refused move changed nothing");
    app.assert_consistent().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_moves_of_linked_bookings_to_one_time_have_one_winner() {
    let app = Arc::new(TestApp::spawn().await);
    for round in 0..10i64 {
        let x: Value = app
            .create_booking(
                TENANT_ONE,
                "alice",
                &format!("x{round}"),
                &booking("X", &["A", "B"], &at(1 + round, 8, 0), &at(1 + round, 9, 0)),
            )
            .await
            .json()
            .await
            .unwrap();
        let y: Value = app
            .create_booking(
                TENANT_ONE,
                "alice",
                &format!("y{round}"),
                &booking("Y", &["B", "C"], &at(1 + round, 14, 0), &at(1 + round, 15, 0)),
            )
            .await
            .json()
            .await
            .unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let change = json!({"startsAt": at(1 + round, 10, 0), "endsAt": at(1 + round, 11, 0)});
        let tasks: Vec<_> = [x["id"].as_i64().unwrap(), y["id"].as_i64().unwrap()]
            .into_iter()
            .map(|id| {
                let (app, barrier, change) = (app.clone(), barrier.clone(), change.clone());
                tokio::spawn(async move {
                    barrier.wait().await;
                    body(app.move_booking(TENANT_ONE, "alice", id, None, &change).await).await
                })
            })
            .collect();
        let mut statuses = Vec::new();
        for t in tasks {
            let (s, b) = t.await.unwrap();
            assert!(!b.to_string().contains("deadlock"), "{b}");
            statuses.push(s.as_u16());
        }
        statuses.sort();
        assert_eq!(statuses, [200, 409], "round {round}");
    }
    app.assert_consistent().await;
}
