//! The sweeper's expiry backlog path (SPEC §11 "the building's clock"):
//! quiet resources' due holds drained by set-based batches end exactly as the
//! per-resource path leaves them; resources with waiters keep the FIFO
//! hand-off; several drainers at once expire each hold once.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use tokio::sync::Barrier;
use yeyak::capacity::expiry as store;
use yeyak::clock::Clock;
use yeyak::sweeper::{SweepSummary, Sweeper};

use crate::helpers::*;

/// 2,000 expired holds: 1,500 on resources nobody waits for (or closed
/// ones, whose waiters keep their place), 500 on resources with a FIFO line,
/// with a not-yet-due hold, confirmed holds and a lapsed offer among them.
/// Every id follows from insertion order, so two fresh databases get the
/// same rows.
fn fixture(t: DateTime<Utc>) -> String {
    let t = t.to_rfc3339();
    format!(
        "BEGIN;
-- Quiet: 500 x (2 due + 1 confirmed), 90 x (5 due, 8 units, + 1 not due), 10 closed x 5 due with a waiter.
INSERT INTO capacity_resource (code, name, capacity, occupied_count, revision, state, last_sequence, waiting_count)
SELECT 'q1-' || g, 'quiet', 3, 3, 3, 'OPEN', 0, 0 FROM generate_series(1, 500) g ORDER BY g;
INSERT INTO capacity_resource (code, name, capacity, occupied_count, revision, state, last_sequence, waiting_count)
SELECT 'q2-' || g, 'quiet', 10, 9, 6, 'OPEN', 0, 0 FROM generate_series(1, 90) g ORDER BY g;
INSERT INTO capacity_resource (code, name, capacity, occupied_count, revision, state, last_sequence, waiting_count)
SELECT 'q3-' || g, 'closed', 5, 5, 6, 'CLOSED', 1, 1 FROM generate_series(1, 10) g ORDER BY g;
-- Lines: 60 x 5 due, waiters [1,2,1] (all fit); 30 x 5 due, waiters [2,4,1] (the 4 stops the line);
-- 10 x (4 due + a lapsed offer), waiters [1,3]; 10 x capacity 1, 1 due, one waiter.
INSERT INTO capacity_resource (code, name, capacity, occupied_count, revision, state, last_sequence, waiting_count)
SELECT 'w1-' || g, 'line', 5, 5, 5, 'OPEN', 3, 3 FROM generate_series(1, 60) g ORDER BY g;
INSERT INTO capacity_resource (code, name, capacity, occupied_count, revision, state, last_sequence, waiting_count)
SELECT 'w2-' || g, 'line', 5, 5, 5, 'OPEN', 3, 3 FROM generate_series(1, 30) g ORDER BY g;
INSERT INTO capacity_resource (code, name, capacity, occupied_count, revision, state, last_sequence, waiting_count)
SELECT 'w3-' || g, 'line', 5, 5, 4, 'OPEN', 3, 2 FROM generate_series(1, 10) g ORDER BY g;
INSERT INTO capacity_resource (code, name, capacity, occupied_count, revision, state, last_sequence, waiting_count)
SELECT 'w4-' || g, 'line', 1, 1, 1, 'OPEN', 1, 1 FROM generate_series(1, 10) g ORDER BY g;

-- Due holds, expiring one after another (oldest first is a stable order).
INSERT INTO capacity_hold (resource_id, owner_digest, state, quantity, policy_version, expires_at, created_at, updated_at)
SELECT r.id, 'owner-' || r.id || '-' || h, 'HELD',
       CASE WHEN r.code LIKE 'q2-%' THEN 1 + h % 2 ELSE 1 END, 1,
       '{t}'::timestamptz - interval '1 hour' + (r.id * 10 + h) * interval '1 ms',
       '{t}'::timestamptz - interval '2 hours', '{t}'::timestamptz - interval '2 hours'
  FROM capacity_resource r
  CROSS JOIN generate_series(1, 5) h
 WHERE (r.code LIKE 'q1-%' AND h <= 2) OR r.code LIKE 'q2-%' OR r.code LIKE 'q3-%' OR r.code LIKE 'w1-%'
    OR r.code LIKE 'w2-%' OR (r.code LIKE 'w3-%' AND h <= 4) OR (r.code LIKE 'w4-%' AND h = 1)
 ORDER BY r.id, h;
-- Holds that must stay: confirmed ones, and one not due yet.
INSERT INTO capacity_hold (resource_id, owner_digest, state, quantity, policy_version, expires_at, created_at, updated_at)
SELECT r.id, 'keeper-' || r.id, CASE WHEN r.code LIKE 'q1-%' THEN 'CONFIRMED' ELSE 'HELD' END, 1, 1,
       '{t}'::timestamptz + interval '1 minute', '{t}'::timestamptz - interval '2 hours', '{t}'::timestamptz - interval '2 hours'
  FROM capacity_resource r WHERE r.code LIKE 'q1-%' OR r.code LIKE 'q2-%' ORDER BY r.id;

-- Waiters in FIFO order.
INSERT INTO waitlist_entry (resource_id, owner_digest, sequence, state, quantity, policy_version, created_at, updated_at)
SELECT r.id, 'waiter-' || r.id || '-' || s, s,
       CASE WHEN r.code LIKE 'w3-%' AND s = 1 THEN 'OFFERED' ELSE 'WAITING' END,
       CASE WHEN r.code LIKE 'w1-%' THEN (ARRAY[1, 2, 1])[s]
            WHEN r.code LIKE 'w2-%' THEN (ARRAY[2, 4, 1])[s]
            WHEN r.code LIKE 'w3-%' THEN (ARRAY[1, 1, 3])[s]
            ELSE 1 END, 1,
       '{t}'::timestamptz - interval '90 minutes', '{t}'::timestamptz - interval '90 minutes'
  FROM capacity_resource r CROSS JOIN generate_series(1, 3) s
 WHERE s <= r.last_sequence AND r.code NOT LIKE 'q1-%' AND r.code NOT LIKE 'q2-%'
 ORDER BY r.id, s;
-- The lapsed offers (to the head of each w3 line).
INSERT INTO capacity_offer (resource_id, entry_id, owner_digest, state, quantity, expires_at, created_at, updated_at)
SELECT e.resource_id, e.id, e.owner_digest, 'ACTIVE', e.quantity,
       '{t}'::timestamptz - interval '30 minutes', '{t}'::timestamptz - interval '40 minutes', '{t}'::timestamptz - interval '40 minutes'
  FROM waitlist_entry e WHERE e.state = 'OFFERED' ORDER BY e.id;
COMMIT;"
    )
}

