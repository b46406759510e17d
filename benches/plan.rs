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

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bench = Bench::start_with(|c| c.background = false).await;
    common::desk_area(&bench, "B1", PLACES, chrono::NaiveDate::from_ymd_opt(2030, 6, 12).unwrap()).await;
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
