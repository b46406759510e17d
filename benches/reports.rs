//! Utilisation reports (issues 17 and 39): a year of 50 rooms × 10 bookings
//! a day (182,500 bookings; 1 in 20 cancelled, 1 in 25 released after 16
//! minutes) in two areas — 25 rooms in Seoul with 15 weekday holidays, 25
//! in New York with 08:00–17:00 hours — inserted with set-based SQL;
//! p50/p99 of `/admin/reports` (signed-in admin) and of both CSV downloads
//! (admin key), over four weeks and over the whole year, all areas and one
//! (`?area=`), with SQL statements per request and response size.
//!
//! Run: `cargo bench --bench reports`.

use std::time::{Duration, Instant};

mod common;
use common::{ms, pct, Bench, ADMIN_KEY};

/// Two areas: `측정` (Asia/Seoul, the default hours, a holiday calendar of
/// 15 Wednesdays) and `측정-뉴욕` (America/New_York, Monday–Friday
/// 08:00–17:00); 25 rooms each; 10 bookings of 45 minutes every 50 minutes
/// from 08:00 local, every day of 2030, each room copy beside its booking.
const YEAR: &str = "
INSERT INTO holiday_calendar (code, name) VALUES ('측정-휴일', '측정 휴일');
INSERT INTO holiday (calendar, day, name)
SELECT '측정-휴일', DATE '2030-01-02' + 21 * k, '휴일 ' || k FROM generate_series(0, 14) k;
INSERT INTO area (code, name, time_zone, working_hours, holiday_calendar, position) VALUES
    ('측정', '측정', NULL, DEFAULT, '측정-휴일', 100),
    ('측정-뉴욕', '측정 뉴욕', 'America/New_York',
     '{\"mon\": [\"08:00\", \"17:00\"], \"tue\": [\"08:00\", \"17:00\"], \"wed\": [\"08:00\", \"17:00\"],
       \"thu\": [\"08:00\", \"17:00\"], \"fri\": [\"08:00\", \"17:00\"], \"sat\": null, \"sun\": null}', NULL, 101);
INSERT INTO room (code, name, area, position)
SELECT 'R' || lpad(i::text, 2, '0'), '측정실 ' || i, CASE WHEN i <= 25 THEN '측정' ELSE '측정-뉴욕' END, i
  FROM generate_series(1, 50) i;
CREATE TEMP TABLE plan AS
SELECT row_number() OVER () + 1000000 AS id, code, start,
       CASE WHEN n % 25 = 1 THEN 'RELEASED' WHEN n % 20 = 0 THEN 'CANCELLED' ELSE 'CONFIRMED' END AS status
  FROM (SELECT 'R' || lpad(i::text, 2, '0') AS code,
               (DATE '2030-01-01' + d + time '08:00')
                   AT TIME ZONE CASE WHEN i <= 25 THEN 'Asia/Seoul' ELSE 'America/New_York' END
                   + s * interval '50 minutes' AS start,
               d * 500 + s * 50 + i AS n
          FROM generate_series(0, 364) d, generate_series(0, 9) s, generate_series(1, 50) i) p;
INSERT INTO reservation (id, title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at,
                         status, cancelled_at, released_at, check_in_required)
OVERRIDING SYSTEM VALUE
SELECT id, '회의 ' || id, '직원', 'bench', start,
       start + CASE WHEN status = 'RELEASED' THEN interval '16 minutes' ELSE interval '45 minutes' END,
       start - interval '7 days', start,
       status, CASE WHEN status = 'CANCELLED' THEN start - interval '1 day' END,
       CASE WHEN status = 'RELEASED' THEN start + interval '15 minutes' END,
       -- Only a check-in booking is released (constraint reservation_released_was_no_show).
       status = 'RELEASED'
  FROM plan;
INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
SELECT p.id, p.code, r.starts_at, r.ends_at, p.status <> 'CANCELLED' FROM plan p JOIN reservation r USING (id);
SELECT setval(pg_get_serial_sequence('reservation', 'id'), 2000000);
ANALYZE area; ANALYZE holiday; ANALYZE room; ANALYZE reservation; ANALYZE reservation_room;";

struct Run {
    lat: Vec<Duration>,
    statements: f64,
    bytes: usize,
}

async fn run(bench: &Bench, client: &reqwest::Client, path: &str, key: Option<&str>, n: usize) -> Run {
    let before = bench.state.db_stats.statements();
    let mut lat = Vec::with_capacity(n);
    let mut bytes = 0;
    for _ in 0..n {
        let mut req = client.get(format!("{}{path}", bench.base));
        if let Some(key) = key {
            req = req.bearer_auth(key);
        }
        let t = Instant::now();
        let res = req.send().await.unwrap();
        assert_eq!(res.status().as_u16(), 200, "{path}");
        bytes = res.bytes().await.unwrap().len();
        lat.push(t.elapsed());
    }
    lat.sort();
    let statements = (bench.state.db_stats.statements() - before) as f64 / n as f64;
    Run { lat, statements, bytes }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bench = Bench::start_with(|c| c.background = false).await;
    let t = Instant::now();
    bench.sql(YEAR).await;
    eprintln!("inserted a year of bookings in {:.1} s", t.elapsed().as_secs_f64());
    let browser = bench.signed_in().await;
    let api = reqwest::Client::new();
    let ranges =
        [("four weeks", "from=2030-06-03&to=2030-06-30", 100), ("the year", "from=2030-01-01&to=2030-12-31", 20)];
    // Warm-up: caches and prepared statements.
    run(&bench, &browser, &format!("/admin/reports?{}", ranges[0].1), None, 5).await;
    println!("## Reports over a year of 50 rooms × 10 bookings a day (182,500 bookings), sequential requests");
    println!("| request | range | requests | p50 ms | p99 ms | SQL statements per request | bytes |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    // Then one area's 25 rooms (`?area=`, URL-encoded `측정-뉴욕`).
    let ny = "area=%EC%B8%A1%EC%A0%95-%EB%89%B4%EC%9A%95";
    let ranges = ranges
        .into_iter()
        .map(|(label, query, n)| (label.to_owned(), query.to_owned(), n))
        .chain(ranges.map(|(label, query, n)| (format!("{label}, one area"), format!("{query}&{ny}"), n)));
    for (label, query, n) in ranges {
        let cases: [(&str, String, &reqwest::Client, Option<&str>, usize); 3] = [
            ("page `/admin/reports`", format!("/admin/reports?{query}"), &browser, None, n),
            ("`utilisation.csv`", format!("/api/admin/reports/utilisation.csv?{query}"), &api, Some(ADMIN_KEY), n),
            ("`bookings.csv`", format!("/api/admin/reports/bookings.csv?{query}"), &api, Some(ADMIN_KEY), n.min(20)),
        ];
        for (name, path, client, key, n) in cases {
            let r = run(&bench, client, &path, key, n).await;
            println!(
                "| {name} | {label} | {n} | {:.1} | {:.1} | {:.1} | {} |",
                ms(pct(&r.lat, 0.5)),
                ms(pct(&r.lat, 0.99)),
                r.statements,
                r.bytes
            );
        }
    }
    bench.finish().await;
}
