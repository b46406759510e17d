//! The idempotency record (SPEC §4) through the booking routes.

use std::sync::Arc;

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::json;
use tokio::sync::Barrier;
use yeyak::idempotency::{finalize, Scope, StoredResponse};

use crate::helpers::*;

#[tokio::test]
async fn same_key_and_body_replays_the_first_answer_with_one_effect() {
    let app = TestApp::spawn().await;
    let b = booking("회의", &["A", "B"], &at(1, 10, 0), &at(1, 11, 0));
    let first = app.create_booking(TENANT_ONE, "alice", "key-1", &b).await;
    assert_eq!(first.status(), StatusCode::CREATED);
    assert_eq!(first.headers()["Idempotency-Replayed"], "false");
    let first_body = first.text().await.unwrap();

    // Same request with keys in another order and other whitespace.
    let reordered = json!({"endsAt": b["endsAt"], "startsAt": b["startsAt"], "rooms": ["A", "B"], "title": "회의"});
    for _ in 0..3 {
        let again = app.create_booking(TENANT_ONE, "alice", "key-1", &reordered).await;
        assert_eq!(again.status(), StatusCode::CREATED);
        assert_eq!(again.headers()["Idempotency-Replayed"], "true");
        assert_eq!(again.text().await.unwrap(), first_body);
    }
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 1);

    // A replay says what happened then, even after the booking changed.
    let id = serde_json::from_str::<serde_json::Value>(&first_body).unwrap()["id"].as_i64().unwrap();
    assert_eq!(app.cancel_booking(TENANT_ONE, "alice", id, None, &json!({})).await.status(), StatusCode::OK);
    let replay = app.create_booking(TENANT_ONE, "alice", "key-1", &b).await;
    assert_eq!(replay.text().await.unwrap(), first_body);
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 1);
}

#[tokio::test]
async fn same_key_with_another_body_is_a_fingerprint_conflict() {
    let app = TestApp::spawn().await;
    let b = booking("회의", &["A"], &at(1, 10, 0), &at(1, 11, 0));
    assert_eq!(app.create_booking(TENANT_ONE, "alice", "key-1", &b).await.status(), StatusCode::CREATED);
    let other = booking("회의", &["A"], &at(1, 12, 0), &at(1, 13, 0));
    let (status, err) = body(app.create_booking(TENANT_ONE, "alice", "key-1", &other).await).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(err["code"], "IDEMPOTENCY_FINGERPRINT_CONFLICT");
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 1);
}