/// Every row the sweep can touch, without what depends on the order the
/// per-resource path happened to settle resources in (the ids of new offers).
async fn snapshot(app: &TestApp) -> Vec<String> {
    let db = app.db().await;
    let mut out = Vec::new();
    for sql in [
        "SELECT ROW(id, code, occupied_count, waiting_count, revision, last_sequence, state, updated_at)::text
           FROM capacity_resource ORDER BY id",
        "SELECT ROW(id, resource_id, owner_digest, state, quantity, revision, expires_at, updated_at)::text
           FROM capacity_hold ORDER BY id",
        "SELECT ROW(id, resource_id, sequence, state, quantity, revision, updated_at)::text
           FROM waitlist_entry ORDER BY id",
        "SELECT ROW(entry_id, resource_id, owner_digest, state, quantity, revision, expires_at, hold_id, updated_at)::text
           FROM capacity_offer ORDER BY entry_id",
        "SELECT ROW(delivery_id, channel, kind, payload - 'offerId', status, next_attempt_at, created_at)::text
           FROM notification_outbox ORDER BY delivery_id, channel",
    ] {
        out.extend(db.query(sql, &[]).await.unwrap().iter().map(|r| r.get::<_, String>(0)));
    }
    out
}

/// An app with the fixture loaded and its clock at the fixture's instant.
async fn loaded(t: DateTime<Utc>) -> TestApp {
    let app = TestApp::spawn().await;
    app.clock.set(t);
    app.db().await.batch_execute(&fixture(t)).await.unwrap();
    app
}

