//! The cost of the booking rules (issue 17): bookings/s and SQL statements
//! per booking with and without a quota in force (`YEYAK_MAX_ACTIVE_BOOKINGS`),
//! side by side in one run (alternating rounds on two processes, each on its
//! own database), 16 clients each booking distinct slots as their own owner.
//!
//! Run: `cargo bench --bench rules`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

mod common;
use common::{ms, pct, Bench};

const CLIENTS: usize = 16;
const ROUND: Duration = Duration::from_secs(4);

/// One round: every client books consecutive half hours in its own room
/// column of the far future until time is up.
async fn round(bench: &Arc<Bench>, round: usize, counter: &Arc<AtomicU64>) -> (u64, Vec<Duration>, u64) {
    let before = bench.state.db_stats.statements();
    let deadline = Instant::now() + ROUND;
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (bench, counter) = (bench.clone(), counter.clone());
            tokio::spawn(async move {
                let mut lat = Vec::new();
                while Instant::now() < deadline {
                    let n = counter.fetch_add(1, Ordering::Relaxed) as i64;
                    let s = chrono::DateTime::parse_from_rfc3339("2032-01-01T00:00:00Z").unwrap()
                        + chrono::Duration::minutes(30 * n);
                    let body = json!({"title": "측정", "rooms": [format!("Q{}", c % 8)],
                        "startsAt": s.to_rfc3339(), "endsAt": (s + chrono::Duration::minutes(30)).to_rfc3339()});
                    let (status, t) =
                        bench.post("/api/bookings", &format!("owner-{c}"), &format!("r{round}-{n}"), &body).await;
                    assert_eq!(status, 201);
                    lat.push(t);
                }
                lat
            })
        })
        .collect();
    let mut lat: Vec<Duration> = Vec::new();
    for t in tasks {
        lat.extend(t.await.unwrap());
    }
    let statements = bench.state.db_stats.statements() - before;
    (lat.len() as u64, lat, statements)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // Rooms name an area row (SPEC §24); RULES_AREA_CLOSED=1 makes the area
    // close on holidays, which adds the holiday check to every booking.
    let closed = if std::env::var_os("RULES_AREA_CLOSED").is_some() {
        "INSERT INTO holiday_calendar (code, name) VALUES ('kr', 'kr');
         INSERT INTO holiday (calendar, day, name) VALUES ('kr', '2031-12-25', '성탄절');
         UPDATE area SET closed_on_holidays = true, holiday_calendar = 'kr' WHERE code = '측정';"
    } else {
        ""
    };
    let rooms = format!(
        "INSERT INTO area (code, name, position) VALUES ('측정', '측정', 100);
                 INSERT INTO room (code, name, area, position, horizon_days, max_duration_minutes)
                 SELECT 'Q' || i, '측정 ' || i, '측정', i + 1, 3650, 60 FROM generate_series(0, 7) i; {closed}"
    );
    let rooms = rooms.as_str();
    let plain = Arc::new(Bench::start_with(|c| c.background = false).await);
    let quota = Arc::new(
        Bench::start_with(|c| {
            c.background = false;
            c.max_active_bookings = Some(1_000_000);
        })
        .await,
    );
    plain.sql(rooms).await;
    quota.sql(rooms).await;
    let (pc, qc) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut results: [(u64, Vec<Duration>, u64); 2] = [(0, vec![], 0), (0, vec![], 0)];
    for r in 0..4 {
        // Alternate which goes first.
        let order: [(usize, &Arc<Bench>, &Arc<AtomicU64>); 2] =
            if r % 2 == 0 { [(0, &plain, &pc), (1, &quota, &qc)] } else { [(1, &quota, &qc), (0, &plain, &pc)] };
        for (i, bench, counter) in order {
            let (n, lat, st) = round(bench, r, counter).await;
            results[i].0 += n;
            results[i].1.extend(lat);
            results[i].2 += st;
        }
    }
    println!(
        "## Booking path with and without a quota ({CLIENTS} clients, 4 alternating rounds of {}s each)",
        ROUND.as_secs()
    );
    println!("| quota | bookings | bookings/s | p50 ms | p99 ms | SQL statements per booking |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let secs = 4.0 * ROUND.as_secs_f64();
    let mut rates = Vec::new();
    for (label, (n, lat, st)) in ["none", "1,000,000 per organizer"].iter().zip(results.iter_mut()) {
        lat.sort();
        rates.push(*n as f64 / secs);
        println!(
            "| {label} | {n} | {:.0} | {:.2} | {:.2} | {:.2} |",
            *n as f64 / secs,
            ms(pct(lat, 0.5)),
            ms(pct(lat, 0.99)),
            *st as f64 / *n as f64
        );
    }
    println!("\nwith quota / without: {:.3}", rates[1] / rates[0]);
    for b in [plain, quota] {
        if let Ok(b) = Arc::try_unwrap(b) {
            b.finish().await;
        }
    }
}
