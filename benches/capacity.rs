//! Hold throughput over HTTP beside its SQL ceiling (issue: capacity).
//!
//! In one run, on one fresh database: 32 concurrent clients creating holds on
//! 32 distinct resources, then on one hot resource (capacity 10,000), then
//! replaying stored holds; and pgbench driving the same statements of one hold
//! transaction at the same concurrency. Our HTTP throughput is reported as a
//! fraction of that ceiling.
//!
//! Run: `cargo bench --bench capacity` (needs `pgbench`; PostgreSQL on localhost).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

mod common;
use common::{ms, pct, Bench};

const CLIENTS: usize = 32;
/// Wall-clock budget of each HTTP scenario and each pgbench run.
const SECONDS: u64 = 8;

struct Run {
    ok: usize,
    refused: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Run {
    fn per_second(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64()
    }
}

/// `CLIENTS` tasks each sending requests one after another until the time
/// budget or `per_client` requests are used up. `target(client, n)` names the
/// path, owner, key and body of request `n` of `client`.
async fn drive<F>(bench: &Arc<Bench>, per_client: usize, expect: u16, target: F) -> Run
where
    F: Fn(usize, usize) -> (String, String, String, serde_json::Value) + Send + Sync + 'static,
{
    let target = Arc::new(target);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(SECONDS);
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (bench, target) = (bench.clone(), target.clone());
            tokio::spawn(async move {
                let (mut ok, mut refused, mut lat) = (0, 0, Vec::new());
                for n in 0..per_client {
                    if Instant::now() >= deadline {
                        break;
                    }
                    let (path, owner, key, body) = target(c, n);
                    let (status, d) = bench.post(&path, &owner, &key, &body).await;
                    if status == expect {
                        ok += 1
                    } else {
                        refused += 1
                    }
                    lat.push(d);
                }
                (ok, refused, lat)
            })
        })
        .collect();
    let mut run = Run { ok: 0, refused: 0, elapsed: Duration::ZERO, latencies: Vec::new() };
    for t in tasks {
        let (ok, refused, lat) = t.await.unwrap();
        run.ok += ok;
        run.refused += refused;
        run.latencies.extend(lat);
    }
    run.elapsed = started.elapsed();
    run.latencies.sort();
    run
}

/// One hold transaction as the server sends it: the report's script, so both
/// benches measure the same 8 statements (the claim and the scope try-lock are
/// one statement since 3558894; this bench's own copy still had 9).
const HOLD_TX: &str = include_str!("report/sql/hold.sql");

/// pgbench with `HOLD_TX`: transactions per second.
fn pgbench(bench: &Bench, rid_expr: &str, base: i64) -> f64 {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("hold_tx.sql");
    std::fs::write(&script, format!("\\set rid {rid_expr}\n{HOLD_TX}")).unwrap();
    let out = std::process::Command::new("pgbench")
        .args(["-n", "-M", "prepared", "-c", &CLIENTS.to_string(), "-j", "2", "-T", &SECONDS.to_string()])
        .arg("-D")
        .arg(format!("base={base}"))
        .arg("-f")
        .arg(&script)
        .arg(bench.db_url())
        .output()
        .expect("pgbench runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "pgbench failed: {}{}", text, String::from_utf8_lossy(&out.stderr));
    text.lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|v| v.parse().ok())
        .expect("pgbench prints tps")
}

async fn resource_ids(bench: &Bench, prefix: &str) -> Vec<i64> {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use yeyak::db::schema::capacity_resource as r;
    let mut conn = yeyak::db::establish(&bench.db_url()).await.unwrap();
    r::table.filter(r::code.like(format!("{prefix}%"))).order(r::id).select(r::id).load(&mut conn).await.unwrap()
}

fn row(name: &str, run: &Run) -> String {
    format!(
        "| {name} | {} | {} | {:.0} | {:.1} | {:.1} |",
        run.ok,
        run.refused,
        run.per_second(),
        ms(pct(&run.latencies, 0.5)),
        ms(pct(&run.latencies, 0.99))
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bench = Arc::new(Bench::start().await);
    bench
        .sql(
            "INSERT INTO capacity_resource (code, name, capacity)
             SELECT 'http-d-' || lpad(g::text, 2, '0'), 'distinct', 10000 FROM generate_series(1, 32) g
             UNION ALL SELECT 'http-hot', 'hot', 10000
             UNION ALL SELECT 'pgb-d-' || lpad(g::text, 2, '0'), 'distinct', 1000000 FROM generate_series(1, 32) g
             UNION ALL SELECT 'pgb-hot', 'hot', 1000000",
        )
        .await;
    let distinct = Arc::new(resource_ids(&bench, "http-d-").await);
    let hot = resource_ids(&bench, "http-hot").await[0];
    let pgb_distinct = resource_ids(&bench, "pgb-d-").await;
    let pgb_hot = resource_ids(&bench, "pgb-hot").await[0];

    // Warm-up: pools and prepared statements.
    let d = distinct.clone();
    drive(&bench, 10, 201, move |c, n| {
        (format!("/api/resources/{}/holds", d[c]), format!("w{c}"), format!("warm-{c}-{n}"), json!({}))
    })
    .await;

    let d = distinct.clone();
    let http_distinct = drive(&bench, 100_000, 201, move |c, n| {
        (format!("/api/resources/{}/holds", d[c]), format!("owner-{c}"), format!("d-{c}-{n}"), json!({}))
    })
    .await;
    // 32 × 300 stays under the hot resource's 10,000 units.
    let http_hot = drive(&bench, 300, 201, move |c, n| {
        (format!("/api/resources/{hot}/holds"), format!("owner-{c}"), format!("h-{c}-{n}"), json!({}))
    })
    .await;
    // Replays of holds stored by the distinct run (same key, owner and body).
    let d = distinct.clone();
    let stored = http_distinct.ok / CLIENTS;
    let replays = drive(&bench, 100_000, 201, move |c, n| {
        (
            format!("/api/resources/{}/holds", d[c]),
            format!("owner-{c}"),
            format!("d-{c}-{}", n % stored.max(1)),
            json!({}),
        )
    })
    .await;

    let ceiling_distinct = pgbench(&bench, ":base + :client_id", pgb_distinct[0]);
    let ceiling_hot = pgbench(&bench, ":base", pgb_hot);

    println!("## Holds over HTTP, {CLIENTS} concurrent clients, {SECONDS} s budget per scenario");
    println!("| scenario | ok | other | per second | p50 ms | p99 ms |");
    println!("| --- | --- | --- | --- | --- | --- |");
    println!("{}", row("holds, 32 distinct resources", &http_distinct));
    println!("{}", row("holds, one hot resource (cap 10,000)", &http_hot));
    println!("{}", row("replays of stored holds", &replays));
    println!("\n## SQL ceiling: the same statements of one hold transaction, pgbench -M prepared -c {CLIENTS} -j 2 -T {SECONDS}");
    println!("| scenario | pgbench tps | HTTP holds/s | HTTP / ceiling |");
    println!("| --- | --- | --- | --- |");
    println!(
        "| 32 distinct resources | {ceiling_distinct:.0} | {:.0} | {:.2} |",
        http_distinct.per_second(),
        http_distinct.per_second() / ceiling_distinct
    );
    println!(
        "| one hot resource | {ceiling_hot:.0} | {:.0} | {:.2} |",
        http_hot.per_second(),
        http_hot.per_second() / ceiling_hot
    );

    if let Ok(bench) = Arc::try_unwrap(bench) {
        bench.finish().await;
    }
}
