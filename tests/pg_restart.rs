//! Fault drill in a test binary of its own (cargo runs test binaries one
//! after another, so no other test sees the outage): PostgreSQL is stopped and
//! started while the server runs. `/readyz` reports it, commands get a
//! retryable 503 meanwhile, the pool recovers, and the retried command has
//! exactly one effect.

use std::process::Command;

use std::time::Duration;

use serde_json::json;

fn cluster(action: &str) {
    let version = std::fs::read_dir("/etc/postgresql")
        .expect("a Debian PostgreSQL cluster")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .max()
        .unwrap();
    let status = Command::new("pg_ctlcluster")
        .args(["--skip-systemctl-redirect", &version, "main", action])
        .status()
        .expect("pg_ctlcluster runs");
    assert!(status.success(), "pg_ctlcluster {action}");
}

async fn wait_ready() {
    for _ in 0..300 {
        if Command::new("pg_isready").args(["-h", "127.0.0.1", "-q"]).status().map(|s| s.success()).unwrap_or(false) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("PostgreSQL did not come back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgresql_restarts_while_the_server_runs() {
    let db = format!("yeyak_restart_{}", uuid::Uuid::new_v4().simple());
    let mut config = yeyak::config::Config::for_database(&format!("postgres://postgres@127.0.0.1:5432/{db}"));
    config.bind = "127.0.0.1:0".parse().unwrap();
    config.background = false;
    let app = yeyak::startup::build(config).await.expect("starts");
    let base = format!("http://{}", app.addr);
    let state = app.state.clone();
    tokio::spawn(app.server);
    let client = reqwest::Client::new();
    let day = (chrono::Utc::now() + chrono::Duration::days(2)).date_naive();
    let book = |key: &'static str, hour: u32| {
        let (client, base) = (client.clone(), base.clone());
        async move {
            client
                .post(format!("{base}/api/bookings"))
                .bearer_auth("yeyak-dev-key")
                .header("X-Reservation-Owner", "alice")
                .header("Idempotency-Key", key)
                .json(&json!({"title": "재시작", "rooms": ["A"],
                    "startsAt": format!("{day}T{hour:02}:00:00Z"), "endsAt": format!("{day}T{hour:02}:30:00Z")}))
                .send()
                .await
                .unwrap()
        }
    };
    assert_eq!(book("before", 1).await.status(), 201);

    cluster("stop");
    let ready = client.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503);
    assert_eq!(ready.json::<serde_json::Value>().await.unwrap()["postgres"], "unavailable");
    let during = book("during", 2).await;
    assert_eq!(during.status(), 503);
    let body: serde_json::Value = during.json().await.unwrap();
    assert_eq!((body["code"].as_str(), body["retryable"].as_bool()), (Some("DATABASE_UNAVAILABLE"), Some(true)));

    cluster("start");
    wait_ready().await;
    let mut recovered = false;
    for _ in 0..50 {
        if client.get(format!("{base}/readyz")).send().await.unwrap().status() == 200 {
            recovered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(recovered, "/readyz is 200 again once PostgreSQL is back");
    // The retried command runs once; its replay returns the same answer.
    let retry = book("during", 2).await;
    assert_eq!(retry.status(), 201);
    assert_eq!(book("during", 2).await.headers()["Idempotency-Replayed"], "true");
    let mut conn = yeyak::db::establish(&format!("postgres://postgres@127.0.0.1:5432/{db}")).await.unwrap();
    use diesel_async::RunQueryDsl;
    let report = yeyak::consistency::run(&mut conn, state.check_context()).await.unwrap();
    assert!(report.ok);
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let n: N = diesel::sql_query("SELECT count(*) AS n FROM reservation").get_result(&mut conn).await.unwrap();
    assert_eq!(n.n, 2);
    drop(conn);
    let mut admin = yeyak::db::establish("postgres://postgres@127.0.0.1:5432/postgres").await.unwrap();
    let _ = diesel::sql_query(format!("DROP DATABASE \"{db}\" WITH (FORCE)")).execute(&mut admin).await;
}
