//! Admission (issue: Redis admission). In one run:
//! 1. the same hold workload (32 clients, distinct resources) with Redis off,
//!    Redis on, and Redis configured but unreachable;
//! 2. overload: 200 clients against a pool of 16 connections, with and
//!    without the node bulkhead.
//!
//! Run: `cargo bench --bench admission` (needs `redis-server`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

mod common;
use common::{ms, pct, Bench};

struct Outcome {
    statuses: BTreeMap<u16, usize>,
    ok_latencies: Vec<Duration>,
    all_latencies: Vec<Duration>,
    elapsed: Duration,
}

async fn holds(bench: &Arc<Bench>, clients: usize, seconds: u64, resources: &Arc<Vec<i64>>) -> Outcome {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (bench, resources) = (bench.clone(), resources.clone());
            tokio::spawn(async move {
                let mut out = Vec::new();
                let mut n = 0;
                while Instant::now() < deadline {
                    let id = resources[c % resources.len()];
                    let (status, d) = bench
                        .post(&format!("/api/resources/{id}/holds"), &format!("c{c}"), &format!("k{c}-{n}"), &json!({}))
                        .await;
                    out.push((status, d));
                    n += 1;
                }
                out
            })
        })
        .collect();
    let mut o =
        Outcome { statuses: BTreeMap::new(), ok_latencies: vec![], all_latencies: vec![], elapsed: Duration::ZERO };
    for t in tasks {
        for (status, d) in t.await.unwrap() {
            *o.statuses.entry(status).or_default() += 1;
            o.all_latencies.push(d);
            if status == 201 {
                o.ok_latencies.push(d);
            }
        }
    }
    o.elapsed = started.elapsed();
    o.ok_latencies.sort();
    o.all_latencies.sort();
    o
}

async fn resources(bench: &Bench, n: usize) -> Arc<Vec<i64>> {
    bench
        .sql(&format!(
            "INSERT INTO capacity_resource (code, name, capacity) SELECT 'adm-' || g, 'adm', 1000000 FROM generate_series(1, {n}) g"
        ))
        .await;
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use yeyak::db::schema::capacity_resource as r;
    let mut conn = yeyak::db::establish(&bench.db_url()).await.unwrap();
    Arc::new(r::table.filter(r::code.like("adm-%")).order(r::id).select(r::id).load(&mut conn).await.unwrap())
}

fn line(name: &str, o: &Outcome, fallback: u64) {
    let ok = o.statuses.get(&201).copied().unwrap_or(0);
    let p = |v: &[Duration], q| if v.is_empty() { 0.0 } else { ms(pct(v, q)) };
    println!(
        "| {name} | {:.0} | {:.1} | {:.1} | {:.1} | {:?} | {fallback} |",
        ok as f64 / o.elapsed.as_secs_f64(),
        p(&o.ok_latencies, 0.5),
        p(&o.ok_latencies, 0.99),
        p(&o.all_latencies, 0.99),
        o.statuses,
    );
}

struct RedisChild(std::process::Child, u16);

impl RedisChild {
    async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server is installed");
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        RedisChild(child, port)
    }
}

impl Drop for RedisChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn scenario(name: &str, redis: Option<String>, bulkhead: bool, clients: usize, pool: u32) {
    let bench = Arc::new(
        Bench::start_with(|c| {
            c.redis_url = redis;
            c.bulkhead = bulkhead;
            c.db_pool_size = pool;
            c.redis_permits = 64;
        })
        .await,
    );
    let ids = resources(&bench, 32).await;
    holds(&bench, 8, 1, &ids).await; // warm-up
    let before = bench.state.admission.stats.snapshot().fallback;
    let o = holds(&bench, clients, 6, &ids).await;
    line(name, &o, bench.state.admission.stats.snapshot().fallback - before);
    if let Ok(bench) = Arc::try_unwrap(bench) {
        bench.finish().await;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let redis = RedisChild::start().await;
    println!("## Holds, 32 clients on 32 resources, pool 32, 6 s each");
    println!("| scenario | holds/s | p50 ms (201) | p99 ms (201) | p99 ms (all) | statuses | fallbacks |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    scenario("Redis off", None, true, 32, 32).await;
    scenario("Redis on", Some(format!("redis://127.0.0.1:{}", redis.1)), true, 32, 32).await;
    scenario("Redis unreachable", Some("redis://127.0.0.1:1".into()), true, 32, 32).await;
    println!("\n## Overload: 200 clients, pool of 16 connections, 6 s each");
    println!("| scenario | holds/s | p50 ms (201) | p99 ms (201) | p99 ms (all) | statuses | fallbacks |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    scenario("without bulkhead", None, false, 200, 16).await;
    scenario("with bulkhead", None, true, 200, 16).await;
    scenario("with bulkhead + Redis", Some(format!("redis://127.0.0.1:{}", redis.1)), true, 200, 16).await;
}
