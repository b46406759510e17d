//! Issue 18's costs (SPEC §13): what a `/metrics` scrape costs on a large,
//! old outbox with and without the EXHAUSTED index (side by side on one
//! database), and how fast the sweeper's retention purge drains a backlog
//! and how long one purge pass holds its connection.
//!
//! Run: `cargo bench --bench abuse` (`-- 200000` sets the row count).

use std::time::{Duration, Instant};

mod common;
use common::{ms, pct, Bench};

/// Scrapes `/metrics` `n` times; sorted latencies.
async fn scrapes(bench: &Bench, n: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let res = bench.client.get(format!("{}/metrics", bench.base)).send().await.unwrap();
        assert_eq!(res.status().as_u16(), 200);
        let _ = res.bytes().await;
        times.push(started.elapsed());
    }
    times.sort();
    times
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let rows: i64 = std::env::args().filter_map(|a| a.parse().ok()).next().unwrap_or(200_000);
    let bench = Bench::start_with(|c| c.background = false).await;

    // 1. The scrape: `rows` delivered notifications, 100 exhausted ones.
    bench
        .sql(&format!(
            "INSERT INTO notification_outbox (delivery_id, kind, payload, status, created_at, delivered_at)
             SELECT 'done-' || g, 'hold.expired', '{{\"holdId\": 1}}', 'DELIVERED', now(), now()
               FROM generate_series(1, {rows}) g;
             INSERT INTO notification_outbox (delivery_id, kind, payload, status, created_at, last_error)
             SELECT 'gave-up-' || g, 'hold.expired', '{{}}', 'EXHAUSTED', now(), 'down' FROM generate_series(1, 100) g;"
        ))
        .await;
    // As autovacuum would leave it (VACUUM runs outside a transaction block).
    bench.sql("VACUUM ANALYZE notification_outbox").await;
    scrapes(&bench, 10).await;
    let with_index = scrapes(&bench, 200).await;
    bench.sql("DROP INDEX notification_outbox_exhausted_idx; ANALYZE notification_outbox;").await;
    scrapes(&bench, 10).await;
    let without_index = scrapes(&bench, 200).await;
    println!("## /metrics scrape, {rows} delivered + 100 exhausted notifications, 200 scrapes each");
    println!("| EXHAUSTED count | p50 ms | p99 ms |");
    println!("| --- | --- | --- |");
    for (name, t) in [("partial index (this change)", &with_index), ("no index (before)", &without_index)] {
        println!("| {name} | {:.2} | {:.2} |", ms(pct(t, 0.5)), ms(pct(t, 0.99)));
    }

    // 2. The purge: every delivered row (and one attempt row each) made old.
    bench
        .sql(&format!(
            "UPDATE notification_outbox SET delivered_at = now() - interval '31 days' WHERE status = 'DELIVERED';
             INSERT INTO notification_attempt (delivery_id, channel, attempt, worker, attempted_at, outcome)
             SELECT 'gave-up-' || (g % 100 + 1), 'webhook', g, gen_random_uuid(), now() - interval '31 days', 'RETRYABLE'
               FROM generate_series(1, {rows}) g;"
        ))
        .await;
    bench.sql("VACUUM ANALYZE notification_outbox").await;
    bench.sql("VACUUM ANALYZE notification_attempt").await;
    let started = Instant::now();
    let mut passes = Vec::new();
    let mut purged = 0;
    loop {
        let pass = Instant::now();
        let p = bench.state.sweeper.purge().await.unwrap();
        passes.push(pass.elapsed());
        purged += p.total();
        if p.total() == 0 {
            break;
        }
    }
    let total = started.elapsed();
    passes.sort();
    println!();
    println!("## Retention purge of {purged} rows (batch 1,000, at most 10 batches per table and pass)");
    println!("| passes | total s | rows/s | pass p50 ms | longest pass ms |");
    println!("| --- | --- | --- | --- | --- |");
    println!(
        "| {} | {:.1} | {:.0} | {:.0} | {:.0} |",
        passes.len(),
        total.as_secs_f64(),
        purged as f64 / total.as_secs_f64(),
        ms(pct(&passes, 0.5)),
        ms(*passes.last().unwrap())
    );
    bench.finish().await;
}