/// Sweeps until a sweep finds nothing; returns the totals.
async fn sweep_until_done(sweeper: &Sweeper) -> (SweepSummary, usize) {
    let mut total = SweepSummary::default();
    for sweeps in 1..=200 {
        let one = sweeper.sweep_now(yeyak::sweeper::MAX_RESOURCES).await.unwrap();
        if one.scanned_resources == 0 {
            return (total, sweeps - 1);
        }
        total.add(&one);
    }
    panic!("the sweep never settled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_backlog_drain_ends_as_the_per_resource_path_does() {
    let t = test_now();
    let old = loaded(t).await;
    // Sanity: the fixture itself is consistent apart from being overdue.
    let (_, report) = old.consistency().await;
    let broken: Vec<_> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["count"] != 0 && !c["name"].as_str().unwrap().starts_with("overdue_"))
        .collect();
    assert!(broken.is_empty(), "{broken:#?}");
    assert_eq!(old.count("SELECT count(*) FROM capacity_hold WHERE state = 'HELD' AND expires_at <= now() + interval '1 day' AND owner_digest LIKE 'owner-%'").await, 2000);

    old.state.sweeper.set_backlog_drain(false);
    let (by_resource, old_sweeps) = sweep_until_done(&old.state.sweeper).await;
    let new = loaded(t).await;
    let (drained, new_sweeps) = sweep_until_done(&new.state.sweeper).await;

    // The per-resource path needs a sweep per 32 resources; the drain takes
    // every quiet resource in the first and leaves the cap to the lines.
    assert_eq!(old_sweeps, 23, "{by_resource:?}");
    assert_eq!(new_sweeps, 4, "{drained:?}");
    for s in [&by_resource, &drained] {
        assert_eq!((s.expired_holds, s.expired_offers), (2000, 10));
        assert_eq!(s.promoted_entries, 60 * 3 + 30 + 10 * 2 + 10);
        assert_eq!(s.released_units, 500 * 2 + 90 * 8 + 10 * 5 + 60 + 30 * 3 + 10);
    }
    assert_eq!(by_resource.scanned_resources, drained.scanned_resources);

    let (a, b) = (snapshot(&old).await, snapshot(&new).await);
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y);
    }
    assert_eq!(new.count("SELECT count(*) FROM notification_outbox WHERE kind = 'hold.expired'").await, 2000);
    assert_eq!(new.count("SELECT count(*) FROM notification_outbox WHERE kind = 'offer.created'").await, 240);
    assert_eq!(new.count("SELECT count(*) FROM capacity_hold WHERE state = 'HELD'").await, 90);
    old.assert_consistent().await;
    new.assert_consistent().await;
}

