//! The expiry sweeper: what one resource's sweep does, the leader gate, the
//! per-tick limits (seed 000 §만료된 자리…, §리더로 선출된 정리 작업자).

use std::sync::Arc;

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::sync::Barrier;
use yeyak::sweeper::{Sweeper, TickOutcome};

use crate::helpers::body as body_of;
use crate::helpers::*;

async fn get(app: &TestApp, path: &str, owner: &str) -> Value {
    body_of(app.request(reqwest::Method::GET, path, TENANT_ONE, Some(owner)).send().await.unwrap()).await.1
}

async fn sweep(app: &TestApp, idem: &str) -> Value {
    let (status, summary) = post(app, "/api/admin/sweep", ADMIN, "ops", idem, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    summary
}

async fn demo(app: &TestApp) -> Value {
    let (_, list) = app.get_json("/api/resources", TENANT_ONE).await;
    list["resources"][0].clone()
}

async fn outbox(app: &TestApp) -> Vec<(String, String)> {
    app.db()
        .await
        .query("SELECT delivery_id, status FROM notification_outbox ORDER BY delivery_id", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[tokio::test]
async fn an_expired_hold_with_a_waiter_is_handed_on_once() {
    let app = TestApp::spawn().await;
    let (_, alice) = post(&app, "/api/resources/1/holds", TENANT_ONE, "alice", "a", json!({})).await;
    let (_, bob) = post(&app, "/api/resources/1/waitlist", TENANT_ONE, "bob", "b", json!({})).await;
    // Not yet due: nothing happens.
    assert_eq!(
        sweep(&app, "s0").await,
        json!({"scannedResources": 0, "expiredHolds": 0, "expiredOffers": 0, "expiredEntries": 0, "promotedEntries": 0, "releasedUnits": 0})
    );

    app.clock.advance(Duration::seconds(31));
    let summary = sweep(&app, "s1").await;
    assert_eq!(
        summary,
        json!({"scannedResources": 1, "expiredHolds": 1, "expiredOffers": 0, "expiredEntries": 0, "promotedEntries": 1, "releasedUnits": 0})
    );
    assert_eq!(get(&app, &format!("/api/holds/{}", alice["id"]), "alice").await["state"], "EXPIRED");
    let entry = get(&app, &format!("/api/waitlist/{}", bob["id"]), "bob").await;
    assert_eq!(entry["state"], "OFFERED");
    let d = demo(&app).await;
    assert_eq!((d["occupiedCount"].as_i64(), d["revision"].as_i64()), (Some(1), Some(1)));
    let offered = format!("waitlist-{}-offered", bob["id"]);
    let expired = format!("hold-{}-expired", alice["id"]);
    let mut expected = vec![(expired, "PENDING".to_owned()), (offered, "PENDING".to_owned())];
    expected.sort();
    assert_eq!(outbox(&app).await, expected);

    // Sweeping again changes nothing and enqueues nothing.
    assert_eq!(sweep(&app, "s2").await["scannedResources"], 0);
    app.clock.advance(Duration::seconds(1));
    assert_eq!(sweep(&app, "s3").await["expiredHolds"], 0);
    assert_eq!(outbox(&app).await, expected);
    // The admin route replays its stored summary for the same key.
    let replay = app
        .request(reqwest::Method::POST, "/api/admin/sweep", ADMIN, Some("ops"))
        .header("Idempotency-Key", "s1")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(replay.headers()["Idempotency-Replayed"], "true");
    assert_eq!(replay.json::<Value>().await.unwrap(), summary);
    app.assert_consistent().await;
}

#[tokio::test]
async fn an_expired_offer_goes_to_the_next_waiter_or_is_released() {
    let app = TestApp::spawn().await;
    let (_, alice) = post(&app, "/api/resources/1/holds", TENANT_ONE, "alice", "a", json!({})).await;
    let (_, bob) = post(&app, "/api/resources/1/waitlist", TENANT_ONE, "bob", "b", json!({})).await;
    let (_, carol) = post(&app, "/api/resources/1/waitlist", TENANT_ONE, "carol", "c", json!({})).await;
    post(&app, &format!("/api/holds/{}/cancel", alice["id"]), TENANT_ONE, "alice", "a2", json!({})).await;
    let bob_offer = get(&app, &format!("/api/waitlist/{}", bob["id"]), "bob").await["offerId"].clone();

    // Bob lets his offer lapse: Carol is offered, the unit never leaves.
    app.clock.advance(Duration::seconds(21));
    let s = sweep(&app, "s1").await;
    assert_eq!(
        s,
        json!({"scannedResources": 1, "expiredHolds": 0, "expiredOffers": 1, "expiredEntries": 0, "promotedEntries": 1, "releasedUnits": 0})
    );
    assert_eq!(get(&app, &format!("/api/offers/{bob_offer}"), "bob").await["state"], "EXPIRED");
    assert_eq!(get(&app, &format!("/api/waitlist/{}", bob["id"]), "bob").await["state"], "EXPIRED");
    assert_eq!(get(&app, &format!("/api/waitlist/{}", carol["id"]), "carol").await["state"], "OFFERED");
    assert_eq!(demo(&app).await["revision"], 1);

    // Carol lets hers lapse too, and nobody is left: the unit is released.
    app.clock.advance(Duration::seconds(21));
    let s = sweep(&app, "s2").await;
    assert_eq!(
        s,
        json!({"scannedResources": 1, "expiredHolds": 0, "expiredOffers": 1, "expiredEntries": 0, "promotedEntries": 0, "releasedUnits": 1})
    );
    assert_eq!(get(&app, &format!("/api/waitlist/{}", carol["id"]), "carol").await["state"], "EXPIRED");
    let d = demo(&app).await;
    assert_eq!((d["occupiedCount"].as_i64(), d["revision"].as_i64()), (Some(0), Some(2)));
    assert_eq!(app.count("SELECT count(*) FROM notification_outbox WHERE kind = 'offer.expired'").await, 2);
    app.assert_consistent().await;
}

/// Creates `n` resources of capacity 2, each with two holds that expire in
/// order (one second apart per resource), and a waiter on every
/// `waiter_every`th one (the others are the backlog drain's).
async fn due_backlog(app: &TestApp, n: usize, waiter_every: usize) -> Vec<i64> {
    let mut ids = Vec::new();
    for i in 0..n {
        let (_, r) = post(
            app,
            "/api/resources",
            ADMIN,
            "ops",
            &format!("r{i}"),
            json!({"code": format!("res-{i:03}"), "name": "r", "capacity": 2}),
        )
        .await;
        let id = r["id"].as_i64().unwrap();
        for h in 0..2 {
            post(
                app,
                &format!("/api/resources/{id}/holds"),
                TENANT_ONE,
                &format!("o{i}"),
                &format!("h{i}-{h}"),
                json!({}),
            )
            .await;
        }
        if i % waiter_every == 0 {
            post(
                app,
                &format!("/api/resources/{id}/waitlist"),
                TENANT_ONE,
                &format!("w{i}"),
                &format!("w{i}"),
                json!({}),
            )
            .await;
        }
        ids.push(id);
        app.clock.advance(Duration::seconds(1));
    }
    app.clock.advance(Duration::seconds(31));
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_sweepers_on_two_pools_never_sweep_the_same_tick_and_lose_nothing() {
    let app = TestApp::spawn().await;
    due_backlog(&app, 40, 2).await;
    let url = app.database_url();
    let clock: Arc<dyn yeyak::clock::Clock> = Arc::new(app.clock.clone());
    let make = || {
        let pool = yeyak::db::build_pool(&url, 4, false, Arc::default());
        Arc::new(Sweeper::new(pool, Arc::default(), clock.clone(), &url, Duration::seconds(20)))
    };
    let sweepers = [make(), make()];

    let mut expired = 0;
    let mut leaders = Vec::new();
    for _round in 0..4 {
        let barrier = Arc::new(Barrier::new(2));
        let ticks: Vec<_> = sweepers
            .iter()
            .map(|s| {
                let (s, barrier) = (s.clone(), barrier.clone());
                tokio::spawn(async move {
                    barrier.wait().await;
                    s.tick().await.unwrap()
                })
            })
            .collect();
        let mut elected = 0;
        for (i, t) in ticks.into_iter().enumerate() {
            match t.await.unwrap() {
                TickOutcome::Elected(s) => {
                    elected += 1;
                    leaders.push(i);
                    expired += s.expired_holds;
                }
                TickOutcome::NotLeader => {}
                TickOutcome::LocalBusy => panic!("no overlap within one sweeper"),
            }
        }
        assert_eq!(elected, 1, "exactly one sweeper works per tick");
    }
    assert!(leaders.windows(2).all(|w| w[0] == w[1]), "the leader keeps the gate: {leaders:?}");
    assert_eq!(expired, 80, "every due hold expired exactly once");
    assert_eq!(app.count("SELECT count(*) FROM capacity_hold WHERE state = 'HELD'").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM notification_outbox WHERE kind = 'hold.expired'").await, 80);
    app.assert_consistent().await;

    // The leader dies (its gate session is killed): the other takes over.
    let leader = leaders[0];
    app.db()
        .await
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted
              AND ((classid::bigint << 32) | objid::bigint) = $1",
            &[&yeyak::sweeper::LEADER_LOCK],
        )
        .await
        .unwrap();
    let mut took_over = false;
    for _ in 0..50 {
        if let TickOutcome::Elected(_) = sweepers[1 - leader].tick().await.unwrap() {
            took_over = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(took_over, "the other sweeper leads once the leader's session is gone");
    // The old leader notices its broken session and does not sweep.
    assert!(!matches!(sweepers[leader].tick().await, Ok(TickOutcome::Elected(_))));

    // Holds that fall due after the kill are expired by the new leader, each once.
    for i in 0..5 {
        let body = json!({"code": format!("late-{i}"), "name": "r", "capacity": 1});
        let (_, r) = post(&app, "/api/resources", ADMIN, "ops", &format!("late{i}"), body).await;
        post(&app, &format!("/api/resources/{}/holds", r["id"]), TENANT_ONE, "late", &format!("lh{i}"), json!({}))
            .await;
    }
    app.clock.advance(Duration::seconds(31));
    for _ in 0..3 {
        for s in &sweepers {
            let _ = s.tick().await;
        }
    }
    assert_eq!(app.count("SELECT count(*) FROM capacity_hold WHERE state = 'HELD'").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM notification_outbox WHERE kind = 'hold.expired'").await, 85);
    app.assert_consistent().await;
}

#[tokio::test]
async fn one_tick_takes_32_resources_oldest_first_and_the_next_the_rest() {
    let app = TestApp::spawn().await;
    // Someone waits on each: all take the per-resource hand-off path.
    let ids = due_backlog(&app, 33, 1).await;
    let sweeper = &app.state.sweeper;
    let TickOutcome::Elected(first) = sweeper.tick().await.unwrap() else { panic!("leads") };
    assert_eq!(first.scanned_resources, 32);
    assert_eq!(first.expired_holds, 64);
    // The newest one is what is left.
    let left = app.count("SELECT min(resource_id) FROM capacity_hold WHERE state = 'HELD'").await;
    assert_eq!(left, *ids.last().unwrap());
    let TickOutcome::Elected(second) = sweeper.tick().await.unwrap() else { panic!("leads") };
    assert_eq!((second.scanned_resources, second.expired_holds), (1, 2));
    app.assert_consistent().await;
}

#[tokio::test]
async fn an_overlapping_tick_in_the_same_process_is_skipped() {
    let app = TestApp::spawn().await;
    let sweeper = &app.state.sweeper;
    let slot = sweeper.hold_slot().await;
    assert_eq!(sweeper.tick().await.unwrap(), TickOutcome::LocalBusy);
    drop(slot);
    assert!(matches!(sweeper.tick().await.unwrap(), TickOutcome::Elected(_)));
}

#[tokio::test]
async fn overdue_items_show_on_the_consistency_check_until_swept() {
    let app = TestApp::spawn().await;
    post(&app, "/api/resources/1/holds", TENANT_ONE, "alice", "a", json!({})).await;
    app.clock.advance(Duration::seconds(30 + 5));
    let (ok, report) = app.consistency().await;
    assert!(!ok);
    let overdue = report["checks"].as_array().unwrap().iter().find(|c| c["name"] == "overdue_holds").unwrap();
    assert_eq!(overdue["count"], 1);
    sweep(&app, "s").await;
    app.assert_consistent().await;
}
