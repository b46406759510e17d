//! Start-up, health and response conventions.

use reqwest::StatusCode;

use crate::helpers::*;

#[tokio::test]
async fn creates_a_missing_database_and_migrates_it() {
    let name = format!("yeyak_test_{}", uuid::Uuid::new_v4().simple());
    let app = yeyak::startup::build(test_config(&name)).await.expect("builds on a missing database");
    let addr = app.addr;
    tokio::spawn(app.server);
    let res = reqwest::get(format!("http://{addr}/readyz")).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let db = connect(&name).await;
    let rooms: i64 = db.query_one("SELECT count(*) FROM room", &[]).await.unwrap().get(0);
    assert_eq!(rooms, 3);
    // A second process starting on the same database migrates nothing twice.
    let again = yeyak::startup::build(test_config(&name)).await.expect("second start");
    drop(again);
    drop(db);
    drop_database(&name);
}

#[tokio::test]
async fn an_unreachable_database_gives_one_clear_line_without_the_password() {
    let mut config = test_config("nowhere");
    config.database_url = "postgres://yeyak:s3cret@127.0.0.1:1/yeyak".into();
    let err = match yeyak::startup::build(config).await {
        Ok(_) => panic!("must not start"),
        Err(e) => e.to_string(),
    };
    assert!(err.starts_with("cannot reach PostgreSQL at postgres://yeyak:***@127.0.0.1:1/yeyak"), "{err}");
    assert!(err.contains("DATABASE_URL"), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
    assert!(!err.contains('\n'), "{err}");
}

#[tokio::test]
async fn health_and_security_headers() {
    let app = TestApp::spawn().await;
    let res = app.http.get(app.url("/healthz")).header("X-Request-Id", "client-req-0001").send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["x-request-id"], "client-req-0001");
    let res = app.http.get(app.url("/readyz")).header("X-Request-Id", "bad id!").send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_ne!(res.headers()["x-request-id"], "bad id!");
    assert_eq!(res.json::<serde_json::Value>().await.unwrap()["postgres"], "ok");

    let res = app.request(reqwest::Method::GET, "/api/rooms", TENANT_ONE, None).send().await.unwrap();
    for (h, v) in
        [("x-content-type-options", "nosniff"), ("referrer-policy", "no-referrer"), ("cache-control", "no-store")]
    {
        assert_eq!(res.headers()[h], v, "{h}");
    }
    assert!(res.headers()["content-security-policy"].to_str().unwrap().contains("default-src 'self'"));
    let (status, err) = app.get_json("/api/nothing-here", TENANT_ONE).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")));
}
