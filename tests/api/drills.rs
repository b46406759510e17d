//! Fault drills: the database connection of a running command is killed; the
//! answer is a retryable 503, nothing is half-written, and the idempotent
//! retry has exactly one effect.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backend_terminated_mid_transaction_loses_nothing_and_the_retry_has_one_effect() {
    let app = Arc::new(TestApp::spawn().await);
    // Hold the resource row so that the hold's transaction waits inside PostgreSQL.
    let blocker = app.db().await;
    blocker.batch_execute("BEGIN; SELECT id FROM capacity_resource WHERE id = 1 FOR UPDATE").await.unwrap();
    let request = {
        let app = app.clone();
        tokio::spawn(async move {
            let res = app
                .request(reqwest::Method::POST, "/api/resources/1/holds", TENANT_ONE, Some("alice"))
                .header("Idempotency-Key", "drill-1")
                .json(&json!({}))
                .send()
                .await
                .unwrap();
            crate::helpers::body(res).await
        })
    };
    // Find the waiting backend of our app and kill it mid-transaction.
    let admin = connect("postgres").await;
    let mut killed = 0;
    for _ in 0..100 {
        let rows = admin
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                  WHERE datname = $1 AND wait_event_type = 'Lock' AND pid <> $2",
                &[&app.db_name, &blocker.query_one("SELECT pg_backend_pid()", &[]).await.unwrap().get::<_, i32>(0)],
            )
            .await
            .unwrap();
        killed = rows.len();
        if killed > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(killed, 1, "the hold's backend was waiting on the lock");
    let (status, body) = tokio::time::timeout(Duration::from_secs(10), request).await.unwrap().unwrap();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!((body["code"].as_str(), body["retryable"].as_bool()), (Some("DATABASE_UNAVAILABLE"), Some(true)));
    blocker.batch_execute("COMMIT").await.unwrap();

    // Nothing was half-written: no hold, no claim, the unit is free.
    assert_eq!(app.count("SELECT count(*) FROM capacity_hold").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM idempotency_record").await, 0);
    // The retry with the same key has exactly one effect; another retry replays it.
    let retry = app
        .request(reqwest::Method::POST, "/api/resources/1/holds", TENANT_ONE, Some("alice"))
        .header("Idempotency-Key", "drill-1")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(retry.status(), StatusCode::CREATED);
    let again = app
        .request(reqwest::Method::POST, "/api/resources/1/holds", TENANT_ONE, Some("alice"))
        .header("Idempotency-Key", "drill-1")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        (again.status(), again.headers()["Idempotency-Replayed"].to_str().unwrap()),
        (StatusCode::CREATED, "true")
    );
    assert_eq!(app.count("SELECT count(*) FROM capacity_hold").await, 1);
    app.assert_consistent().await;
}
