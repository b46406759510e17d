//! Admission in front of PostgreSQL with a real Redis server started by the
//! test on its own port, and with an unreachable Redis.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::sync::Barrier;
use yeyak::admission::redis_gate::{Entry, Pass, RedisGate, RedisSettings};

use crate::helpers::*;

/// A redis-server child process on a free port; stopped when dropped.
struct RedisServer {
    port: u16,
    child: Option<std::process::Child>,
}

impl RedisServer {
    async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut server = RedisServer { port, child: None };
        server.resume().await;
        server
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    async fn resume(&mut self) {
        let child = std::process::Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server is installed");
        self.child = Some(child);
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await.is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("redis-server did not start");
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn hold(app: &TestApp, resource: i64, owner: &str, idem: &str) -> (StatusCode, Value, Option<String>) {
    let res = app
        .request(reqwest::Method::POST, &format!("/api/resources/{resource}/holds"), TENANT_ONE, Some(owner))
        .header("Idempotency-Key", idem)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let replayed = res.headers().get("Idempotency-Replayed").map(|v| v.to_str().unwrap().to_owned());
    let retry_after = res.headers().get("Retry-After").is_some();
    let (status, body) = body(res).await;
    if status == StatusCode::TOO_MANY_REQUESTS || body["code"] == "COMMAND_IN_PROGRESS" {
        assert!(retry_after, "{body}");
    }
    (status, body, replayed)
}

async fn big_resource(app: &TestApp, code: &str) -> i64 {
    let res = app
        .request(reqwest::Method::POST, "/api/resources", ADMIN, Some("ops"))
        .header("Idempotency-Key", format!("create-{code}"))
        .json(&json!({"code": code, "name": code, "capacity": 100000}))
        .send()
        .await
        .unwrap();
    res.json::<Value>().await.unwrap()["id"].as_i64().unwrap()
}

fn counters(app: &TestApp) -> yeyak::admission::AdmissionCounters {
    app.state.admission.stats.snapshot()
}

#[tokio::test]
async fn boots_and_serves_with_redis_unreachable() {
    let app = TestApp::spawn_with(|c| c.redis_url = Some("redis://127.0.0.1:1".into())).await;
    let (status, ready) = app.get_json("/readyz", TENANT_ONE).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!((ready["postgres"].as_str(), ready["redis"].as_str()), (Some("ok"), Some("degraded")));
    let (status, list) = app.get_json("/api/resources", TENANT_ONE).await;
    assert_eq!((status, list["resources"][0]["code"].as_str()), (StatusCode::OK, Some("demo-room-utc")));
    let (status, _, _) = hold(&app, 1, "alice", "a").await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(counters(&app).fallback >= 1);
    app.assert_consistent().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn commands_go_on_through_postgresql_while_redis_is_down_and_use_it_again_after() {
    let mut redis = RedisServer::start().await;
    let url = redis.url();
    let app = TestApp::spawn_with(|c| {
        c.redis_url = Some(url);
        c.redis_breaker_open_ms = 200;
    })
    .await;
    let id = big_resource(&app, "lot").await;
    for i in 0..5 {
        assert_eq!(hold(&app, id, "a", &format!("up-{i}")).await.0, StatusCode::CREATED);
    }
    assert_eq!(counters(&app).fallback, 0);
    assert_eq!(app.get_json("/readyz", TENANT_ONE).await.1["redis"], "ok");

    redis.stop();
    for i in 0..20 {
        assert_eq!(
            hold(&app, id, "a", &format!("down-{i}")).await.0,
            StatusCode::CREATED,
            "request {i} with Redis down"
        );
    }
    let during = counters(&app);
    assert!(during.fallback >= 1, "{during:?}");
    assert_eq!(app.get_json("/readyz", TENANT_ONE).await.1["redis"], "degraded");
    app.assert_consistent().await;

    redis.resume().await;
    // Not a barrier: the breaker's open period (200 ms, a timer of the code
    // under test with no event to wait on) must run out before a command
    // may probe Redis; nothing else runs meanwhile.
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The first command probes Redis; after it, admission uses Redis again.
    assert_eq!(hold(&app, id, "a", "back-probe").await.0, StatusCode::CREATED);
    let after_probe = counters(&app).fallback;
    for i in 0..5 {
        assert_eq!(hold(&app, id, "a", &format!("back-{i}")).await.0, StatusCode::CREATED);
    }
    assert_eq!(counters(&app).fallback, after_probe, "no more fallbacks once Redis is back");
    assert_eq!(app.get_json("/readyz", TENANT_ONE).await.1["redis"], "ok");
    assert_eq!(app.count(&format!("SELECT occupied_count::bigint FROM capacity_resource WHERE id = {id}")).await, 31);
    app.assert_consistent().await;
}

/// Holds the resource row so that admitted holds wait inside PostgreSQL.
async fn block_resource(app: &TestApp, id: i64) -> tokio_postgres::Client {
    let db = app.db().await;
    db.batch_execute("BEGIN").await.unwrap();
    db.execute("SELECT id FROM capacity_resource WHERE id = $1 FOR UPDATE", &[&id]).await.unwrap();
    db
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_permits_let_two_of_ten_slow_commands_through() {
    let redis = RedisServer::start().await;
    let url = redis.url();
    let app = Arc::new(
        TestApp::spawn_with(|c| {
            c.redis_url = Some(url);
            c.redis_permits = 2;
        })
        .await,
    );
    let id = big_resource(&app, "slow").await;
    let blocker = block_resource(&app, id).await;
    let barrier = Arc::new(Barrier::new(10));
    let tasks: Vec<_> = (0..10)
        .map(|i| {
            let (app, barrier) = (app.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                hold(&app, id, &format!("o{i}"), &format!("k{i}")).await
            })
        })
        .collect();
    // Two commands wait for the row inside PostgreSQL, and the other eight have their answer.
    until_waiting_for_locks(&app.db().await, 2).await;
    until("the commands without a permit are answered", || tasks.iter().filter(|t| t.is_finished()).count() >= 8).await;
    assert_eq!(app.state.admission.stats.in_flight.load(Ordering::SeqCst), 2, "two commands wait in PostgreSQL");
    blocker.batch_execute("COMMIT").await.unwrap();
    let mut statuses = Vec::new();
    for t in tasks {
        let (status, body, _) = t.await.unwrap();
        if status == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(body["code"], "ADMISSION_REJECTED");
            assert_eq!(body["retryable"], true);
        }
        statuses.push(status.as_u16());
    }
    statuses.sort();
    assert_eq!(statuses, [201, 201, 429, 429, 429, 429, 429, 429, 429, 429]);
    assert_eq!(counters(&app).max_in_flight, 2);
    // Permits come back on completion.
    assert_eq!(hold(&app, id, "later", "later").await.0, StatusCode::CREATED);
}

/// A Redis that is hung rather than dead: it accepts connections and never
/// answers a byte. Each request waits at most the Redis timeout and then
/// goes through PostgreSQL; once the breaker opens, Redis is not asked (or
/// connected to) again — so 30 requests open only a few connections and none
/// waits anywhere near the 30 s a pooled connection could.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hung_redis_costs_a_request_at_most_its_timeout_and_then_nothing() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let hung = tokio::spawn({
        let accepted = accepted.clone();
        async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                accepted.fetch_add(1, Ordering::SeqCst);
                held.push(socket);
            }
        }
    });
    let app = TestApp::spawn_with(|c| {
        c.redis_url = Some(format!("redis://{addr}"));
        c.redis_timeout_ms = 200;
        c.redis_breaker_open_ms = 600_000;
    })
    .await;
    let id = big_resource(&app, "hung").await;
    let mut slowest = Duration::ZERO;
    for i in 0..30 {
        let started = std::time::Instant::now();
        let (status, body, _) = hold(&app, id, "a", &format!("hung-{i}")).await;
        slowest = slowest.max(started.elapsed());
        assert_eq!(status, StatusCode::CREATED, "request {i} with Redis hung: {body}");
    }
    // A bound, not a speed claim: a request that waited on the hung socket
    // would take the pool's 30 s; a few Redis timeouts of 200 ms is the most.
    assert!(slowest < Duration::from_secs(5), "a request waited {slowest:?} on a hung Redis");
    assert!(counters(&app).fallback >= 1, "{:?}", counters(&app));
    let connections = accepted.load(Ordering::SeqCst);
    assert!(connections <= 10, "the open breaker stopped asking Redis, yet {connections} connections were opened");
    let (status, ready) = app.get_json("/readyz", TENANT_ONE).await;
    assert_eq!((status, ready["redis"].as_str()), (StatusCode::OK, Some("degraded")));
    app.assert_consistent().await;
    hung.abort();
}

