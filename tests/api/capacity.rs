//! Capacity control plane over HTTP (seed 000's scenarios, seed 001's quantities).

use std::sync::Arc;

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::sync::Barrier;

use crate::helpers::*;

/// The seeded capacity-1 resource `demo-room-utc`.
const DEMO: i64 = 1;

struct Answer {
    status: StatusCode,
    body: Value,
    replayed: Option<String>,
}

async fn post(app: &TestApp, path: &str, key: &str, owner: &str, idem: &str, body: Value) -> Answer {
    let res = app
        .request(reqwest::Method::POST, path, key, Some(owner))
        .header("Idempotency-Key", idem)
        .json(&body)
        .send()
        .await
        .expect("sent");
    let replayed = res.headers().get("Idempotency-Replayed").map(|v| v.to_str().unwrap().to_owned());
    let (status, body) = crate::helpers::body(res).await;
    Answer { status, body, replayed }
}

async fn get(app: &TestApp, path: &str, key: &str, owner: &str) -> (StatusCode, Value) {
    crate::helpers::body(app.request(reqwest::Method::GET, path, key, Some(owner)).send().await.unwrap()).await
}

async fn resource(app: &TestApp, id: i64) -> Value {
    let (status, list) = app.get_json("/api/resources", TENANT_ONE).await;
    assert_eq!(status, StatusCode::OK);
    assert!(list["observedAt"].is_string());
    list["resources"].as_array().unwrap().iter().find(|r| r["id"] == id).cloned().expect("resource listed")
}

async fn hold(app: &TestApp, resource_id: i64, owner: &str, idem: &str, body: Value) -> Answer {
    post(app, &format!("/api/resources/{resource_id}/holds"), TENANT_ONE, owner, idem, body).await
}

