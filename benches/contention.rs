//! Booking contention over HTTP (issue: foundation). Starts yeyak in-process on
//! a fresh database, then:
//! 1. 10 rounds of 20 concurrent requests for one room and time: per round the
//!    slowest response and the outcome counts;
//! 2. 200 trials of A+B against B+C at the same instant: the loser's median
//!    and maximum latency.
//!
//! Run: `cargo bench --bench contention` (PostgreSQL on localhost;
//! `BENCH_PG=postgres://…` to point elsewhere).

use std::sync::Arc;
use std::time::Duration;

use chrono::{DurationRound, Utc};
use serde_json::json;
use tokio::sync::Barrier;

mod common;
use common::{ms, pct, Bench};

fn slot(day: i64, hour: u32) -> (String, String) {
    let base = Utc::now().duration_trunc(chrono::Duration::days(1)).unwrap() + chrono::Duration::days(day);
    let s = base + chrono::Duration::hours(i64::from(hour));
    (s.to_rfc3339(), (s + chrono::Duration::hours(1)).to_rfc3339())
}

/// Fires all requests at the same instant (a barrier), returns status and latency.
async fn race(bench: &Arc<Bench>, reqs: Vec<(String, serde_json::Value)>) -> Vec<(u16, Duration)> {
    let barrier = Arc::new(Barrier::new(reqs.len()));
    let tasks: Vec<_> = reqs
        .into_iter()
        .enumerate()
        .map(|(i, (idem, body))| {
            let (bench, barrier) = (bench.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                bench.post("/api/bookings", &format!("user-{i}"), &idem, &body).await
            })
        })
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

fn booking(title: &str, rooms: &[&str], (s, e): (String, String)) -> serde_json::Value {
    json!({"title": title, "rooms": rooms, "startsAt": s, "endsAt": e})
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bench = Arc::new(Bench::start().await);
    // Warm the connection pools.
    race(&bench, (0..20).map(|i| (format!("warm-{i}"), booking("warm", &["C"], slot(400 + i, 9)))).collect()).await;

    println!("## 20 concurrent requests for one room and time, 10 rounds");
    println!("| round | 201 | 409 ROOM_TIME_TAKEN | other | slowest ms |");
    println!("| --- | --- | --- | --- | --- |");
    let mut worst = Duration::ZERO;
    for round in 0..10 {
        let body = booking("contention", &["A"], slot(1 + round, 10));
        let results = race(&bench, (0..20).map(|i| (format!("c{round}-{i}"), body.clone())).collect()).await;
        let created = results.iter().filter(|(s, _)| *s == 201).count();
        let taken = results.iter().filter(|(s, _)| *s == 409).count();
        let slowest = results.iter().map(|(_, d)| *d).max().unwrap();
        worst = worst.max(slowest);
        println!("| {} | {created} | {taken} | {} | {:.1} |", round + 1, 20 - created - taken, ms(slowest));
    }
    println!("\nslowest response over all rounds: {:.1} ms\n", ms(worst));

    println!("## A+B against B+C at the same instant, 200 trials");
    let (mut loser, mut winner, mut bad, mut other) = (Vec::new(), Vec::new(), 0, 0);
    for trial in 0..200i64 {
        let at = slot(20 + trial / 12, 8 + (trial % 12) as u32);
        let results = race(
            &bench,
            vec![
                (format!("ab-{trial}"), booking("AB", &["A", "B"], at.clone())),
                (format!("bc-{trial}"), booking("BC", &["B", "C"], at)),
            ],
        )
        .await;
        let mut statuses: Vec<u16> = results.iter().map(|(s, _)| *s).collect();
        statuses.sort();
        if statuses != [201, 409] {
            bad += 1;
        }
        // Only a 201 is a win and only a 409 a loss; anything else is an
        // error, counted apart instead of timed as an answer.
        for (status, d) in results {
            match status {
                201 => winner.push(d),
                409 => loser.push(d),
                _ => other += 1,
            }
        }
    }
    loser.sort();
    winner.sort();
    println!("trials with other than one 201 + one 409: {bad}; answers neither 201 nor 409: {other}");
    println!("| side | n | median ms | p99 ms | max ms |");
    println!("| --- | --- | --- | --- | --- |");
    for (name, v) in [("loser (409)", &loser), ("winner (201)", &winner)] {
        println!(
            "| {name} | {} | {:.1} | {:.1} | {:.1} |",
            v.len(),
            ms(pct(v, 0.5)),
            ms(pct(v, 0.99)),
            ms(*v.last().unwrap())
        );
    }
    println!("\ntransaction retries (40P01/40001): {}", bench.state.db_stats.retries());
    if let Ok(bench) = Arc::try_unwrap(bench) {
        bench.finish().await;
    }
}
