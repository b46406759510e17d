//! The floor plan of 1,000 places (SPEC §28, issue 43): time to render
//! `/areas/{code}/plan?date=` for an area of 1,000 desks placed on a
//! 2,000 × 1,500 plan, a third of them booked that day, a tenth assigned
//! (half of those holders away), and the same places as JSON; SQL
//! statements per render. The mark must stay under 100 ms.
//!
//! Run: `cargo bench --bench plan`.

mod common;
use common::{ms, pct, Bench};

const PLACES: i32 = 1_000;

fn site() -> String {
    format!(
        "
INSERT INTO area (code, name, time_zone, position) VALUES ('B1', 'B1', 'Asia/Seoul', 99);
INSERT INTO staff_user (username, display_name, password_hash, is_admin, created_at)
SELECT 'holder' || i, 'holder ' || i, '$argon2-bench', false, now() FROM generate_series(1, {PLACES} / 10) i;
INSERT INTO room (code, name, area, position, kind, plan_x, plan_y, assigned_to)
SELECT 'P' || i, 'Desk ' || i, 'B1', i, 'desk', ((i - 1) % 40 + 0.5) / 40.0, ((i - 1) / 40 + 0.5) / 25.0,
       CASE WHEN i % 10 = 0 THEN (SELECT id FROM staff_user WHERE username = 'holder' || (i / 10)) END
  FROM generate_series(1, {PLACES}) i;
INSERT INTO staff_away (staff_id, from_date, to_date)
SELECT id, DATE '2030-06-10', DATE '2030-06-14' FROM staff_user WHERE username LIKE 'holder%' AND right(username, 1) IN ('1', '3', '5', '7', '9');
WITH ins AS (
  INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at)
  SELECT 'P' || i, '직원', 'bench-' || i,
         TIMESTAMP '2030-06-12 09:00' AT TIME ZONE 'Asia/Seoul', TIMESTAMP '2030-06-12 18:00' AT TIME ZONE 'Asia/Seoul',
         now(), now()
    FROM generate_series(1, {PLACES}) i WHERE i % 3 = 0
  RETURNING id, title, starts_at, ends_at)
INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
SELECT id, title, starts_at, ends_at, true FROM ins;"
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bench = Bench::start_with(|c| c.background = false).await;
    bench.sql(&site()).await;
    let mut png = std::io::Cursor::new(Vec::new());
    image::RgbImage::from_pixel(2000, 1500, image::Rgb([250, 250, 250]))
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    let stored = reqwest::Client::new()
        .put(format!("{}/api/areas/B1/plan", bench.base))
        .bearer_auth(common::ADMIN_KEY)
        .header("Content-Type", "image/png")
        .body(png.into_inner())
        .send()
        .await
        .unwrap();
    assert_eq!(stored.status().as_u16(), 200, "{}", stored.text().await.unwrap());
    let client = bench.signed_in().await;
    let page = "/areas/B1/plan?date=2030-06-12";
    let json = "/api/areas/B1/plan/places?date=2030-06-12";
    bench.get_n(&client, page, 30).await; // warm-up
    println!("## Floor plan of {PLACES} places, sequential requests from one signed-in browser");
    println!("| what | renders | p50 ms | p99 ms | SQL statements per render | bytes |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let (lat, queries, size) = bench.get_n(&client, page, 200).await;
    println!("| {page} | 200 | {:.2} | {:.2} | {queries:.2} | {size} |", ms(pct(&lat, 0.5)), ms(pct(&lat, 0.99)));
    let api = reqwest::Client::builder()
        .default_headers(
            [(reqwest::header::AUTHORIZATION, format!("Bearer {}", common::ADMIN_KEY).parse().unwrap())]
                .into_iter()
                .collect(),
        )
        .build()
        .unwrap();
    let (lat, queries, size) = bench.get_n(&api, json, 200).await;
    println!("| {json} | 200 | {:.2} | {:.2} | {queries:.2} | {size} |", ms(pct(&lat, 0.5)), ms(pct(&lat, 0.99)));
    bench.finish().await;
}