fn settings(url: String, permits: u32, lease_ms: u64) -> RedisSettings {
    RedisSettings {
        url,
        permits,
        permit_lease: Duration::from_millis(lease_ms),
        inflight_ttl: Duration::from_secs(30),
        timeout: Duration::from_millis(200),
        breaker_threshold: 3,
        breaker_open_for: Duration::from_millis(200),
        prefix: format!("t-{}", uuid::Uuid::new_v4().simple()),
    }
}

#[tokio::test]
async fn a_permit_of_a_killed_holder_frees_itself_after_its_lease() {
    let redis = RedisServer::start().await;
    let gate = RedisGate::new(settings(redis.url(), 1, 300)).unwrap();
    let held = admitted(gate.enter(None).await.unwrap()).expect("the one permit");
    assert!(admitted(gate.enter(None).await.unwrap()).is_none(), "no second permit");
    // The holder dies without releasing.
    held.abandon();
    assert!(admitted(gate.enter(None).await.unwrap()).is_none(), "still held within the lease");
    // Not a barrier: the 300 ms lease is what frees the permit, so the test
    // lets it run out.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let again = admitted(gate.enter(None).await.unwrap());
    assert!(again.is_some(), "the expired permit was removed before counting");
    // A released permit is free at once.
    again.unwrap().leave().await;
    assert!(admitted(gate.enter(None).await.unwrap()).is_some());
}

