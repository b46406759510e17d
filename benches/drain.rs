//! The sweeper as the building's clock (SPEC §11, issue 16). At default
//! settings (2,000 ms tick, 5 s budget, 32 resources per tick):
//!
//! 1. 10,000 holds on 10,000 resources nobody waits for fall due at the same
//!    instant while 8 clients keep taking holds elsewhere: holds/s of the
//!    drain, and the clients' p50/p99 while idle (before the instant) and
//!    during the drain. Once with the per-resource path alone (measured over
//!    a fixed window: it would need ~10 minutes), once with the backlog drain.
//! 2. 1,000 no-show bookings of check-in rooms whose grace ends at the same
//!    instant: seconds until the sweeper has released them all.
//!
//! Run: `cargo bench --bench drain` (`DRAIN_PART=holds` or `no-shows` for one half).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

mod common;
use common::{ms, pct, Bench};

const CLIENTS: usize = 8;
const BACKLOG: usize = 10_000;
/// From inserting the backlog to its holds falling due.
const LEAD: Duration = Duration::from_secs(8);
/// The clients' idle window, before the backlog is inserted.
const IDLE: Duration = Duration::from_secs(5);
/// How long the per-resource path alone is watched.
const OLD_PATH_WINDOW: Duration = Duration::from_secs(30);

/// 10,000 resources of one unit, each full with one hold that falls due
/// `LEAD` after the transaction starts.
fn backlog_sql() -> String {
    format!(
        "BEGIN;
INSERT INTO capacity_resource (code, name, capacity, occupied_count, revision)
SELECT 'backlog-' || g, 'backlog', 1, 1, 1 FROM generate_series(1, {BACKLOG}) g;
INSERT INTO capacity_hold (resource_id, owner_digest, state, quantity, policy_version, expires_at, created_at, updated_at)
SELECT id, 'bench', 'HELD', 1, 1, now() + interval '{} ms', now(), now()
  FROM capacity_resource WHERE code LIKE 'backlog-%';
COMMIT;",
        LEAD.as_millis()
    )
}

/// One completed request: when it finished and how long it took.
type Sample = (Instant, Duration);

/// `n`, p50 and p99 of the requests that finished within `[from, to)`.
fn window(samples: &[Sample], from: Instant, to: Instant) -> String {
    let mut lat: Vec<Duration> = samples.iter().filter(|(t, _)| *t >= from && *t < to).map(|(_, d)| *d).collect();
    lat.sort();
    if lat.is_empty() {
        return "– | – | –".into();
    }
    format!("{} | {:.1} | {:.1}", lat.len(), ms(pct(&lat, 0.5)), ms(pct(&lat, 0.99)))
}

async fn drain(with_backlog_drain: bool) {
    let bench = Arc::new(Bench::start().await);
    bench.state.sweeper.set_backlog_drain(with_backlog_drain);
    bench
        .sql("INSERT INTO capacity_resource (code, name, capacity) SELECT 'load-' || g, 'load', 1000000 FROM generate_series(1, 8) g")
        .await;
    let first_load = bench.count("SELECT min(id) AS n FROM capacity_resource WHERE code LIKE 'load-%'").await;
    let stop = Arc::new(AtomicBool::new(false));
    let samples: Arc<Mutex<Vec<Sample>>> = Arc::default();
    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (bench, stop, samples) = (bench.clone(), stop.clone(), samples.clone());
            tokio::spawn(async move {
                let id = first_load + c as i64;
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let (status, took) = bench
                        .post(&format!("/api/resources/{id}/holds"), &format!("c{c}"), &format!("l{c}-{n}"), &json!({}))
                        .await;
                    assert_eq!(status, 201);
                    samples.lock().unwrap().push((Instant::now(), took));
                    n += 1;
                }
            })
        })
        .collect();
    // Idle: the clients alone (after a second of warm-up), before the backlog exists.
    tokio::time::sleep(IDLE + Duration::from_secs(1)).await;
    let inserted = Instant::now();
    bench.sql(&backlog_sql()).await;
    let due_at = inserted + LEAD;

    let held = "SELECT count(*) AS n FROM capacity_hold WHERE owner_digest = 'bench' AND state = 'HELD'";
    tokio::time::sleep_until(due_at.into()).await;
    let deadline = due_at + if with_backlog_drain { Duration::from_secs(120) } else { OLD_PATH_WINDOW };
    let mut left = BACKLOG as i64;
    // The first poll that sees an expired hold: the drain's own time starts
    // about there (before it, the tick's phase: up to one interval).
    let mut first_seen = None;
    while Instant::now() < deadline && left > 0 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        left = bench.count(held).await;
        if left < BACKLOG as i64 && first_seen.is_none() {
            first_seen = Some(Instant::now());
        }
    }
    let ended = Instant::now();
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.await.unwrap();
    }
    let expired = BACKLOG as i64 - left;
    let took = (ended - due_at).as_secs_f64();
    let working = first_seen.map_or(0.0, |t| (ended - t).as_secs_f64());
    let samples = samples.lock().unwrap().clone();
    let idle = window(&samples, started + Duration::from_secs(1), inserted);
    let during = window(&samples, due_at, ended);
    let broken = {
        let mut conn = yeyak::db::establish(&bench.db_url()).await.unwrap();
        let report = yeyak::consistency::run(&mut conn, bench.state.check_context()).await.unwrap();
        report.checks.iter().filter(|c| c.count > 0 && !c.name.starts_with("overdue_")).count()
    };
    println!(
        "| {} | {expired} | {took:.1} | {:.0} | {working:.1} | {idle} | {during} | {broken} |",
        if with_backlog_drain { "backlog drain + hand-off" } else { "per-resource only (before)" },
        expired as f64 / took,
    );
    if let Ok(bench) = Arc::try_unwrap(bench) {
        bench.finish().await;
    }
}