#[tokio::test]
async fn the_cap_bounds_only_the_hand_off_path() {
    let t = test_now();
    let app = loaded(t).await;
    let first = app.state.sweeper.sweep_now(5).await.unwrap();
    // 5 lines settled one by one; all 600 quiet resources drained in batches.
    let quiet_holds = 500 * 2 + 90 * 5 + 10 * 5;
    assert_eq!(first.scanned_resources, 5 + 600);
    assert_eq!(first.expired_holds, 5 * 5 + quiet_holds);
    assert_eq!(app.count("SELECT count(*) FROM capacity_hold WHERE state = 'HELD' AND expires_at < now() + interval '1 day' AND owner_digest LIKE 'owner-%'").await, 2000 - 25 - quiet_holds);
    // The admin route keeps its 1-32 bound, which is the lines' bound.
    let (status, _) = post(&app, "/api/admin/sweep", ADMIN, "ops", "s", json!({"maxResources": 33})).await;
    assert_eq!(status, reqwest::StatusCode::BAD_REQUEST);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_sweepers_draining_at_once_expire_each_hold_once() {
    let t = test_now();
    let app = loaded(t).await;
    let url = app.database_url();
    let clock: Arc<dyn yeyak::clock::Clock> = Arc::new(app.clock.clone());
    let make = || {
        let pool = yeyak::db::build_pool(&url, 8, false, Arc::default());
        Arc::new(Sweeper::new(pool, Arc::default(), clock.clone(), &url, Duration::seconds(20)))
    };
    let sweepers = [make(), make()];
    // The on-demand sweep skips the leader gate: both really work at once.
    let mut total = SweepSummary::default();
    for _round in 0..10 {
        let barrier = Arc::new(Barrier::new(2));
        let runs: Vec<_> = sweepers
            .iter()
            .map(|s| {
                let (s, barrier) = (s.clone(), barrier.clone());
                tokio::spawn(async move {
                    barrier.wait().await;
                    s.sweep_now(32).await.unwrap()
                })
            })
            .collect();
        for r in runs {
            total.add(&r.await.unwrap());
        }
    }
    assert_eq!(total.expired_holds, 2000, "{total:?}");
    assert_eq!(total.expired_offers, 10);
    assert_eq!(app.count("SELECT count(*) FROM notification_outbox WHERE kind = 'hold.expired'").await, 2000);
    assert_eq!(app.count("SELECT count(*) FROM notification_outbox WHERE kind = 'offer.created'").await, 240);
    assert_eq!(app.count("SELECT count(*) FROM capacity_hold WHERE state = 'EXPIRED'").await, 2000);
    app.assert_consistent().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_connections_draining_small_batches_expire_each_hold_once() {
    let t = test_now();
    let app = loaded(t).await;
    let url = app.database_url();
    let barrier = Arc::new(Barrier::new(4));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (url, barrier) = (url.clone(), barrier.clone());
            tokio::spawn(async move {
                let mut conn = yeyak::db::establish(&url).await.unwrap();
                barrier.wait().await;
                let (mut expired, mut released) = (0, 0);
                loop {
                    let batch = store::drain_unwaited(&mut conn, t, 37).await.unwrap();
                    assert_eq!(batch.notified, batch.expired_holds, "one notification per expired hold");
                    expired += batch.expired_holds;
                    released += batch.released_units;
                    if batch.candidates == 0 {
                        return (expired, released);
                    }
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    let (mut expired, mut released) = (0, 0);
    for w in workers {
        let (e, r) = w.await.unwrap();
        expired += e;
        released += r;
    }
    assert_eq!((expired, released), (1500, 500 * 2 + 90 * 8 + 10 * 5));
    assert_eq!(app.count("SELECT count(*) FROM notification_outbox WHERE kind = 'hold.expired'").await, 1500);
    // The lines are untouched: they are the hand-off path's.
    assert_eq!(app.count("SELECT count(*) FROM capacity_hold WHERE state = 'HELD' AND expires_at <= now() + interval '1 day' AND owner_digest LIKE 'owner-%'").await, 500);
    app.state.sweeper.sweep_now(32).await.unwrap();
    let (_, report) = app.consistency().await;
    let broken: Vec<_> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["count"] != 0 && !c["name"].as_str().unwrap().starts_with("overdue_"))
        .collect();
    assert!(broken.is_empty(), "{broken:#?}");
}

#[tokio::test]
async fn a_waiter_joining_during_the_drain_is_offered_the_units_not_skipped() {
    let app = TestApp::spawn().await;
    let (_, alice) = post(&app, "/api/resources/1/holds", TENANT_ONE, "alice", "a", json!({})).await;
    app.clock.advance(Duration::seconds(31));
    let now = app.clock.now();
    // Bob's join is in flight: it holds the resource row (what the join's
    // conditional UPDATE does) and has not committed yet.
    let mut joiner = app.db().await;
    let join = joiner.transaction().await.unwrap();
    join.batch_execute(
        "UPDATE capacity_resource SET last_sequence = last_sequence + 1, waiting_count = waiting_count + 1 WHERE id = 1;
         INSERT INTO waitlist_entry (resource_id, owner_digest, sequence, state, quantity, policy_version, created_at, updated_at)
         VALUES (1, 'bob', 1, 'WAITING', 1, 1, now(), now());",
    )
    .await
    .unwrap();
    let mut conn = yeyak::db::establish(&app.database_url()).await.unwrap();
    let skipped = store::drain_unwaited(&mut conn, now, 100).await.unwrap();
    assert_eq!((skipped.candidates, skipped.expired_holds), (1, 0), "the locked resource is skipped, not waited for");
    join.commit().await.unwrap();
    // Now someone waits: the drain leaves the resource to the hand-off.
    let after = store::drain_unwaited(&mut conn, now, 100).await.unwrap();
    assert_eq!((after.candidates, after.expired_holds), (0, 0));
    let s = app.state.sweeper.sweep_now(32).await.unwrap();
    assert_eq!((s.expired_holds, s.promoted_entries, s.released_units), (1, 1, 0));
    assert_eq!(
        app.count("SELECT count(*) FROM waitlist_entry WHERE owner_digest = 'bob' AND state = 'OFFERED'").await,
        1
    );
    assert_eq!(
        app.count(&format!("SELECT count(*) FROM capacity_hold WHERE id = {} AND state = 'EXPIRED'", alice["id"]))
            .await,
        1
    );
    app.assert_consistent().await;
}
