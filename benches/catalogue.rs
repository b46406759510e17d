//! Rooms as data (issue 13): the day page of a 60-room area with 600
//! bookings that day against the default 3-room area with 30, side by side
//! in one run (time and SQL statements per render), and the free-room search
//! over 200 rooms and 2,000 bookings, with its plan.
//!
//! Run: `cargo bench --bench catalogue`.

use std::time::{Duration, Instant};

mod common;
use common::{ms, pct, Bench, KEY};

const DAY: &str = "2030-06-12";

/// 30 bookings on A, B, C (10 each, hourly from 08:00, 50 minutes).
/// 60 rooms in area 대형 with 10 bookings each the same day (600).
/// 200 rooms in area 검색 with 10 bookings each (2,000), spread so that about
/// a third are busy at 10:00-11:00.
const DATA: &str = "
INSERT INTO area (code, name, position, time_zone) VALUES ('대형', '대형', 2, 'Asia/Seoul'), ('검색', '검색', 3, 'Asia/Seoul');
INSERT INTO room (code, name, area, capacity, equipment, position)
SELECT 'L' || i, '대형 ' || i, '대형', 4 + i % 12,
       CASE i % 4 WHEN 0 THEN '{}'::text[] WHEN 1 THEN '{projector}' WHEN 2 THEN '{projector,video}' ELSE '{whiteboard}' END, i
  FROM generate_series(1, 60) i;
INSERT INTO room (code, name, area, capacity, equipment, position)
SELECT 'S' || i, '검색 ' || i, '검색', 2 + i % 20,
       CASE i % 4 WHEN 0 THEN '{}'::text[] WHEN 1 THEN '{projector}' WHEN 2 THEN '{projector,video}' ELSE '{video,whiteboard}' END, i
  FROM generate_series(1, 200) i;
WITH slots AS (
  SELECT r.code, h FROM room r, generate_series(0, 9) h WHERE r.code IN ('A', 'B', 'C') OR r.code LIKE 'L%'
  UNION ALL
  SELECT r.code, h + (substr(r.code, 2)::int % 3) FROM room r, generate_series(0, 9) h WHERE r.code LIKE 'S%'),
ins AS (
  INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at)
  SELECT '회의 ' || code || '-' || h, '직원', 'bench',
         (DATE '2030-06-12')::timestamp AT TIME ZONE 'Asia/Seoul' + interval '8 hours' + h * interval '1 hour',
         (DATE '2030-06-12')::timestamp AT TIME ZONE 'Asia/Seoul' + interval '8 hours' + h * interval '1 hour' + interval '50 minutes',
         now(), now()
    FROM slots
  RETURNING id, title, starts_at, ends_at)
INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
SELECT id, split_part(substr(title, 4), '-', 1), starts_at, ends_at, true FROM ins;
ANALYZE;";

struct Run {
    lat: Vec<Duration>,
    statements: u64,
    bytes: usize,
}

async fn get(bench: &Bench, client: &reqwest::Client, path: &str, run: &mut Run) {
    let before = bench.state.db_stats.statements();
    let t = Instant::now();
    let res = client.get(format!("{}{path}", bench.base)).bearer_auth(KEY).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 200, "{path}");
    run.bytes = res.bytes().await.unwrap().len();
    run.lat.push(t.elapsed());
    run.statements += bench.state.db_stats.statements() - before;
}

fn row(label: &str, run: &mut Run) -> (f64, f64) {
    run.lat.sort();
    let (p50, p99) = (ms(pct(&run.lat, 0.5)), ms(pct(&run.lat, 0.99)));
    println!(
        "| {label} | {} | {p50:.2} | {p99:.2} | {:.2} | {} |",
        run.lat.len(),
        run.statements as f64 / run.lat.len() as f64,
        run.bytes
    );
    (p50, p99)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bench = Bench::start_with(|c| c.background = false).await;
    bench.sql(DATA).await;
    let client = bench.signed_in().await;
    // The first area in sort order is 검색 (200 rooms); 본관 is the 3-room seed area.
    let small = format!("/rooms?date={DAY}&area=%EB%B3%B8%EA%B4%80");
    let large = format!("/rooms?date={DAY}&area=%EB%8C%80%ED%98%95");
    let n = 400;
    let (mut s, mut l) = (Run { lat: vec![], statements: 0, bytes: 0 }, Run { lat: vec![], statements: 0, bytes: 0 });
    for _ in 0..30 {
        get(&bench, &client, &small, &mut Run { lat: vec![], statements: 0, bytes: 0 }).await;
        get(&bench, &client, &large, &mut Run { lat: vec![], statements: 0, bytes: 0 }).await;
    }
    // Alternating, so that both see the same machine.
    for _ in 0..n {
        get(&bench, &client, &small, &mut s).await;
        get(&bench, &client, &large, &mut l).await;
    }
    println!("## Day page by area, alternating renders from one signed-in browser");
    println!("| page | renders | p50 ms | p99 ms | SQL statements per render | HTML bytes |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let (s50, s99) = row("본관: 3 rooms, 30 bookings", &mut s);
    let (l50, l99) = row("대형: 60 rooms, 600 bookings", &mut l);
    println!("\nratio 60-room / 3-room: p50 {:.2}×, p99 {:.2}×\n", l50 / s50, l99 / s99);

    let window = "from=2030-06-12T18%3A00%3A00%2B09%3A00&to=2030-06-12T19%3A00%3A00%2B09%3A00";
    let searches = [
        ("any room in 검색", format!("/api/rooms/free?{window}&area=%EA%B2%80%EC%83%89")),
        ("8 seats + projector, every area", format!("/api/rooms/free?{window}&minCapacity=8&equipment=projector")),
        (
            "12 seats + projector + video in 검색",
            format!(
                "/api/rooms/free?{window}&minCapacity=12&equipment=projector&equipment=video&area=%EA%B2%80%EC%83%89"
            ),
        ),
    ];
    println!("## Free-room search over 263 rooms (200 in 검색) and 2,630 bookings that day");
    println!("| search | requests | p50 ms | p99 ms | SQL statements per request | JSON bytes |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (label, path) in &searches {
        let mut run = Run { lat: vec![], statements: 0, bytes: 0 };
        for _ in 0..30 {
            get(&bench, &client, path, &mut Run { lat: vec![], statements: 0, bytes: 0 }).await;
        }
        for _ in 0..n {
            get(&bench, &client, path, &mut run).await;
        }
        row(label, &mut run);
    }
    // The plan of the search, as PostgreSQL runs it.
    let explain = yeyak::catalogue::store::FREE_ROOMS_SQL
        .replace("$1", "'2030-06-12T18:00:00+09:00'::timestamptz")
        .replace("$2", "'2030-06-12T19:00:00+09:00'::timestamptz")
        .replace("$3", "8")
        .replace("$4", "ARRAY['projector']::text[]")
        .replace("$5::text", "NULL::text")
        .replace("$5", "NULL")
        .replace("$6", "100");
    let mut conn = yeyak::db::establish(&bench.db_url()).await.unwrap();
    #[derive(diesel::QueryableByName)]
    struct Line {
        #[diesel(sql_type = diesel::sql_types::Text, column_name = "QUERY PLAN")]
        line: String,
    }
    use diesel_async::RunQueryDsl;
    let plan: Vec<Line> =
        diesel::sql_query(format!("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {explain}")).load(&mut conn).await.unwrap();
    println!("\n```text");
    for l in plan {
        println!("{}", l.line);
    }
    println!("```");
    bench.finish().await;
}
