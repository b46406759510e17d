//! Unknown API keys are looked up inside the bulkhead (SPEC §20), so a flood
//! of bad keys cannot take the pool from real requests.

use reqwest::StatusCode;

use crate::helpers::*;

#[tokio::test]
async fn a_flood_of_unknown_keys_leaves_connections_for_real_requests() {
    // Four connections: two for API work, two for the rest.
    let app = TestApp::spawn_with(|c| c.db_pool_size = 4).await;
    // Make every stored-key lookup slow: the table is locked by someone else.
    let locker = app.db().await;
    locker.batch_execute("BEGIN; LOCK TABLE api_key IN ACCESS EXCLUSIVE MODE").await.unwrap();
    let refused = std::sync::atomic::AtomicUsize::new(0);
    let flood = futures_util::future::join_all((0..40).map(|i| {
        let (app, refused) = (&app, &refused);
        async move {
            let res = app
                .request(reqwest::Method::GET, "/api/resources", &format!("yk_unknown_{i:040}"), None)
                .send()
                .await
                .unwrap();
            if res.status() == StatusCode::TOO_MANY_REQUESTS {
                refused.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            body(res).await
        }
    }));
    let real = async {
        // Wait until the flood's lookups sit on the lock and the bulkhead is
        // full (the first of the flood is refused).
        until_waiting_for_locks(&app.db().await, 2).await;
        until("a flood request refused by the bulkhead", || refused.load(std::sync::atomic::Ordering::SeqCst) > 0)
            .await;
        let started = std::time::Instant::now();
        let answer = app.get_json(&format!("/api/bookings?date={}", &at(1, 0, 0)[..10]), TENANT_ONE).await;
        let took = started.elapsed();
        locker.batch_execute("ROLLBACK").await.unwrap();
        (answer, took)
    };
    let (flooded, ((status, body), took)) = tokio::join!(flood, real);
    assert_eq!(status, StatusCode::OK, "a real request found no connection after {took:?}: {body}");
    for (status, body) in &flooded {
        let code = body["code"].as_str();
        assert!(
            matches!((*status, code), (StatusCode::UNAUTHORIZED, Some("UNAUTHENTICATED")))
                || matches!((*status, code), (StatusCode::TOO_MANY_REQUESTS, Some("ADMISSION_REJECTED"))),
            "{status} {body}"
        );
    }
    assert!(flooded.iter().any(|(s, _)| *s == StatusCode::TOO_MANY_REQUESTS), "the flood waited in the bulkhead");
}
