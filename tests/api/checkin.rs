//! Check-in and no-show release (SPEC §11): every window edge, linked
//! bookings released on all rooms, checked-in bookings kept, and two
//! processes releasing exactly once.

use chrono::{DateTime, Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use yeyak::clock::Clock;

use crate::helpers::*;

/// The next whole hour at least two hours ahead of the test clock.
fn slot(app: &TestApp, hours_ahead: i64) -> DateTime<Utc> {
    use chrono::DurationRound;
    app.clock.now().duration_trunc(Duration::hours(1)).unwrap() + Duration::hours(hours_ahead)
}

async fn book_at(app: &TestApp, owner: &str, idem: &str, rooms: &[&str], start: DateTime<Utc>, minutes: i64) -> Value {
    let (status, b) = body(
        app.create_booking(
            TENANT_ONE,
            owner,
            idem,
            &booking("체크인 회의", rooms, &start.to_rfc3339(), &(start + Duration::minutes(minutes)).to_rfc3339()),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    b
}

async fn check_in(app: &TestApp, owner: &str, id: &Value) -> (StatusCode, Value) {
    let res = app
        .request(Method::POST, &format!("/api/bookings/{id}/check-in"), TENANT_ONE, Some(owner))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    body(res).await
}

async fn rooms_with_check_in(app: &TestApp) {
    for code in ["K1", "K2"] {
        add_room(app, json!({"code": code, "name": code, "area": "체크인", "suite": "K", "checkInRequired": true}))
            .await;
    }
}

#[tokio::test]
async fn the_check_in_window_opens_ten_minutes_before_and_closes_at_the_end_of_grace() {
    let app = TestApp::spawn().await;
    rooms_with_check_in(&app).await;
    let t = slot(&app, 2);
    let before = book_at(&app, "alice", "b1", &["K1"], t, 60).await;
    assert_eq!(before["checkInRequired"], true);
    let open = book_at(&app, "alice", "b2", &["K2"], t, 60).await;
    let late = book_at(&app, "alice", "b3", &["K1"], t + Duration::hours(2), 60).await;

    app.clock.set(t - Duration::minutes(10) - Duration::seconds(1));
    let (status, err) = check_in(&app, "alice", &before["id"]).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("CHECK_IN_CLOSED")), "{err}");
    app.clock.set(t - Duration::minutes(10));
    let (status, ok) = check_in(&app, "alice", &open["id"]).await;
    assert_eq!(status, StatusCode::OK, "{ok}");
    assert_eq!(ok["checkedInAt"], json!(t - Duration::minutes(10)));
    let (status, again) = check_in(&app, "alice", &open["id"]).await;
    assert_eq!(
        (status, &again["checkedInAt"]),
        (StatusCode::OK, &ok["checkedInAt"]),
        "checking in twice changes nothing"
    );
    let (status, _) = check_in(&app, "mallory", &before["id"]).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "organizer or admin only");

    let t2 = t + Duration::hours(2);
    app.clock.set(t2 + Duration::minutes(15) - Duration::seconds(1));
    assert_eq!(check_in(&app, "alice", &late["id"]).await.0, StatusCode::OK, "the last second of grace");
    let late2 = book_at(&app, "alice", "b4", &["K2"], t2 + Duration::hours(1), 30).await;
    app.clock.set(t2 + Duration::hours(1) + Duration::minutes(15));
    let (status, err) = check_in(&app, "alice", &late2["id"]).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("CHECK_IN_CLOSED")), "at grace end");

    let plain = book_at(&app, "alice", "b5", &["A"], slot(&app, 3), 60).await;
    let (status, err) = check_in(&app, "alice", &plain["id"]).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("CHECK_IN_NOT_REQUIRED")));
    let (_, h) = app.get_json(&format!("/api/bookings/{}/history", open["id"]), TENANT_ONE).await;
    let acts: Vec<&str> = h["events"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(acts, ["created", "checked_in"]);
}

