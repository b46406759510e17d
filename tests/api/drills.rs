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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_connections_are_replaced_by_the_pool() {
    let app = TestApp::spawn().await;
    assert_eq!(
        app.create_booking(TENANT_ONE, "a", "warm", &booking("x", &["A"], &at(1, 8, 0), &at(1, 9, 0))).await.status(),
        StatusCode::CREATED
    );
    // Every backend of this database goes, as in a PostgreSQL restart.
    let admin = connect("postgres").await;
    let killed = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            &[&app.db_name],
        )
        .await
        .unwrap()
        .len();
    assert!(killed >= 1);
    let (status, ready) = app.get_json("/readyz", TENANT_ONE).await;
    assert_eq!(
        (status, ready["postgres"].as_str()),
        (StatusCode::OK, Some("ok")),
        "the pool checked out a fresh connection"
    );
    for i in 0..5 {
        let res = app
            .create_booking(
                TENANT_ONE,
                "a",
                &format!("after-{i}"),
                &booking("y", &["B"], &at(2, 8 + i, 0), &at(2, 8 + i, 30)),
            )
            .await;
        assert_eq!(res.status(), StatusCode::CREATED);
    }
    app.assert_consistent().await;
}

/// The server binary as a child process on its own port.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn start_server(db: &str, port: u16) -> Server {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_yeyak"))
        .env("DATABASE_URL", format!("{PG_BASE}/{db}"))
        .env("YEYAK_BIND", format!("127.0.0.1:{port}"))
        .env("YEYAK_API_KEYS", format!("t1:integration:{TENANT_ONE},ops:admin:{ADMIN}"))
        .env("YEYAK_BACKGROUND", "false")
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the yeyak binary");
    let server = Server(child);
    for _ in 0..200 {
        if let Ok(res) = reqwest::get(format!("http://127.0.0.1:{port}/healthz")).await {
            if res.status().is_success() {
                return server;
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("server did not start");
}

/// Commands in flight when the server is killed.
const N: i64 = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_server_killed_with_sigkill_under_load_loses_nothing_and_retries_have_one_effect() {
    let db = fresh_database().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = start_server(&db, port).await;
    let client = reqwest::Client::new();
    let send = |i: i64| {
        let client = client.clone();
        async move {
            client
                .post(format!("http://127.0.0.1:{port}/api/bookings"))
                .bearer_auth(TENANT_ONE)
                .header("X-Reservation-Owner", format!("user-{i}"))
                .header("Idempotency-Key", format!("kill-{i}"))
                .json(&booking(&format!("b{i}"), &["A", "B"], &at(1 + i, 10, 0), &at(1 + i, 11, 0)))
                .send()
                .await
                .map(|r| r.status())
        }
    };
    let db_client = connect(&db).await;
    let load: Vec<_> = (0..N).map(|i| tokio::spawn(send(i))).collect();
    // Kill the server once some commands have committed and others have not.
    while reservations(&db_client).await < 10 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    server.0.kill().expect("SIGKILL");
    let _ = server.0.wait();
    let mut before_kill = 0;
    for t in load {
        if matches!(t.await.unwrap(), Ok(s) if s == StatusCode::CREATED) {
            before_kill += 1;
        }
    }
    let committed = reservations(&db_client).await;
    assert!(committed >= before_kill, "every 201 was committed");
    assert!((10..N).contains(&committed), "killed mid-load: {committed} of {N} committed");
    eprintln!("drill: {before_kill} answered 201 and {committed} committed before SIGKILL");

    // Restart and retry every command with its key: each ends with exactly one booking.
    let _server = start_server(&db, port).await;
    for i in 0..N {
        let status = send(i).await.unwrap();
        assert_eq!(status, StatusCode::CREATED, "retry {i}");
    }
    assert_eq!(reservations(&db_client).await, N);
    let orphans: i64 = db_client
        .query_one("SELECT count(*) FROM reservation r WHERE NOT EXISTS (SELECT 1 FROM reservation_room s WHERE s.reservation_id = r.id)", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(orphans, 0, "nothing half-written");
    let report: serde_json::Value = client
        .get(format!("http://127.0.0.1:{port}/api/admin/consistency"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(report["ok"], true, "{report}");
    drop(db_client);
    drop_database(&db);
}

async fn reservations(c: &tokio_postgres::Client) -> i64 {
    c.query_one("SELECT count(*) FROM reservation", &[]).await.unwrap().get(0)
}