fn admitted(entry: Entry) -> Option<Pass> {
    match entry {
        Entry::Admitted(pass) => Some(pass),
        Entry::NoPermit => None,
        Entry::InProgress => panic!("no scope was given, so no lock can be held"),
    }
}

#[tokio::test]
async fn an_inflight_lock_is_released_even_when_its_holder_panics() {
    let redis = RedisServer::start().await;
    let gate = RedisGate::new(settings(redis.url(), 10, 1000)).unwrap();
    let scope = yeyak::idempotency::Scope {
        tenant: yeyak::auth::api_key::Tenant::parse("t1").unwrap(),
        operation: "hold.create",
        key: yeyak::idempotency::IdempotencyKey::parse("k").unwrap(),
    };
    let g = gate.clone();
    let s = scope.clone();
    let crashed = tokio::spawn(async move {
        let _pass = match g.enter(Some(&s)).await.unwrap() {
            Entry::Admitted(pass) => pass,
            _ => panic!("the scope and a permit are free"),
        };
        assert!(matches!(g.enter(Some(&s)).await.unwrap(), Entry::InProgress), "held while the command runs");
        panic!("the command crashed");
    })
    .await;
    assert!(crashed.is_err());
    let mut freed = false;
    for _ in 0..50 {
        if matches!(gate.enter(Some(&scope)).await.unwrap(), Entry::Admitted(_)) {
            freed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(freed, "the lock was released by the unwinding guard");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_duplicate_in_flight_is_suppressed_before_postgresql_and_replayed_after() {
    let redis = RedisServer::start().await;
    let url = redis.url();
    let app = Arc::new(TestApp::spawn_with(|c| c.redis_url = Some(url)).await);
    let blocker = block_resource(&app, 1).await;
    let first = {
        let app = app.clone();
        tokio::spawn(async move { hold(&app, 1, "alice", "same").await })
    };
    // The first is inside PostgreSQL (past Redis, holding its lock), waiting for the row.
    until_waiting_for_locks(&app.db().await, 1).await;
    let (status, body, _) = hold(&app, 1, "alice", "same").await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("COMMAND_IN_PROGRESS")));
    assert_eq!(counters(&app).suppressed, 1, "answered by the Redis lock, not the PostgreSQL record");
    blocker.batch_execute("COMMIT").await.unwrap();
    let (status, first_body, _) = first.await.unwrap();
    assert_eq!(status, StatusCode::CREATED);
    let (status, again, replayed) = hold(&app, 1, "alice", "same").await;
    assert_eq!((status, replayed.as_deref()), (StatusCode::CREATED, Some("true")));
    assert_eq!(again, first_body);
    assert_eq!(app.count("SELECT count(*) FROM capacity_hold").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_stopped_and_started_under_concurrent_load_never_costs_a_command() {
    let mut redis = RedisServer::start().await;
    let url = redis.url();
    let app = Arc::new(
        TestApp::spawn_with(|c| {
            c.redis_url = Some(url);
            c.redis_breaker_open_ms = 100;
            c.admission_wait_ms = 10_000;
        })
        .await,
    );
    let id = big_resource(&app, "load").await;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let clients: Vec<_> = (0..8)
        .map(|c| {
            let (app, stop) = (app.clone(), stop.clone());
            tokio::spawn(async move {
                let mut statuses = Vec::new();
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    statuses.push(hold(&app, id, &format!("c{c}"), &format!("c{c}-{n}")).await.0);
                    n += 1;
                }
                statuses
            })
        })
        .collect();
    // Each phase lasts until the load has shown it: commands through Redis,
    // then through PostgreSQL alone while Redis is down, then through Redis again.
    let through_redis = || {
        let c = counters(&app);
        c.admitted - c.fallback
    };
    until("commands go through Redis", || through_redis() >= 20).await;
    let fell_back = counters(&app).fallback;
    redis.stop();
    until("commands go on while Redis is down", || counters(&app).fallback >= fell_back + 20).await;
    redis.resume().await;
    let before = through_redis();
    until("commands go through Redis again", || through_redis() >= before + 20).await;
    stop.store(true, Ordering::Relaxed);
    let mut created = 0;
    for c in clients {
        for status in c.await.unwrap() {
            assert_eq!(status, StatusCode::CREATED, "every command succeeds through the outage");
            created += 1;
        }
    }
    let seen = counters(&app);
    assert!(seen.fallback >= 1, "some commands ran while Redis was down: {seen:?}");
    assert_eq!(
        app.count(&format!("SELECT occupied_count::bigint FROM capacity_resource WHERE id = {id}")).await,
        created
    );
    app.assert_consistent().await;
}
