//! A person's export (SPEC §26): the time to download `/account/export`
//! (the person, signed in) and `GET /api/admin/staff/{username}/export`
//! (an admin key, recorded) end to end, for one person with 10,000
//! bookings — each with its room and two history entries, a fifth made for
//! them by a delegate — among 100,000 bookings of 1,000 other people, with
//! 10,000 mails to them and 100 access records about them; the document's
//! size and the SQL statements per export. The bound is 5 s.
//!
//! Run: `cargo bench --bench export`.

use std::time::{Duration, Instant};

mod common;
use common::{ms, pct, Bench};

const THEIRS: i32 = 10_000;
const OTHERS: i32 = 100_000;
const PEOPLE: i32 = 1_000;
const ROOMS: i32 = 40;

/// Set-based loading: rooms, people, bookings (slot `n` of room `n % ROOMS`
/// every hour, so the rooms' exclusion constraint holds), their rooms and
/// history, the person's mail and access records.
fn site() -> String {
    format!(
        "
INSERT INTO area (code, name, time_zone, position) VALUES ('EX', 'EX', 'Asia/Seoul', 99);
INSERT INTO room (code, name, area, position)
SELECT 'X' || i, 'Room X' || i, 'EX', 100 + i FROM generate_series(1, {ROOMS}) i;
INSERT INTO staff_user (username, display_name, password_hash, is_admin, created_at, email)
SELECT 'p' || i, 'Person ' || i, '$argon2-bench', false, now(), 'p' || i || '@example.com'
  FROM generate_series(1, {PEOPLE}) i;
UPDATE staff_user SET email = 'admin@example.com' WHERE username = 'admin';
CREATE TEMP TABLE plan AS
SELECT n,
       CASE WHEN n <= {THEIRS} THEN (SELECT id FROM staff_user WHERE username = 'admin')
            ELSE (SELECT min(id) FROM staff_user WHERE username LIKE 'p%') + n % {PEOPLE} END AS organizer,
       CASE WHEN n <= {THEIRS} AND n % 5 = 0 THEN (SELECT min(id) FROM staff_user WHERE username LIKE 'p%') END
           AS booked_by,
       'X' || (n % {ROOMS} + 1) AS room,
       timestamptz '2029-01-01 00:00+00' + (n / {ROOMS}) * interval '1 hour' AS starts_at
  FROM generate_series(1, {THEIRS} + {OTHERS}) n;
INSERT INTO reservation (id, title, organizer_name, organizer_digest, organizer_staff_id, booked_by,
                         starts_at, ends_at, created_at, updated_at, private)
OVERRIDING SYSTEM VALUE
SELECT n, 'Meeting ' || n, 'Person ' || organizer, 'bench-' || organizer, organizer, booked_by,
       starts_at, starts_at + interval '30 minutes', starts_at - interval '7 days', starts_at - interval '7 days',
       n % 7 = 0
  FROM plan;
SELECT setval(pg_get_serial_sequence('reservation', 'id'), {THEIRS} + {OTHERS});
INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
SELECT n, room, starts_at, starts_at + interval '30 minutes', true FROM plan;
INSERT INTO booking_event (reservation_id, at, action, actor, changes)
SELECT n, starts_at - interval '7 days', 'created', 'Person ' || organizer,
       jsonb_build_object('title', jsonb_build_object('before', null, 'after', 'Meeting ' || n),
                          'rooms', jsonb_build_object('before', null, 'after', jsonb_build_array(room)))
  FROM plan
UNION ALL
SELECT n, starts_at - interval '3 days', 'retitled', 'Person ' || organizer,
       jsonb_build_object('title', jsonb_build_object('before', 'Meeting ' || n, 'after', 'Meeting ' || n || '!'))
  FROM plan;
INSERT INTO notification_outbox (delivery_id, channel, kind, payload, status, created_at, delivered_at)
SELECT 'booking-' || n || '-v1', 'mail', 'booking.created',
       jsonb_build_object('bookingId', n, 'to', CASE WHEN n <= {THEIRS} THEN 'admin@example.com'
                                                     ELSE 'p' || (n % {PEOPLE} + 1) || '@example.com' END),
       'DELIVERED', starts_at - interval '7 days', starts_at - interval '7 days'
  FROM plan WHERE n <= 2 * {THEIRS};
INSERT INTO access_record (actor_tenant, actor_name, kind, subject, address, people)
SELECT 'ops', 'ops', 'history', (SELECT id FROM staff_user WHERE username = 'admin'), '10.0.0.1', 1
  FROM generate_series(1, 100);
DROP TABLE plan;
ANALYZE;"
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bench = Bench::start_with(|c| c.background = false).await;
    let loading = Instant::now();
    bench.sql(&site()).await;
    println!("loaded {} bookings in {:.1} s", THEIRS + OTHERS, loading.elapsed().as_secs_f64());

    let browser = bench.signed_in().await;
    let api = reqwest::Client::builder()
        .default_headers(
            [(reqwest::header::AUTHORIZATION, format!("Bearer {}", common::ADMIN_KEY).parse().unwrap())]
                .into_iter()
                .collect(),
        )
        .build()
        .unwrap();

    // The document is whole and holds every booking of theirs, and only theirs.
    let body = browser.get(format!("{}/account/export", bench.base)).send().await.unwrap().bytes().await.unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&body).expect("the export is JSON");
    let bookings = doc["bookings"].as_array().unwrap();
    assert_eq!(bookings.len(), THEIRS as usize);
    assert!(bookings
        .iter()
        .all(|b| b["history"].as_array().unwrap().len() == 2 && b["rooms"].as_array().unwrap().len() == 1));
    assert_eq!(doc["mailDeliveries"].as_array().unwrap().len(), THEIRS as usize);
    assert_eq!(doc["accessRecords"].as_array().unwrap().len(), 100);

    println!("## Export of one person with {THEIRS} bookings (2 history entries each) among {OTHERS} others");
    println!("| route | downloads | p50 ms | max ms | SQL statements per download | bytes |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (route, client) in [("/account/export", &browser), ("/api/admin/staff/admin/export", &api)] {
        let (lat, queries, size) = bench.get_n(client, route, 10).await;
        println!(
            "| {route} | {} | {:.0} | {:.0} | {queries:.1} | {size} |",
            lat.len(),
            ms(pct(&lat, 0.5)),
            ms(*lat.last().unwrap())
        );
        assert!(*lat.last().unwrap() < Duration::from_secs(5), "{route}: over the 5 s bound");
    }
    bench.finish().await;
}
