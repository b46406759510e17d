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
use std::time::{Duration, Instant};

use chrono::{DurationRound, Utc};
use serde_json::json;
use tokio::sync::Barrier;

const KEY: &str = "bench-key-0001";

fn slot(day: i64, hour: u32) -> (String, String) {
    let base = Utc::now()
        .duration_trunc(chrono::Duration::days(1))
        .unwrap()
        + chrono::Duration::days(day);
    let s = base + chrono::Duration::hours(i64::from(hour));
    (
        s.to_rfc3339(),
        (s + chrono::Duration::hours(1)).to_rfc3339(),
    )
}

async fn post(
    client: &reqwest::Client,
    base: &str,
    idem: String,
    owner: String,
    body: serde_json::Value,
) -> (u16, Duration) {
    let req = client
        .post(format!("{base}/api/bookings"))
        .bearer_auth(KEY)
        .header("X-Reservation-Owner", owner)
        .header("Idempotency-Key", idem)
        .json(&body);
    let started = Instant::now();
    let res = req.send().await.expect("request");
    let status = res.status().as_u16();
    let _ = res.bytes().await;
    (status, started.elapsed())
}

/// Fires all requests at the same instant (a barrier), returns status and latency.
async fn race(
    client: &reqwest::Client,
    base: &str,
    reqs: Vec<(String, serde_json::Value)>,
) -> Vec<(u16, Duration)> {
    let barrier = Arc::new(Barrier::new(reqs.len()));
    let tasks: Vec<_> = reqs
        .into_iter()
        .enumerate()
        .map(|(i, (idem, body))| {
            let (client, base, barrier) = (client.clone(), base.to_owned(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                post(&client, &base, idem, format!("user-{i}"), body).await
            })
        })
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let pg =
        std::env::var("BENCH_PG").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into());
    let db = format!("yeyak_bench_{}", uuid::Uuid::new_v4().simple());
    let mut config = yeyak::config::Config::for_database(&format!("{pg}/{db}"));
    config.bind = "127.0.0.1:0".parse().unwrap();
    config.api_keys = {
        use clap::Parser;
        yeyak::config::Config::parse_from([
            "yeyak",
            "--api-keys",
            &format!("bench:integration:{KEY}"),
        ])
        .api_keys
    };
    config.db_pool_size = 24;
    let app = yeyak::startup::build(config).await.expect("yeyak starts");
    let base = format!("http://{}", app.addr);
    tokio::spawn(app.server);
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()
        .unwrap();

    // Warm the connection pools.
    let _ = race(&client, &base, (0..20).map(|i| (format!("warm-{i}"), json!({"title": "warm", "rooms": ["C"], "startsAt": slot(400 + i, 9).0, "endsAt": slot(400 + i, 9).1}))).collect()).await;

    println!("## 20 concurrent requests for one room and time, 10 rounds");
    println!("| round | 201 | 409 ROOM_TIME_TAKEN | other | slowest ms |");
    println!("| --- | --- | --- | --- | --- |");
    let mut worst = Duration::ZERO;
    for round in 0..10 {
        let (s, e) = slot(1 + round, 10);
        let body = json!({"title": "contention", "rooms": ["A"], "startsAt": s, "endsAt": e});
        let results = race(
            &client,
            &base,
            (0..20)
                .map(|i| (format!("c{round}-{i}"), body.clone()))
                .collect(),
        )
        .await;
        let created = results.iter().filter(|(s, _)| *s == 201).count();
        let taken = results.iter().filter(|(s, _)| *s == 409).count();
        let slowest = results.iter().map(|(_, d)| *d).max().unwrap();
        worst = worst.max(slowest);
        println!(
            "| {} | {created} | {taken} | {} | {:.1} |",
            round + 1,
            20 - created - taken,
            ms(slowest)
        );
    }
    println!("\nslowest response over all rounds: {:.1} ms\n", ms(worst));

    println!("## A+B against B+C at the same instant, 200 trials");
    let mut loser = Vec::new();
    let mut winner = Vec::new();
    let mut bad = 0;
    for trial in 0..200i64 {
        let (s, e) = slot(20 + trial / 12, 8 + (trial % 12) as u32);
        let results = race(
            &client,
            &base,
            vec![
                (
                    format!("ab-{trial}"),
                    json!({"title": "AB", "rooms": ["A", "B"], "startsAt": s, "endsAt": e}),
                ),
                (
                    format!("bc-{trial}"),
                    json!({"title": "BC", "rooms": ["B", "C"], "startsAt": s, "endsAt": e}),
                ),
            ],
        )
        .await;
        let mut statuses: Vec<u16> = results.iter().map(|(s, _)| *s).collect();
        statuses.sort();
        if statuses != [201, 409] {
            bad += 1;
        }
        for (status, d) in results {
            if status == 409 {
                loser.push(d)
            } else {
                winner.push(d)
            }
        }
    }
    loser.sort();
    winner.sort();
    let pct = |v: &[Duration], p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    println!("trials with other than one 201 + one 409: {bad}");
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
    println!(
        "\ntransaction retries (40P01/40001): {}",
        app.state.db_stats.retries()
    );

    // Clean up the bench database.
    drop(client);
    if let Ok(mut admin) = yeyak::db::establish(&format!("{pg}/postgres")).await {
        use diesel_async::RunQueryDsl;
        let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"))
            .execute(&mut admin)
            .await;
    }
}
