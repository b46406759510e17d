//! Day and week page rendering (issue: staff UI; the week since issue 39): time
//! to render a day (and its week) of 3 rooms with
//! 300 bookings in the week around it, and SQL statements per render (the
//! pool's connections count every statement they start).
//!
//! Run: `cargo bench --bench pages`.

use std::time::{Duration, Instant};

mod common;
use common::{ms, pct, Bench};

/// 300 bookings over 7 days: 3 rooms × 14 slots of 45 minutes a day (294),
/// plus 6 linked A+B bookings in the evenings; none overlap.
const WEEK: &str = "
WITH days AS (SELECT d FROM generate_series(-3, 3) d),
slots AS (SELECT s FROM generate_series(0, 13) s),
rooms AS (SELECT code FROM room),
ins AS (
  INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at)
  SELECT '회의 ' || d || '-' || s || '-' || code, '직원', 'bench',
         (DATE '2030-06-12' + d)::timestamp AT TIME ZONE 'Asia/Seoul' + interval '8 hours' + s * interval '45 minutes',
         (DATE '2030-06-12' + d)::timestamp AT TIME ZONE 'Asia/Seoul' + interval '8 hours' + s * interval '45 minutes' + interval '40 minutes',
         now(), now()
    FROM days, slots, rooms
  RETURNING id, title, starts_at, ends_at)
INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
SELECT id, right(title, 1), starts_at, ends_at, true FROM ins;
WITH ins AS (
  INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at)
  SELECT '저녁 ' || d, '직원', 'bench',
         (DATE '2030-06-12' + d)::timestamp AT TIME ZONE 'Asia/Seoul' + interval '20 hours',
         (DATE '2030-06-12' + d)::timestamp AT TIME ZONE 'Asia/Seoul' + interval '21 hours', now(), now()
    FROM generate_series(-3, 2) d
  RETURNING id, starts_at, ends_at)
INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
SELECT id, r, starts_at, ends_at, true FROM ins, (VALUES ('A'), ('B')) v(r);";

async fn renders(
    bench: &Bench,
    client: &reqwest::Client,
    page: &str,
    date: &str,
    n: usize,
) -> (Vec<Duration>, f64, usize) {
    let before = bench.state.db_stats.statements();
    let mut lat = Vec::with_capacity(n);
    let mut size = 0;
    for _ in 0..n {
        let t = Instant::now();
        let res = client.get(format!("{}{page}?date={date}", bench.base)).send().await.unwrap();
        assert_eq!(res.status().as_u16(), 200);
        size = res.bytes().await.unwrap().len();
        lat.push(t.elapsed());
    }
    let queries = (bench.state.db_stats.statements() - before) as f64 / n as f64;
    lat.sort();
    (lat, queries, size)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bench = Bench::start_with(|c| c.background = false).await;
    bench.sql(WEEK).await;
    let client = bench.signed_in().await;
    renders(&bench, &client, "/rooms", "2030-06-12", 50).await; // warm-up
    renders(&bench, &client, "/rooms/week", "2030-06-12", 50).await; // warm-up
    println!("## Day and week page render, sequential requests from one signed-in browser");
    println!("| day | bookings that day | renders | p50 ms | p99 ms | SQL statements per render | HTML bytes |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for (page, date, label) in [
        ("/rooms", "2030-06-12", "45 (week of 300)"),
        ("/rooms", "2030-07-01", "0"),
        ("/rooms/week", "2030-06-12", "week: 300"),
        ("/rooms/week", "2030-07-01", "week: 0"),
    ] {
        let (lat, queries, size) = renders(&bench, &client, page, date, 500).await;
        println!(
            "| {page} {date} | {label} | 500 | {:.2} | {:.2} | {queries:.2} | {size} |",
            ms(pct(&lat, 0.5)),
            ms(pct(&lat, 0.99))
        );
    }
    bench.finish().await;
}