async fn new_resource(app: &TestApp, code: &str, capacity: i64) -> i64 {
    let a = post(
        app,
        "/api/resources",
        ADMIN,
        "ops",
        &format!("create-{code}"),
        json!({"code": code, "name": code, "capacity": capacity}),
    )
    .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    a.body["id"].as_i64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_concurrent_holds_on_the_last_unit_give_exactly_one() {
    let app = Arc::new(TestApp::spawn().await);
    let demo = resource(&app, DEMO).await;
    assert_eq!(
        (demo["code"].as_str(), demo["capacity"].as_i64(), demo["revision"].as_i64()),
        (Some("demo-room-utc"), Some(1), Some(0))
    );
    assert_eq!((demo["policyVersion"].as_i64(), demo["timezone"].as_str()), (Some(1), Some("UTC")));

    let barrier = Arc::new(Barrier::new(10));
    let tasks: Vec<_> = (0..10)
        .map(|i| {
            let (app, barrier) = (app.clone(), barrier.clone());
            tokio::spawn(async move {
                let req = app
                    .request(reqwest::Method::POST, "/api/resources/1/holds", TENANT_ONE, Some(&format!("owner-{i}")))
                    .header("Idempotency-Key", format!("hold-{i}"))
                    .json(&json!({"expectedResourceRevision": 0}));
                barrier.wait().await;
                crate::helpers::body(req.send().await.unwrap()).await
            })
        })
        .collect();
    let mut created = 0;
    for t in tasks {
        let (status, body) = t.await.unwrap();
        if status == StatusCode::CREATED {
            created += 1;
            assert_eq!(
                (body["state"].as_str(), body["quantity"].as_i64(), body["revision"].as_i64()),
                (Some("HELD"), Some(1), Some(0))
            );
        } else {
            assert_eq!(status, StatusCode::CONFLICT, "{body}");
            assert_eq!(body["code"], "CAPACITY_EXHAUSTED_OR_STALE");
        }
    }
    assert_eq!(created, 1);
    let demo = resource(&app, DEMO).await;
    assert_eq!(
        (demo["occupiedCount"].as_i64(), demo["availableCount"].as_i64(), demo["revision"].as_i64()),
        (Some(1), Some(0), Some(1))
    );
    app.assert_consistent().await;
}

#[tokio::test]
async fn a_retried_hold_is_replayed_and_a_changed_one_conflicts() {
    let app = TestApp::spawn().await;
    let first = hold(&app, DEMO, "alice", "hold-42", json!({"expectedResourceRevision": 0})).await;
    assert_eq!((first.status, first.replayed.as_deref()), (StatusCode::CREATED, Some("false")));
    let retry = hold(&app, DEMO, "alice", "hold-42", json!({"expectedResourceRevision": 0})).await;
    assert_eq!((retry.status, retry.replayed.as_deref()), (StatusCode::CREATED, Some("true")));
    assert_eq!(retry.body, first.body);
    let conflict = hold(&app, DEMO, "alice", "hold-42", json!({"expectedResourceRevision": 1})).await;
    assert_eq!(conflict.status, StatusCode::CONFLICT);
    assert_eq!(conflict.body["code"], "IDEMPOTENCY_FINGERPRINT_CONFLICT");
    assert_eq!(resource(&app, DEMO).await["occupiedCount"], 1);
    assert_eq!(app.count("SELECT count(*) FROM capacity_hold").await, 1);
}

#[tokio::test]
async fn alice_cancels_while_bob_waits_and_the_unit_changes_owner() {
    let app = TestApp::spawn().await;
    let alice = hold(&app, DEMO, "alice", "a1", json!({})).await;
    assert_eq!(alice.status, StatusCode::CREATED);
    let alice_id = alice.body["id"].as_i64().unwrap();

    let bob = post(&app, "/api/resources/1/waitlist", TENANT_ONE, "bob", "b1", json!({})).await;
    assert_eq!(bob.status, StatusCode::CREATED, "{}", bob.body);
    assert_eq!(
        (bob.body["state"].as_str(), bob.body["position"].as_i64(), bob.body["sequence"].as_i64()),
        (Some("WAITING"), Some(1), Some(1))
    );
    let bob_entry = bob.body["id"].as_i64().unwrap();

    let cancel = post(&app, &format!("/api/holds/{alice_id}/cancel"), TENANT_ONE, "alice", "a2", json!({})).await;
    assert_eq!(cancel.status, StatusCode::OK, "{}", cancel.body);
    assert_eq!(cancel.body["state"], "CANCELLED");

    let (status, entry) = get(&app, &format!("/api/waitlist/{bob_entry}"), TENANT_ONE, "bob").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(entry["state"], "OFFERED");
    assert!(entry["offerId"].is_i64(), "{entry}");
    assert_eq!(entry["offerRevision"], 0);
    assert!(entry["offerExpiresAt"].is_string());
    let demo = resource(&app, DEMO).await;
    assert_eq!((demo["occupiedCount"].as_i64(), demo["revision"].as_i64()), (Some(1), Some(1)));
    app.assert_consistent().await;

    // Only Bob can take Bob's offer; trying changes nothing.
    let offer_id = entry["offerId"].as_i64().unwrap();
    for (key, owner) in [(TENANT_ONE, "mallory"), (TENANT_TWO, "bob")] {
        let stolen = post(&app, &format!("/api/offers/{offer_id}/accept"), key, owner, "steal", json!({})).await;
        assert_eq!(stolen.status, StatusCode::FORBIDDEN, "{}", stolen.body);
        assert_eq!(stolen.body["code"], "OWNER_MISMATCH");
        let (status, _) = get(&app, &format!("/api/offers/{offer_id}"), key, owner).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
    let (_, offer) = get(&app, &format!("/api/offers/{offer_id}"), TENANT_ONE, "bob").await;
    assert_eq!(
        (offer["state"].as_str(), offer["revision"].as_i64(), offer["entryId"].as_i64()),
        (Some("ACTIVE"), Some(0), Some(bob_entry))
    );

    let accepted =
        post(&app, &format!("/api/offers/{offer_id}/accept"), TENANT_ONE, "bob", "b2", json!({"expectedRevision": 0}))
            .await;
    assert_eq!(accepted.status, StatusCode::OK, "{}", accepted.body);
    assert_eq!((accepted.body["state"].as_str(), accepted.body["revision"].as_i64()), (Some("ACCEPTED"), Some(1)));
    let hold_id = accepted.body["holdId"].as_i64().unwrap();
    let (status, bob_hold) = get(&app, &format!("/api/holds/{hold_id}"), TENANT_ONE, "bob").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!((bob_hold["state"].as_str(), bob_hold["quantity"].as_i64()), (Some("CONFIRMED"), Some(1)));
    let (_, entry) = get(&app, &format!("/api/waitlist/{bob_entry}"), TENANT_ONE, "bob").await;
    assert_eq!(entry["state"], "ACCEPTED");
    let demo = resource(&app, DEMO).await;
    assert_eq!(
        (demo["occupiedCount"].as_i64(), demo["revision"].as_i64()),
        (Some(1), Some(1)),
        "accepting never re-takes the unit"
    );
    app.assert_consistent().await;
}

#[tokio::test]
async fn cancel_with_nobody_waiting_releases_the_unit() {
    let app = TestApp::spawn().await;
    let alice = hold(&app, DEMO, "alice", "a1", json!({})).await;
    let id = alice.body["id"].as_i64().unwrap();
    let cancel =
        post(&app, &format!("/api/holds/{id}/cancel"), TENANT_ONE, "alice", "a2", json!({"expectedRevision": 0})).await;
    assert_eq!(cancel.status, StatusCode::OK);
    assert_eq!(cancel.body["revision"], 1);
    let demo = resource(&app, DEMO).await;
    assert_eq!((demo["availableCount"].as_i64(), demo["revision"].as_i64()), (Some(1), Some(2)));
    // A waitlist join is refused while units are free.
    let join = post(&app, "/api/resources/1/waitlist", TENANT_ONE, "bob", "b1", json!({})).await;
    assert_eq!((join.status, join.body["code"].as_str()), (StatusCode::CONFLICT, Some("CAPACITY_AVAILABLE")));
    app.assert_consistent().await;
}

#[tokio::test]
async fn an_expired_offer_cannot_be_accepted() {
    let app = TestApp::spawn().await;
    let alice = hold(&app, DEMO, "alice", "a1", json!({})).await;
    let bob = post(&app, "/api/resources/1/waitlist", TENANT_ONE, "bob", "b1", json!({})).await;
    post(&app, &format!("/api/holds/{}/cancel", alice.body["id"]), TENANT_ONE, "alice", "a2", json!({})).await;
    let (_, entry) = get(&app, &format!("/api/waitlist/{}", bob.body["id"]), TENANT_ONE, "bob").await;
    let offer_id = entry["offerId"].as_i64().unwrap();

    app.clock.advance(Duration::seconds(21));
    let late = post(&app, &format!("/api/offers/{offer_id}/accept"), TENANT_ONE, "bob", "b2", json!({})).await;
    assert_eq!(late.status, StatusCode::GONE, "{}", late.body);
    assert_eq!(late.body["code"], "OFFER_EXPIRED");
    let (_, offer) = get(&app, &format!("/api/offers/{offer_id}"), TENANT_ONE, "bob").await;
    assert_eq!(offer["state"], "ACTIVE", "the refusal changed nothing (expiry is the sweeper's)");
    assert_eq!(app.count("SELECT count(*) FROM capacity_hold WHERE state = 'CONFIRMED'").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_concurrent_holds_of_random_quantities_never_exceed_capacity() {
    // Every request must reach PostgreSQL here: let them queue at the bulkhead.
    let app = Arc::new(TestApp::spawn_with(|c| c.admission_wait_ms = 60_000).await);
    let id = new_resource(&app, "stock-50", 50).await;
    let barrier = Arc::new(Barrier::new(200));
    let tasks: Vec<_> = (0..200)
        .map(|i| {
            let (app, barrier) = (app.clone(), barrier.clone());
            let quantity = 1 + (i * 7919 % 3) as i64;
            tokio::spawn(async move {
                let req = app
                    .request(
                        reqwest::Method::POST,
                        &format!("/api/resources/{id}/holds"),
                        TENANT_ONE,
                        Some(&format!("buyer-{i}")),
                    )
                    .header("Idempotency-Key", format!("buy-{i}"))
                    .json(&json!({"quantity": quantity}));
                barrier.wait().await;
                let (status, body) = crate::helpers::body(req.send().await.unwrap()).await;
                (status, body, quantity)
            })
        })
        .collect();
    let mut granted = 0;
    for t in tasks {
        let (status, body, quantity) = t.await.unwrap();
        match status {
            StatusCode::CREATED => {
                assert_eq!(body["quantity"], quantity);
                granted += quantity;
            }
            StatusCode::CONFLICT => {
                assert_eq!(body["code"], "CAPACITY_EXHAUSTED_OR_STALE", "{body}")
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    let r = resource(&app, id).await;
    assert!((48..=50).contains(&granted), "granted {granted}");
    assert_eq!(r["occupiedCount"], granted);
    assert_eq!(r["availableCount"], 50 - granted);
    app.assert_consistent().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_concurrent_confirm_and_cancel_of_one_hold_have_one_winner() {
    let app = Arc::new(TestApp::spawn().await);
    let id = new_resource(&app, "race", 100).await;
    for round in 0..20 {
        let h = hold(&app, id, "alice", &format!("h{round}"), json!({})).await;
        let hold_id = h.body["id"].as_i64().unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let tasks: Vec<_> = ["confirm", "cancel"]
            .into_iter()
            .map(|action| {
                let (app, barrier) = (app.clone(), barrier.clone());
                tokio::spawn(async move {
                    let req = app
                        .request(
                            reqwest::Method::POST,
                            &format!("/api/holds/{hold_id}/{action}"),
                            TENANT_ONE,
                            Some("alice"),
                        )
                        .header("Idempotency-Key", format!("{action}-{round}"))
                        .json(&json!({"expectedRevision": 0}));
                    barrier.wait().await;
                    crate::helpers::body(req.send().await.unwrap()).await
                })
            })
            .collect();
        let mut ok = 0;
        for t in tasks {
            let (status, body) = t.await.unwrap();
            if status == StatusCode::OK {
                ok += 1;
            } else {
                assert_eq!(status, StatusCode::CONFLICT, "{body}");
                assert!(body["code"] == "INVALID_STATE" || body["code"] == "STALE_REVISION", "{body}");
            }
        }
        assert_eq!(ok, 1, "round {round}");
    }
    app.assert_consistent().await;
}

#[tokio::test]
async fn a_stored_rejection_is_replayed_after_units_free_up_and_a_new_key_is_judged_afresh() {
    let app = TestApp::spawn().await;
    let alice = hold(&app, DEMO, "alice", "a1", json!({})).await;
    let refused = hold(&app, DEMO, "bob", "b1", json!({})).await;
    assert_eq!(
        (refused.status, refused.body["code"].as_str()),
        (StatusCode::CONFLICT, Some("CAPACITY_EXHAUSTED_OR_STALE"))
    );
    assert_eq!(refused.body["currentRevision"], 1);
    post(&app, &format!("/api/holds/{}/cancel", alice.body["id"]), TENANT_ONE, "alice", "a2", json!({})).await;
    assert_eq!(resource(&app, DEMO).await["availableCount"], 1);

    let replay = hold(&app, DEMO, "bob", "b1", json!({})).await;
    assert_eq!((replay.status, replay.replayed.as_deref()), (StatusCode::CONFLICT, Some("true")));
    assert_eq!(replay.body, refused.body);
    let fresh = hold(&app, DEMO, "bob", "b2", json!({})).await;
    assert_eq!(fresh.status, StatusCode::CREATED);
}

#[tokio::test]
async fn freed_units_go_to_waiters_in_order_and_nobody_passes_the_queue() {
    let app = TestApp::spawn().await;
    let id = new_resource(&app, "seats-3", 3).await;
    let a = hold(&app, id, "a", "a", json!({"quantity": 1})).await;
    let x = hold(&app, id, "x", "x", json!({"quantity": 2})).await;
    let b = post(&app, &format!("/api/resources/{id}/waitlist"), TENANT_ONE, "b", "b", json!({"quantity": 3})).await;
    let c = post(&app, &format!("/api/resources/{id}/waitlist"), TENANT_ONE, "c", "c", json!({"quantity": 1})).await;
    assert_eq!((b.status, c.status), (StatusCode::CREATED, StatusCode::CREATED));
    assert_eq!(c.body["position"], 2);

    // One unit frees: B (3) does not fit, and C (1) must not pass B.
    post(&app, &format!("/api/holds/{}/cancel", a.body["id"]), TENANT_ONE, "a", "a-x", json!({})).await;
    let (_, b_now) = get(&app, &format!("/api/waitlist/{}", b.body["id"]), TENANT_ONE, "b").await;
    let (_, c_now) = get(&app, &format!("/api/waitlist/{}", c.body["id"]), TENANT_ONE, "c").await;
    assert_eq!((b_now["state"].as_str(), c_now["state"].as_str()), (Some("WAITING"), Some("WAITING")));
    assert_eq!((b_now["position"].as_i64(), c_now["position"].as_i64()), (Some(1), Some(2)));
    let r = resource(&app, id).await;
    assert_eq!((r["occupiedCount"].as_i64(), r["revision"].as_i64()), (Some(2), Some(3)));
    // A newcomer cannot take the free unit ahead of the line either.
    let d = hold(&app, id, "d", "d", json!({"quantity": 1})).await;
    assert_eq!((d.status, d.body["code"].as_str()), (StatusCode::CONFLICT, Some("CAPACITY_EXHAUSTED_OR_STALE")));

    // Two more free: B gets all three; C still waits.
    post(&app, &format!("/api/holds/{}/cancel", x.body["id"]), TENANT_ONE, "x", "x-x", json!({})).await;
    let (_, b_now) = get(&app, &format!("/api/waitlist/{}", b.body["id"]), TENANT_ONE, "b").await;
    let (_, c_now) = get(&app, &format!("/api/waitlist/{}", c.body["id"]), TENANT_ONE, "c").await;
    assert_eq!(
        (b_now["state"].as_str(), c_now["state"].as_str(), c_now["position"].as_i64()),
        (Some("OFFERED"), Some("WAITING"), Some(1))
    );
    let r = resource(&app, id).await;
    assert_eq!((r["occupiedCount"].as_i64(), r["revision"].as_i64()), (Some(3), Some(4)));
    app.assert_consistent().await;

    // B declines: its three units go to C (1) and the other two are released.
    let offer = b_now["offerId"].as_i64().unwrap();
    let declined = post(&app, &format!("/api/offers/{offer}/decline"), TENANT_ONE, "b", "b-d", json!({})).await;
    assert_eq!((declined.status, declined.body["state"].as_str()), (StatusCode::OK, Some("DECLINED")));
    let (_, c_now) = get(&app, &format!("/api/waitlist/{}", c.body["id"]), TENANT_ONE, "c").await;
    assert_eq!(c_now["state"], "OFFERED");
    let r = resource(&app, id).await;
    assert_eq!(r["occupiedCount"], 1);
    app.assert_consistent().await;
}

#[tokio::test]
async fn leaving_the_line_lets_the_next_waiter_in() {
    let app = TestApp::spawn().await;
    let id = new_resource(&app, "seats-2", 2).await;
    hold(&app, id, "a", "a", json!({"quantity": 1})).await;
    let big =
        post(&app, &format!("/api/resources/{id}/waitlist"), TENANT_ONE, "big", "big", json!({"quantity": 2})).await;
    let small =
        post(&app, &format!("/api/resources/{id}/waitlist"), TENANT_ONE, "small", "small", json!({"quantity": 1}))
            .await;
    assert_eq!(small.status, StatusCode::CREATED, "waiting behind others even though one unit is free");

    let other =
        post(&app, &format!("/api/waitlist/{}/cancel", big.body["id"]), TENANT_ONE, "small", "steal", json!({})).await;
    assert_eq!(other.status, StatusCode::FORBIDDEN);
    let left = post(
        &app,
        &format!("/api/waitlist/{}/cancel", big.body["id"]),
        TENANT_ONE,
        "big",
        "leave",
        json!({"expectedRevision": 0}),
    )
    .await;
    assert_eq!((left.status, left.body["state"].as_str()), (StatusCode::OK, Some("CANCELLED")), "{}", left.body);
    assert!(left.body["position"].is_null());
    let (_, small_now) = get(&app, &format!("/api/waitlist/{}", small.body["id"]), TENANT_ONE, "small").await;
    assert_eq!(small_now["state"], "OFFERED");
    assert_eq!(resource(&app, id).await["occupiedCount"], 2);
    app.assert_consistent().await;
}

#[tokio::test]
async fn hold_transitions_check_owner_state_revision_policy_and_expiry() {
    let app = TestApp::spawn().await;
    let id = new_resource(&app, "rules", 10).await;
    let h = hold(&app, id, "alice", "h1", json!({"quantity": 2})).await;
    let hold_id = h.body["id"].as_i64().unwrap();
    let expires = chrono::DateTime::parse_from_rfc3339(h.body["expiresAt"].as_str().unwrap()).unwrap();

    let (status, _) = get(&app, &format!("/api/holds/{hold_id}"), TENANT_ONE, "bob").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = get(&app, "/api/holds/999999", TENANT_ONE, "alice").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let ext =
        post(&app, &format!("/api/holds/{hold_id}/extend"), TENANT_ONE, "alice", "e1", json!({"extendBySeconds": 60}))
            .await;
    assert_eq!(ext.status, StatusCode::OK, "{}", ext.body);
    let later = chrono::DateTime::parse_from_rfc3339(ext.body["expiresAt"].as_str().unwrap()).unwrap();
    assert_eq!(later - expires, Duration::seconds(60));
    assert_eq!(ext.body["revision"], 1);
    let bad =
        post(&app, &format!("/api/holds/{hold_id}/extend"), TENANT_ONE, "alice", "e2", json!({"extendBySeconds": 301}))
            .await;
    assert_eq!((bad.status, bad.body["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("extendBySeconds")));

    let stale =
        post(&app, &format!("/api/holds/{hold_id}/confirm"), TENANT_ONE, "alice", "c1", json!({"expectedRevision": 0}))
            .await;
    assert_eq!(
        (stale.status, stale.body["code"].as_str(), stale.body["currentRevision"].as_i64()),
        (StatusCode::CONFLICT, Some("STALE_REVISION"), Some(1))
    );
    let policy =
        post(&app, &format!("/api/holds/{hold_id}/confirm"), TENANT_ONE, "alice", "c2", json!({"policyVersion": 2}))
            .await;
    assert_eq!((policy.status, policy.body["code"].as_str()), (StatusCode::CONFLICT, Some("POLICY_VERSION_MISMATCH")));
    let wrong_owner = post(&app, &format!("/api/holds/{hold_id}/confirm"), TENANT_ONE, "bob", "c3", json!({})).await;
    assert_eq!(
        (wrong_owner.status, wrong_owner.body["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("OWNER_MISMATCH"))
    );

    // Past its (extended) expiry, a hold can be neither confirmed nor extended.
    app.clock.advance(Duration::seconds(91));
    let late = post(&app, &format!("/api/holds/{hold_id}/confirm"), TENANT_ONE, "alice", "c4", json!({})).await;
    assert_eq!((late.status, late.body["code"].as_str()), (StatusCode::GONE, Some("HOLD_EXPIRED")));

    // A fresh hold confirms, then may not be confirmed twice.
    let h2 = hold(&app, id, "alice", "h2", json!({})).await;
    let h2_id = h2.body["id"].as_i64().unwrap();
    let ok = post(
        &app,
        &format!("/api/holds/{h2_id}/confirm"),
        TENANT_ONE,
        "alice",
        "c5",
        json!({"expectedRevision": 0, "policyVersion": 1}),
    )
    .await;
    assert_eq!((ok.status, ok.body["state"].as_str()), (StatusCode::OK, Some("CONFIRMED")));
    let twice = post(&app, &format!("/api/holds/{h2_id}/confirm"), TENANT_ONE, "alice", "c6", json!({})).await;
    assert_eq!((twice.status, twice.body["details"]["state"].as_str()), (StatusCode::CONFLICT, Some("CONFIRMED")));
    // A confirmed hold can still be cancelled, which frees its unit.
    let cancel = post(&app, &format!("/api/holds/{h2_id}/cancel"), TENANT_ONE, "alice", "x", json!({})).await;
    assert_eq!(cancel.status, StatusCode::OK);
    assert_eq!(resource(&app, id).await["occupiedCount"], 2);

    // Holds naming another policy version, or on a closed resource, are refused.
    let p = hold(&app, id, "alice", "h3", json!({"policyVersion": 2})).await;
    assert_eq!(p.body["code"], "POLICY_VERSION_MISMATCH");
    app.db()
        .await
        .execute("UPDATE capacity_resource SET state = 'CLOSED', revision = revision + 1 WHERE id = $1", &[&id])
        .await
        .unwrap();
    let closed = hold(&app, id, "alice", "h4", json!({})).await;
    assert_eq!((closed.status, closed.body["code"].as_str()), (StatusCode::CONFLICT, Some("RESOURCE_CLOSED")));
    let missing = hold(&app, 424242, "alice", "h5", json!({})).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    app.assert_consistent().await;
}

#[tokio::test]
async fn resources_are_created_by_admins_and_inputs_are_checked() {
    let app = TestApp::spawn().await;
    let denied =
        post(&app, "/api/resources", TENANT_ONE, "ops", "r1", json!({"code": "lot", "name": "Parking", "capacity": 5}))
            .await;
    assert_eq!((denied.status, denied.body["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")));

    let created = post(
        &app,
        "/api/resources",
        ADMIN,
        "ops",
        "r2",
        json!({"code": "lot", "name": "Parking", "capacity": 5, "timezone": "Asia/Seoul", "policyVersion": 3}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(
        created.body,
        json!({"id": created.body["id"], "code": "lot", "name": "Parking", "state": "OPEN", "capacity": 5, "occupiedCount": 0,
               "availableCount": 5, "revision": 0, "policyVersion": 3, "timezone": "Asia/Seoul"})
    );
    let dup =
        post(&app, "/api/resources", ADMIN, "ops", "r3", json!({"code": "lot", "name": "Again", "capacity": 1})).await;
    assert_eq!((dup.status, dup.body["code"].as_str()), (StatusCode::CONFLICT, Some("RESOURCE_CODE_TAKEN")));
    for (i, bad) in [
        json!({"code": "lot2", "name": "x", "capacity": 0}),
        json!({"code": "lot2", "name": "x", "capacity": 5, "timezone": "Mars/Olympus"}),
        json!({"code": "bad code", "name": "x", "capacity": 5}),
        json!({"code": "lot2", "name": "x", "capacity": "5"}),
    ]
    .into_iter()
    .enumerate()
    {
        let a = post(&app, "/api/resources", ADMIN, "ops", &format!("bad-{i}"), bad).await;
        assert_eq!(
            (a.status, a.body["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("MALFORMED_REQUEST")),
            "{}",
            a.body
        );
    }

    // Quantity, owner and key rules on holds.
    for q in [json!(0), json!(-1), json!(1001), json!("2")] {
        let a = hold(&app, DEMO, "alice", &format!("q-{q}"), json!({"quantity": q})).await;
        assert_eq!(
            (a.status, a.body["details"]["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some("quantity")),
            "{}",
            a.body
        );
    }
    let no_key = app
        .request(reqwest::Method::POST, "/api/resources/1/holds", TENANT_ONE, Some("alice"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(crate::helpers::body(no_key).await.1["code"], "IDEMPOTENCY_KEY_REQUIRED");
    let no_owner = app
        .request(reqwest::Method::POST, "/api/resources/1/holds", TENANT_ONE, None)
        .header("Idempotency-Key", "k")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(crate::helpers::body(no_owner).await.1["details"]["field"], "X-Reservation-Owner");
    assert_eq!(app.count("SELECT count(*) FROM capacity_hold").await, 0);
    assert_eq!(resource(&app, DEMO).await["revision"], 0);
}
