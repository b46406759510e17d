//! Sweeper backlog drain (issue: sweeper/outbox). 10,000 holds already expired
//! across 1,000 resources, half of them with a waiter, appear at once; we time
//! how long the sweeper takes to process them all while 8 clients keep taking
//! holds on other resources, and compare their throughput before, during and
//! after the drain. Run for the default tick (2,000 ms) and a shorter one.
//!
//! Run: `cargo bench --bench backlog`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

mod common;
use common::Bench;

const CLIENTS: usize = 8;

/// Inserts the backlog in one transaction: every hold already expired.
const BACKLOG: &str = "
BEGIN;
INSERT INTO capacity_resource (code, name, capacity, occupied_count, revision, last_sequence, waiting_count)
SELECT 'backlog-' || g, 'backlog', 10, 10, 10, CASE WHEN g % 2 = 0 THEN 1 ELSE 0 END, CASE WHEN g % 2 = 0 THEN 1 ELSE 0 END
  FROM generate_series(1, 1000) g;
INSERT INTO capacity_hold (resource_id, owner_digest, state, quantity, policy_version, expires_at, created_at, updated_at)
SELECT r.id, 'bench', 'HELD', 1, 1, now() - interval '1 second' - (h || ' milliseconds')::interval, now(), now()
  FROM capacity_resource r CROSS JOIN generate_series(1, 10) h WHERE r.code LIKE 'backlog-%';
INSERT INTO waitlist_entry (resource_id, owner_digest, sequence, state, quantity, policy_version, created_at, updated_at)
SELECT id, 'bench-waiter', 1, 'WAITING', 1, 1, now(), now() FROM capacity_resource WHERE code LIKE 'backlog-%' AND waiting_count = 1;
COMMIT;";

async fn held_due(bench: &Bench) -> i64 {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use yeyak::db::schema::capacity_hold as h;
    let mut conn = yeyak::db::establish(&bench.db_url()).await.unwrap();
    h::table
        .filter(h::state.eq("HELD"))
        .filter(h::owner_digest.eq("bench"))
        .count()
        .get_result(&mut conn)
        .await
        .unwrap()
}

async fn scenario(interval_ms: u64) {
    let bench = Arc::new(Bench::start_with(|c| c.sweep_interval_ms = interval_ms).await);
    bench
        .sql("INSERT INTO capacity_resource (code, name, capacity) SELECT 'load-' || g, 'load', 1000000 FROM generate_series(1, 8) g")
        .await;
    let load_ids: Vec<i64> = {
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        use yeyak::db::schema::capacity_resource as r;
        let mut conn = yeyak::db::establish(&bench.db_url()).await.unwrap();
        r::table.filter(r::code.like("load-%")).order(r::id).select(r::id).load(&mut conn).await.unwrap()
    };

    // Steady API load for the whole scenario; completion times are recorded.
    let stop = Arc::new(AtomicBool::new(false));
    let done: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (bench, stop, done, id) = (bench.clone(), stop.clone(), done.clone(), load_ids[c]);
            tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let (status, _) = bench
                        .post(&format!("/api/resources/{id}/holds"), &format!("c{c}"), &format!("l{c}-{n}"), &json!({}))
                        .await;
                    if status == 201 {
                        done.lock().unwrap().push(Instant::now());
                    }
                    n += 1;
                }
            })
        })
        .collect();

    tokio::time::sleep(Duration::from_secs(5)).await;
    let backlog_at = Instant::now();
    bench.sql(BACKLOG).await;
    let mut drained_at = None;
    let deadline = backlog_at + Duration::from_secs(240);
    while Instant::now() < deadline {
        if held_due(&bench).await == 0 {
            drained_at = Some(Instant::now());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let drained_at = drained_at.expect("backlog drained within 240 s");
    tokio::time::sleep(Duration::from_secs(5)).await;
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        let _ = c.await;
    }
    let end = Instant::now();

    let done = done.lock().unwrap().clone();
    let rate = |from: Instant, to: Instant| {
        let n = done.iter().filter(|t| **t >= from && **t < to).count();
        n as f64 / (to - from).as_secs_f64()
    };
    let drain = drained_at - backlog_at;
    let resources = {
        let (ok, report) = {
            let mut conn = yeyak::db::establish(&bench.db_url()).await.unwrap();
            let report = yeyak::consistency::run(&mut conn, bench.state.check_context()).await.unwrap();
            (report.ok, report)
        };
        // Overdue items measure the sweeper's lag under this load; the
        // invariants are every other check.
        let broken: Vec<_> =
            report.checks.iter().filter(|c| c.count > 0 && !c.name.starts_with("overdue_")).map(|c| c.name).collect();
        let _ = ok;
        format!("invariants broken: {}", broken.len())
    };
    println!(
        "| {interval_ms} | {:.1} | {:.0} | {:.0} | {:.0} | {resources} |",
        drain.as_secs_f64(),
        rate(started, backlog_at),
        rate(backlog_at, drained_at),
        rate(drained_at, end),
    );
    if let Ok(bench) = Arc::try_unwrap(bench) {
        bench.finish().await;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("## Backlog: 10,000 expired holds on 1,000 resources (500 with a waiter), {CLIENTS} clients taking holds meanwhile");
    println!("| sweep interval ms | drain s | holds/s before | holds/s during | holds/s after | invariants |");
    println!("| --- | --- | --- | --- | --- | --- |");
    scenario(2000).await;
    scenario(250).await;
}