#[tokio::test]
async fn business_rejections_are_stored_and_replayed() {
    let app = TestApp::spawn().await;
    let b = booking("회의", &["C"], &at(1, 10, 0), &at(1, 11, 0));
    let first: serde_json::Value = app.create_booking(TENANT_ONE, "alice", "a", &b).await.json().await.unwrap();
    let (status, _) = body(app.create_booking(TENANT_ONE, "bob", "b", &b).await).await;
    assert_eq!(status, StatusCode::CONFLICT);
    // The time frees up, but the same key still answers what it answered then.
    let id = first["id"].as_i64().unwrap();
    assert_eq!(app.cancel_booking(TENANT_ONE, "alice", id, None, &json!({})).await.status(), StatusCode::OK);
    let replay = app.create_booking(TENANT_ONE, "bob", "b", &b).await;
    assert_eq!(replay.status(), StatusCode::CONFLICT);
    assert_eq!(replay.headers()["Idempotency-Replayed"], "true");
    assert_eq!(replay.json::<serde_json::Value>().await.unwrap()["code"], "ROOM_TIME_TAKEN");
    // A new key is judged afresh.
    assert_eq!(app.create_booking(TENANT_ONE, "bob", "b2", &b).await.status(), StatusCode::CREATED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_requests_with_one_key_have_one_effect() {
    let app = Arc::new(TestApp::spawn().await);
    let b = booking("회의", &["B"], &at(1, 10, 0), &at(1, 11, 0));
    let barrier = Arc::new(Barrier::new(20));
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let (app, barrier, b) = (app.clone(), barrier.clone(), b.clone());
            tokio::spawn(async move {
                let req = app
                    .request(reqwest::Method::POST, "/api/bookings", TENANT_ONE, Some("alice"))
                    .header("Idempotency-Key", "same")
                    .json(&b);
                barrier.wait().await;
                let res = req.send().await.unwrap();
                let replayed = res.headers().get("Idempotency-Replayed").map(|v| v.to_str().unwrap().to_owned());
                let retry_after = res.headers().get("Retry-After").is_some();
                let (status, body) = body(res).await;
                (status, body, replayed, retry_after)
            })
        })
        .collect();
    let mut fresh = 0;
    for t in tasks {
        let (status, body, replayed, retry_after) = t.await.unwrap();
        match status {
            StatusCode::CREATED if replayed.as_deref() == Some("false") => fresh += 1,
            StatusCode::CREATED => assert_eq!(replayed.as_deref(), Some("true")),
            StatusCode::CONFLICT => {
                assert_eq!(body["code"], "COMMAND_IN_PROGRESS", "{body}");
                assert!(retry_after);
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(fresh, 1);
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 1);
    assert_eq!(app.count("SELECT count(*) FROM idempotency_record").await, 1);
}

/// Inserts a claim that another process committed before doing its work.
async fn committed_claim(
    app: &TestApp,
    tenant: &str,
    operation: &str,
    key: &str,
    fingerprint: &str,
    token: uuid::Uuid,
    lease_s: i64,
) {
    let now = app.clock_now();
    app.db()
        .await
        .execute(
            "INSERT INTO idempotency_record (tenant, operation, idempotency_key, fingerprint, state, owner_token, lease_expires_at, created_at)
             VALUES ($1, $2, $3, $4, 'IN_PROGRESS', $5, $6::text::timestamptz, $7::text::timestamptz)",
            &[&tenant, &operation, &key, &fingerprint, &token, &(now + Duration::seconds(lease_s)).to_rfc3339(), &now.to_rfc3339()],
        )
        .await
        .unwrap();
}

impl TestApp {
    fn clock_now(&self) -> chrono::DateTime<chrono::Utc> {
        use yeyak::clock::Clock;
        self.clock.now()
    }
}

#[tokio::test]
async fn a_live_lease_answers_in_progress_and_an_expired_one_is_taken_over() {
    let app = TestApp::spawn().await;
    let b = booking("회의", &["A"], &at(1, 10, 0), &at(1, 11, 0));

    // Learn the fingerprint this request has by running it once under another key.
    assert_eq!(app.create_booking(TENANT_ONE, "alice", "probe", &b).await.status(), StatusCode::CREATED);
    let fingerprint: String = app
        .db()
        .await
        .query_one("SELECT fingerprint FROM idempotency_record WHERE idempotency_key = 'probe'", &[])
        .await
        .unwrap()
        .get(0);
    let probe_id = app.count("SELECT max(id) FROM reservation").await;
    assert_eq!(app.cancel_booking(TENANT_ONE, "alice", probe_id, None, &json!({})).await.status(), StatusCode::OK);

    let stale_owner = uuid::Uuid::new_v4();
    committed_claim(&app, "t1", "booking.create", "leased", &fingerprint, stale_owner, 90).await;

    let res = app.create_booking(TENANT_ONE, "alice", "leased", &b).await;
    assert_eq!(res.status(), StatusCode::CONFLICT);
    let retry_after: u64 = res.headers()["Retry-After"].to_str().unwrap().parse().unwrap();
    assert!((1..=91).contains(&retry_after), "{retry_after}");
    assert_eq!(res.json::<serde_json::Value>().await.unwrap()["code"], "COMMAND_IN_PROGRESS");
    assert_eq!(app.count("SELECT count(*) FROM reservation WHERE cancelled_at IS NULL").await, 0);

    // The lease runs out: the next request takes over and executes once.
    app.clock.advance(Duration::seconds(91));
    let res = app.create_booking(TENANT_ONE, "alice", "leased", &b).await;
    assert_eq!(res.status(), StatusCode::CREATED);
    assert_eq!(res.headers()["Idempotency-Replayed"], "false");
    let winner = res.text().await.unwrap();
    assert_eq!(app.count("SELECT count(*) FROM reservation WHERE cancelled_at IS NULL").await, 1);

    // The stale owner comes back late: its finalize is refused and changes nothing.
    let scope = Scope {
        tenant: yeyak::auth::api_key::Tenant::parse("t1").unwrap(),
        operation: "booking.create",
        key: yeyak::idempotency::IdempotencyKey::parse("leased").unwrap(),
    };
    let mut conn = yeyak::db::establish(&format!("{PG_BASE}/{}", app.db_name)).await.unwrap();
    let late = StoredResponse { status: 201, body: "{\"stale\":true}".into() };
    assert!(!finalize(&mut conn, &scope, stale_owner, &late, app.clock_now()).await.unwrap());
    let replay = app.create_booking(TENANT_ONE, "alice", "leased", &b).await;
    assert_eq!(replay.headers()["Idempotency-Replayed"], "true");
    assert_eq!(replay.text().await.unwrap(), winner);
}

#[tokio::test]
async fn another_tenant_or_owner_never_sees_a_stored_response() {
    let app = TestApp::spawn().await;
    let b = booking("비밀 회의", &["A"], &at(1, 10, 0), &at(1, 11, 0));
    let first = app.create_booking(TENANT_ONE, "alice", "shared-key", &b).await.text().await.unwrap();

    // Same tenant, other owner, same key and body: refused, nothing revealed.
    let (status, err) = body(app.create_booking(TENANT_ONE, "mallory", "shared-key", &b).await).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(err["code"], "IDEMPOTENCY_FINGERPRINT_CONFLICT");
    assert!(!err.to_string().contains("비밀"));

    // Another tenant with the same key has its own scope: judged afresh (and the time is taken).
    let res = app.create_booking(TENANT_TWO, "alice", "shared-key", &b).await;
    assert_eq!(res.headers()["Idempotency-Replayed"], "false");
    let (status, err) = body(res).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(err["code"], "ROOM_TIME_TAKEN");
    assert_ne!(err.to_string(), first);
}

#[tokio::test]
async fn move_and_cancel_are_idempotent_with_a_key() {
    let app = TestApp::spawn().await;
    let created: serde_json::Value = app
        .create_booking(TENANT_ONE, "alice", "c", &booking("회의", &["A"], &at(1, 10, 0), &at(1, 11, 0)))
        .await
        .json()
        .await
        .unwrap();
    let id = created["id"].as_i64().unwrap();
    let change = json!({"startsAt": at(1, 12, 0), "endsAt": at(1, 13, 0)});
    let first = app.move_booking(TENANT_ONE, "alice", id, Some("m"), &change).await.text().await.unwrap();
    let again = app.move_booking(TENANT_ONE, "alice", id, Some("m"), &change).await;
    assert_eq!(again.headers()["Idempotency-Replayed"], "true");
    assert_eq!(again.text().await.unwrap(), first);
    let (_, now) = app.get_json(&format!("/api/bookings/{id}"), TENANT_ONE).await;
    assert_eq!(now["version"], 2, "one effect");

    // The same key on another booking is another request.
    let (status, err) = body(app.move_booking(TENANT_ONE, "alice", id + 1, Some("m"), &change).await).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("IDEMPOTENCY_FINGERPRINT_CONFLICT")));

    let c1 = app.cancel_booking(TENANT_ONE, "alice", id, Some("x"), &json!({})).await;
    assert_eq!(c1.status(), StatusCode::OK);
    let c2 = app.cancel_booking(TENANT_ONE, "alice", id, Some("x"), &json!({})).await;
    assert_eq!((c2.status(), c2.headers()["Idempotency-Replayed"].to_str().unwrap()), (StatusCode::OK, "true"));
    let (_, now) = app.get_json(&format!("/api/bookings/{id}"), TENANT_ONE).await;
    assert_eq!(now["version"], 3);
}
