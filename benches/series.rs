//! Recurring series (issue 14), side by side in one run:
//! - one series of 52 weekly occurrences on A+B+C in one request against 52
//!   single `POST /api/bookings` of the same shape: time and SQL statements;
//! - 20 overlapping series racing for the same dates: slowest answer and
//!   outcome counts (fail mode, then skip mode);
//! - the week page with 40 rooms and 1,000 bookings: p50/p99 and statements.
//!
//! Run: `cargo bench --bench series`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

mod common;
use common::{ms, pct, Bench, KEY};

/// A Monday far ahead, 09:00 Seoul as UTC, plus `weeks` and `hours`.
fn at(weeks: i64, hours: i64) -> String {
    let base = chrono::DateTime::parse_from_rfc3339("2031-01-06T00:00:00Z").unwrap().with_timezone(&chrono::Utc);
    (base + chrono::Duration::weeks(weeks) + chrono::Duration::hours(hours)).to_rfc3339()
}

async fn post(
    bench: &Bench,
    path: &str,
    owner: &str,
    idem: &str,
    body: &serde_json::Value,
) -> (u16, Duration, serde_json::Value) {
    let t = Instant::now();
    let res = bench
        .client
        .post(format!("{}{path}", bench.base))
        .bearer_auth(KEY)
        .header("X-Reservation-Owner", owner)
        .header("Idempotency-Key", idem)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let body = res.json().await.unwrap_or_default();
    (status, t.elapsed(), body)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bench = Bench::start_with(|c| c.background = false).await;
    let rounds = 6;
    let (mut series_t, mut singles_t) = (Vec::new(), Vec::new());
    let (mut series_s, mut singles_s) = (0u64, 0u64);
    for round in 0..rounds {
        let hour = round as i64; // each round its own hour: no conflicts
                                 // One series request.
        let before = bench.state.db_stats.statements();
        let body = json!({"title": "주간 회의", "rooms": ["A", "B", "C"], "startsAt": at(0, hour), "endsAt": at(0, hour) .replace(":00:00", ":30:00"),
                          "recurrence": "FREQ=WEEKLY;COUNT=52"});
        let (status, t, created) = post(&bench, "/api/series", "alice", &format!("series-{round}"), &body).await;
        assert_eq!(status, 201, "{created}");
        assert_eq!(created["created"].as_array().unwrap().len(), 52);
        series_t.push(t);
        series_s += bench.state.db_stats.statements() - before;
        // 52 single requests of the same shape, another hour.
        let before = bench.state.db_stats.statements();
        let started = Instant::now();
        for w in 0..52 {
            let s = at(w, 12 + hour);
            let e = s.replace(":00:00", ":30:00");
            let (status, _, b) = post(
                &bench,
                "/api/bookings",
                "alice",
                &format!("single-{round}-{w}"),
                &json!({"title": "주간 회의", "rooms": ["A", "B", "C"], "startsAt": s, "endsAt": e}),
            )
            .await;
            assert_eq!(status, 201, "{b}");
        }
        singles_t.push(started.elapsed());
        singles_s += bench.state.db_stats.statements() - before;
    }
    series_t.sort();
    singles_t.sort();
    let (a, b) = (ms(pct(&series_t, 0.5)), ms(pct(&singles_t, 0.5)));
    println!("## 52 weekly occurrences on A+B+C ({rounds} rounds, alternating)");
    println!("| how | median ms | slowest ms | SQL statements |");
    println!("| --- | --- | --- | --- |");
    println!(
        "| one `POST /api/series` | {a:.1} | {:.1} | {} |",
        ms(*series_t.last().unwrap()),
        series_s / rounds as u64
    );
    println!(
        "| 52 × `POST /api/bookings` | {b:.1} | {:.1} | {} |",
        ms(*singles_t.last().unwrap()),
        singles_s / rounds as u64
    );
    println!("\nseries / singles: time {:.3}, statements {:.3}\n", a / b, series_s as f64 / singles_s as f64);

    // 20 series racing for the same dates (each on A+B or B+C, so all overlap on B).
    println!("## 20 overlapping series at once (52 weekly dates each)");
    println!("| mode | 201 | 409 SERIES_CONFLICT | other | slowest ms | dates booked | dates skipped |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let bench = Arc::new(bench);
    for (mode, hour) in [("fail", 20i64), ("skip", 22)] {
        let barrier = Arc::new(tokio::sync::Barrier::new(20));
        let tasks: Vec<_> = (0..20)
            .map(|i| {
                let (bench, barrier) = (bench.clone(), barrier.clone());
                tokio::spawn(async move {
                    let rooms = if i % 2 == 0 { json!(["A", "B"]) } else { json!(["B", "C"]) };
                    let body = json!({"title": format!("경합 {i}"), "rooms": rooms, "startsAt": at(0, hour),
                        "endsAt": at(0, hour + 1), "recurrence": "FREQ=WEEKLY;COUNT=52", "onConflict": mode});
                    barrier.wait().await;
                    post(&bench, "/api/series", &format!("racer-{i}"), &format!("race-{mode}-{i}"), &body).await
                })
            })
            .collect();
        let results: Vec<_> = futures_util::future::join_all(tasks).await.into_iter().map(|r| r.unwrap()).collect();
        let ok = results.iter().filter(|r| r.0 == 201).count();
        let conflict = results.iter().filter(|r| r.0 == 409 && r.2["code"] == "SERIES_CONFLICT").count();
        let slowest = results.iter().map(|r| r.1).max().unwrap();
        let booked: usize =
            results.iter().filter(|r| r.0 == 201).map(|r| r.2["created"].as_array().unwrap().len()).sum();
        let skipped: usize =
            results.iter().filter(|r| r.0 == 201).map(|r| r.2["skipped"].as_array().unwrap().len()).sum();
        println!("| {mode} | {ok} | {conflict} | {} | {:.1} | {booked} | {skipped} |", 20 - ok - conflict, ms(slowest));
    }

    // Week page: 40 rooms in one area, 1,000 bookings that week.
    bench
        .sql(
            "INSERT INTO room (code, name, area, position) SELECT 'W' || i, '주간 ' || i, '주간', i FROM generate_series(1, 40) i;
             WITH slots AS (SELECT 'W' || (1 + n % 40) AS code, n FROM generate_series(0, 999) n),
             ins AS (
               INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at)
               SELECT '회의 ' || code || '-' || n, '직원', 'bench',
                      TIMESTAMPTZ '2031-03-03 08:00:00+09' + (n / 40 % 7) * interval '1 day' + (n / 280) * interval '2 hours',
                      TIMESTAMPTZ '2031-03-03 08:00:00+09' + (n / 40 % 7) * interval '1 day' + (n / 280) * interval '2 hours' + interval '90 minutes',
                      now(), now()
                 FROM slots
               RETURNING id, title, starts_at, ends_at)
             INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
             SELECT id, split_part(substr(title, 4), '-', 1), starts_at, ends_at, true FROM ins;
             INSERT INTO booking_event (reservation_id, at, action, actor, changes)
             SELECT id, now(), 'created', '직원', '{}' FROM reservation WHERE organizer_digest = 'bench';
             ANALYZE;",
        )
        .await;
    let client = bench.signed_in().await;
    let path = format!("{}/rooms/week?date=2031-03-05&area=%EC%A3%BC%EA%B0%84", bench.base);
    let body = client.get(&path).send().await.unwrap().text().await.unwrap();
    assert!(body.matches("class=\"entry").count() >= 1000, "every booking shown");
    let mut lat = Vec::new();
    let before = bench.state.db_stats.statements();
    for _ in 0..200 {
        let t = Instant::now();
        let res = client.get(&path).send().await.unwrap();
        assert_eq!(res.status().as_u16(), 200);
        let _ = res.bytes().await.unwrap();
        lat.push(t.elapsed());
    }
    let statements = (bench.state.db_stats.statements() - before) as f64 / 200.0;
    lat.sort();
    println!("## Week page, 40 rooms × 7 days, 1,000 bookings (200 sequential renders)");
    println!("| p50 ms | p99 ms | SQL statements per render | HTML bytes |");
    println!("| --- | --- | --- | --- |");
    println!("| {:.2} | {:.2} | {statements:.2} | {} |", ms(pct(&lat, 0.5)), ms(pct(&lat, 0.99)), body.len());
    match Arc::try_unwrap(bench) {
        Ok(b) => b.finish().await,
        Err(_) => eprintln!("bench database left behind"),
    }
}