#[tokio::test]
async fn a_linked_no_show_is_released_on_every_room_and_a_checked_in_booking_never() {
    let app = TestApp::spawn().await;
    rooms_with_check_in(&app).await;
    let t = slot(&app, 2);
    let linked = book_at(&app, "alice", "l", &["K1", "K2"], t, 120).await;
    let kept = book_at(&app, "bob", "k", &["K1", "K2"], t + Duration::hours(3), 60).await;

    // Before the grace ends nothing happens.
    app.clock.set(t + Duration::minutes(14));
    app.state.sweeper.tick().await.unwrap();
    assert_eq!(app.get_json(&format!("/api/bookings/{}", linked["id"]), TENANT_ONE).await.1["status"], "CONFIRMED");

    app.clock.set(t + Duration::minutes(15) + Duration::seconds(30));
    app.state.sweeper.tick().await.unwrap();
    let (_, released) = app.get_json(&format!("/api/bookings/{}", linked["id"]), TENANT_ONE).await;
    assert_eq!(released["status"], "RELEASED");
    assert_eq!(released["endsAt"], json!(t + Duration::minutes(16)), "rounded up to the next minute");
    assert_eq!(released["releasedAt"], json!(t + Duration::minutes(15) + Duration::seconds(30)));
    let db = app.db().await;
    let ends: Vec<DateTime<Utc>> = db
        .query("SELECT ends_at FROM reservation_room WHERE reservation_id = $1", &[&linked["id"].as_i64().unwrap()])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(ends, vec![t + Duration::minutes(16); 2], "every room copy shortened");
    // The rest of the slot books at once, on either room.
    book_at(&app, "carol", "after", &["K2"], t + Duration::minutes(16), 60).await;
    assert_eq!(
        app.count(&format!("SELECT count(*) FROM notification_outbox WHERE delivery_id = 'booking-{}-released' AND kind = 'booking.released'", linked["id"])).await,
        1
    );
    let (_, h) = app.get_json(&format!("/api/bookings/{}/history", linked["id"]), TENANT_ONE).await;
    let last = h["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["action"], "released");
    assert_eq!(
        last["changes"]["endsAt"],
        json!({"before": t + Duration::hours(2), "after": t + Duration::minutes(16)})
    );

    // A checked-in booking is never released.
    app.clock.set(t + Duration::hours(3));
    assert_eq!(check_in(&app, "bob", &kept["id"]).await.0, StatusCode::OK);
    app.clock.set(t + Duration::hours(5));
    app.state.sweeper.tick().await.unwrap();
    let (_, still) = app.get_json(&format!("/api/bookings/{}", kept["id"]), TENANT_ONE).await;
    assert_eq!((still["status"].as_str(), &still["endsAt"]), (Some("CONFIRMED"), &json!(t + Duration::hours(4))));
    // Sweeping again releases nothing twice.
    app.state.sweeper.tick().await.unwrap();
    let once =
        format!("SELECT count(*) FROM booking_event WHERE action = 'released' AND reservation_id = {}", linked["id"]);
    assert_eq!(app.count(&once).await, 1);
    app.assert_consistent().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_processes_release_each_no_show_exactly_once() {
    let first = TestApp::spawn().await;
    let second = first.another_process().await;
    rooms_with_check_in(&first).await;
    let t = slot(&first, 2);
    for i in 0..30 {
        book_at(
            &first,
            "alice",
            &format!("n{i}"),
            &[if i % 2 == 0 { "K1" } else { "K2" }],
            t + Duration::minutes(30 * (i / 2)),
            30,
        )
        .await;
    }
    let later = t + Duration::hours(10);
    first.clock.set(later);
    second.clock.set(later);
    // Both sweep at the same time, without the leader gate (the admin sweep).
    let sweep = |app: &TestApp| {
        app.request(Method::POST, "/api/admin/sweep", ADMIN, Some("ops"))
            .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
            .json(&json!({}))
            .send()
    };
    let (a, b) = tokio::join!(sweep(&first), sweep(&second));
    assert_eq!((a.unwrap().status(), b.unwrap().status()), (StatusCode::OK, StatusCode::OK));
    assert_eq!(first.count("SELECT count(*) FROM reservation WHERE status = 'RELEASED'").await, 30);
    assert_eq!(first.count("SELECT count(*) FROM booking_event WHERE action = 'released'").await, 30);
    assert_eq!(first.count("SELECT count(*) FROM notification_outbox WHERE kind = 'booking.released'").await, 30);
    first.assert_consistent().await;
}

/// Waits until `n` sessions queue on a lock of `table` (the barrier: every
/// contender is inside its statement before the lock is let go).
async fn until_waiting_on(db: &tokio_postgres::Client, table: &str, n: i64) {
    let sql = format!("SELECT count(*) FROM pg_locks WHERE relation = '{table}'::regclass AND NOT granted");
    for _ in 0..2000 {
        let waiting: i64 = db.query_one(&sql, &[]).await.unwrap().get(0);
        if waiting >= n {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("{n} sessions never queued on {table}");
}

/// Eight releasers on two processes, all held at one table lock and let go
/// together, race over 240 no-shows in small batches: each booking is
/// released once — the counts add up to the whole, and every booking has
/// exactly one `released` event.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_releasers_release_disjoint_sets_exactly_once() {
    use yeyak::checkin::release::ReleaseNoShows;
    use yeyak::command::Principal;
    // Room in each process's background lane for four releasers.
    let first = TestApp::spawn_with(|c| c.background_connections = 6).await;
    let second = first.another_process_with(|c| c.background_connections = 6).await;
    for code in ["K1", "K2", "K3", "K4"] {
        add_room(&first, json!({"code": code, "name": code, "area": "체크인", "suite": "K", "checkInRequired": true}))
            .await;
    }
    const N: i64 = 240;
    let t = slot(&first, 2);
    let rooms = ["K1", "K2", "K3", "K4"];
    let app = &first;
    for chunk in (0..N).collect::<Vec<_>>().chunks(16) {
        futures_util::future::join_all(chunk.iter().map(|&i| {
            let start = t + Duration::minutes(30 * (i / 4));
            let owner = format!("owner{}", i % 7);
            async move { book_at(app, &owner, &format!("n{i}"), &[rooms[(i % 4) as usize]], start, 30).await }
        }))
        .await;
    }
    let later = t + Duration::hours(N / 4);
    first.clock.set(later);
    second.clock.set(later);

    let gate = first.db().await;
    gate.batch_execute("BEGIN; LOCK TABLE reservation IN EXCLUSIVE MODE").await.unwrap();
    let release_all = |app: &TestApp| {
        let pipeline = app.state.pipeline.clone();
        tokio::spawn(async move {
            let mut mine = 0usize;
            loop {
                let released = pipeline
                    .run(&Principal::system("race"), None, &ReleaseNoShows { limit: 7 })
                    .await
                    .expect("a release commits");
                if released == 0 {
                    return mine;
                }
                mine += released;
            }
        })
    };
    let racers: Vec<_> = (0..8).map(|i| release_all(if i % 2 == 0 { &first } else { &second })).collect();
    until_waiting_on(&gate, "reservation", 8).await;
    gate.batch_execute("COMMIT").await.unwrap();
    let mut counts = Vec::new();
    for racer in racers {
        counts.push(racer.await.unwrap());
    }

    assert_eq!(counts.iter().sum::<usize>() as i64, N, "the releasers' counts add up to the whole: {counts:?}");
    assert!(counts.iter().filter(|&&c| c > 0).count() > 1, "more than one releaser did work: {counts:?}");
    assert_eq!(first.count("SELECT count(*) FROM reservation WHERE status = 'RELEASED'").await, N);
    assert_eq!(first.count("SELECT count(*) FROM booking_event WHERE action = 'released'").await, N);
    assert_eq!(
        first
            .count(
                "SELECT count(*) FROM (SELECT reservation_id FROM booking_event WHERE action = 'released'
                  GROUP BY reservation_id HAVING count(*) > 1) twice"
            )
            .await,
        0,
        "no booking released twice"
    );
    first.assert_consistent().await;
}

/// A check-in committing in the last second of grace while the release
/// runs on another process: the check-in holds its booking's row when the
/// release chooses (both are held inside their transactions at the history
/// table until both are there), so the release steps around it; the
/// checked-in booking stays CONFIRMED and the other no-show is released.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_check_in_at_the_end_of_grace_survives_a_release_running_beside_it() {
    let first = TestApp::spawn().await;
    let second = first.another_process().await;
    rooms_with_check_in(&first).await;
    let t = slot(&first, 2);
    let arriving = book_at(&first, "alice", "late", &["K1"], t, 60).await;
    let absent = book_at(&first, "bob", "absent", &["K2"], t, 60).await;
    let grace = first.state.policy().check_in_grace;
    first.clock.set(t + grace - Duration::seconds(1));
    second.clock.set(t + grace + Duration::minutes(1));

    let gate = first.db().await;
    gate.batch_execute("BEGIN; LOCK TABLE booking_event IN EXCLUSIVE MODE").await.unwrap();
    let checking_in = tokio::spawn({
        let url = first.url(&format!("/api/bookings/{}/check-in", arriving["id"]));
        async move {
            reqwest::Client::new()
                .post(url)
                .bearer_auth(TENANT_ONE)
                .header("X-Reservation-Owner", "alice")
                .json(&json!({}))
                .send()
                .await
                .unwrap()
                .status()
        }
    });
    // The check-in has its row and waits at the history table…
    until_waiting_on(&gate, "booking_event", 1).await;
    let releasing = tokio::spawn({
        let pipeline = second.state.pipeline.clone();
        async move {
            pipeline
                .run(
                    &yeyak::command::Principal::system("race"),
                    None,
                    &yeyak::checkin::release::ReleaseNoShows { limit: 500 },
                )
                .await
                .expect("the release commits")
        }
    });
    // …and so does the release, having chosen its rows.
    until_waiting_on(&gate, "booking_event", 2).await;
    gate.batch_execute("COMMIT").await.unwrap();
    assert_eq!(checking_in.await.unwrap(), StatusCode::OK);
    assert_eq!(releasing.await.unwrap(), 1, "only the absent booking");

    let (_, kept) = first.get_json(&format!("/api/bookings/{}", arriving["id"]), TENANT_ONE).await;
    assert_eq!(kept["status"], "CONFIRMED", "{kept}");
    assert!(kept["checkedInAt"].is_string());
    let (_, gone) = first.get_json(&format!("/api/bookings/{}", absent["id"]), TENANT_ONE).await;
    assert_eq!(gone["status"], "RELEASED", "{gone}");
    // A later sweep still leaves the checked-in booking alone.
    second.state.sweeper.sweep_now(32).await.unwrap();
    let (_, kept) = first.get_json(&format!("/api/bookings/{}", arriving["id"]), TENANT_ONE).await;
    assert_eq!(kept["status"], "CONFIRMED");
    first.assert_consistent().await;
}