/// 1,000 check-in rooms, each with a booking nobody checked in to whose
/// grace (15 min) ends `LEAD` after the transaction starts; one in ten is
/// linked to a second room.
fn no_shows_sql() -> String {
    format!(
        "BEGIN;
INSERT INTO room (code, name, position, check_in_required)
SELECT 'N' || g, 'No-show ' || g, 100 + g, true FROM generate_series(1, 1100) g;
INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at, check_in_required)
SELECT 'stand-up ' || g, 'bench', 'bench', now() - interval '15 minutes' + interval '{lead} ms',
       now() + interval '45 minutes' + interval '{lead} ms', now(), now(), true
  FROM generate_series(1, 1000) g ORDER BY g;
INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
SELECT id, 'N' || (id - (SELECT min(id) FROM reservation) + 1), starts_at, ends_at, true FROM reservation;
INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
SELECT id, 'N' || (1000 + (id - (SELECT min(id) FROM reservation)) / 10 + 1), starts_at, ends_at, true
  FROM reservation WHERE (id - (SELECT min(id) FROM reservation)) % 10 = 0;
INSERT INTO booking_event (reservation_id, at, action, actor, changes)
SELECT id, now(), 'created', 'bench', '{{}}' FROM reservation;
COMMIT;",
        lead = LEAD.as_millis()
    )
}

async fn no_shows() {
    let bench = Bench::start().await;
    let inserted = Instant::now();
    bench.sql(&no_shows_sql()).await;
    let due_at = inserted + LEAD;
    tokio::time::sleep_until(due_at.into()).await;
    let released = "SELECT count(*) AS n FROM reservation WHERE status = 'RELEASED'";
    let deadline = due_at + Duration::from_secs(120);
    let mut n = 0;
    while Instant::now() < deadline && n < 1000 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        n = bench.count(released).await;
    }
    let took = due_at.elapsed();
    let notices = bench.count("SELECT count(*) AS n FROM notification_outbox WHERE kind = 'booking.released'").await;
    let shortened = bench
        .count(
            "SELECT count(*) AS n FROM reservation_room s JOIN reservation r ON r.id = s.reservation_id
          WHERE r.status = 'RELEASED' AND s.ends_at = r.ends_at AND r.ends_at < r.starts_at + interval '1 hour'",
        )
        .await;
    let events = bench.count("SELECT count(*) AS n FROM booking_event WHERE action = 'released'").await;
    println!(
        "| 1,000 no-shows (100 linked to a 2nd room) | {n} | {:.2} | {events} | {notices} | {shortened} |",
        took.as_secs_f64()
    );
    bench.finish().await;
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // `DRAIN_PART=holds` or `DRAIN_PART=no-shows` runs one half only.
    let part = std::env::var("DRAIN_PART").unwrap_or_default();
    if part != "no-shows" {
        println!(
            "## Drain: {BACKLOG} holds on {BACKLOG} resources nobody waits for, due at once; {CLIENTS} clients taking holds"
        );
        println!("| path | holds expired | s from due | holds/s | s from first expiry seen | idle n | idle p50 ms | idle p99 ms | drain n | drain p50 ms | drain p99 ms | invariants broken |");
        println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        drain(false).await;
        drain(true).await;
        println!();
    }
    if part != "holds" {
        println!("## No-show release: bookings whose grace ends at the same instant");
        println!("| case | released | s from due | history rows | outbox notices | room copies shortened |");
        println!("| --- | --- | --- | --- | --- | --- |");
        no_shows().await;
    }
}
