//! Calendars and mail (issue 15):
//! - a room feed with a year of bookings (about 2,000 events): p50/p99 and bytes;
//! - outbox throughput to a real SMTP server (the tests' sink): messages/s
//!   with 2 workers;
//! - the leader's reminder scan at 10,000 upcoming bookings: time per tick,
//!   with its plan.
//!
//! Run: `cargo bench --bench mail`.

use std::sync::Arc;
use std::time::Instant;

use diesel_async::RunQueryDsl;

mod common;
use common::smtp_sink::Sink;
use common::{ms, pct, Bench};

const SETUP: &str = "
INSERT INTO staff_user (username, display_name, password_hash, email)
     VALUES ('kim', '김민지', '$argon2id$v=19$bench', 'kim@example.com');
INSERT INTO room (code, name, area, position) SELECT 'M' || i, '메일 ' || i, '메일', i FROM generate_series(1, 40) i;
WITH ins AS (
  INSERT INTO reservation (title, organizer_name, organizer_digest, organizer_staff_id, starts_at, ends_at, created_at, updated_at)
  SELECT '피드 회의 ' || n || ', 주간; 점검', '김민지', 'bench', (SELECT id FROM staff_user WHERE username = 'kim'),
         date_trunc('hour', now()) - interval '20 days' + (n / 6) * interval '1 day' + (n % 6) * interval '90 minutes',
         date_trunc('hour', now()) - interval '20 days' + (n / 6) * interval '1 day' + (n % 6) * interval '90 minutes' + interval '1 hour',
         now(), now()
    FROM generate_series(0, 1999) n
  RETURNING id, starts_at, ends_at)
INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
SELECT id, 'A', starts_at, ends_at, true FROM ins;
WITH ins AS (
  INSERT INTO reservation (title, organizer_name, organizer_digest, organizer_staff_id, starts_at, ends_at, created_at, updated_at)
  SELECT 'M' || (1 + n % 40), '김민지', 'bench-up', (SELECT id FROM staff_user WHERE username = 'kim'),
         date_trunc('hour', now()) + interval '2 hours' + (n / 40 / 4) * interval '1 day' + (n / 40 % 4) * interval '2 hours',
         date_trunc('hour', now()) + interval '2 hours' + (n / 40 / 4) * interval '1 day' + (n / 40 % 4) * interval '2 hours' + interval '1 hour',
         now(), now()
    FROM generate_series(0, 9999) n
  RETURNING id, title, starts_at, ends_at)
INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
SELECT id, title, starts_at, ends_at, true FROM ins;
ANALYZE;";

/// `n` mail notices ready to send.
fn notices(n: usize) -> String {
    format!(
        "INSERT INTO notification_outbox (delivery_id, channel, kind, payload, status, next_attempt_at, created_at)
         SELECT 'bench-' || i, 'mail', 'booking.created',
                jsonb_build_object('bookingId', i, 'version', 1, 'action', 'created', 'status', 'CONFIRMED',
                                   'title', '처리량 측정 ' || i, 'organizer', '김민지', 'rooms', jsonb_build_array('A'),
                                   'startsAt', now() + interval '1 day', 'endsAt', now() + interval '1 day 1 hour',
                                   'to', 'kim@example.com', 'toName', '김민지'),
                'PENDING', now() - interval '1 minute', now()
           FROM generate_series(1, {n}) i"
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (sink, smtp) = Sink::start().await;
    let bench = Bench::start_with(|c| {
        c.background = false;
        c.smtp_url = Some(smtp.clone());
    })
    .await;
    bench.sql(SETUP).await;
    let mut conn = yeyak::db::establish(&bench.db_url()).await.unwrap();
    #[derive(diesel::QueryableByName)]
    struct Id {
        #[diesel(sql_type = diesel::sql_types::Int8)]
        id: i64,
    }
    let kim: Id =
        diesel::sql_query("SELECT id FROM staff_user WHERE username = 'kim'").get_result(&mut conn).await.unwrap();

    // Room feed: a year of room A.
    let token = yeyak::calendar::token::token(&bench.state.secret, kim.id, 1);
    let url = format!("{}/ical/rooms/A.ics?token={token}", bench.base);
    let mut lat = Vec::new();
    let mut bytes = 0;
    for i in 0..120 {
        let t = Instant::now();
        let body = bench.client.get(&url).send().await.unwrap().text().await.unwrap();
        if i >= 20 {
            lat.push(t.elapsed());
        }
        bytes = body.len();
        assert_eq!(body.matches("BEGIN:VEVENT").count(), 2000);
    }
    lat.sort();
    println!("## Room feed, 2,000 events over a year (100 requests after 20 warm-up)");
    println!("| p50 ms | p99 ms | bytes |");
    println!("| --- | --- | --- |");
    println!("| {:.1} | {:.1} | {bytes} |", ms(pct(&lat, 0.5)), ms(pct(&lat, 0.99)));

    // Reminder scan: 10,000 upcoming bookings, none due yet (the tick's cost).
    let clock = bench.state.clock.clone();
    let mut scan = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        let n = yeyak::outbox::reminders::enqueue(&mut conn, clock.now(), chrono::Duration::minutes(15), None)
            .await
            .unwrap();
        scan.push(t.elapsed());
        assert_eq!(n, 0);
    }
    scan.sort();
    // And the tick that finds them due (all 40 rooms' first bookings).
    // Ten minutes before they start (they start on the hour, two hours on).
    let due_at = chrono::DurationRound::duration_trunc(clock.now(), chrono::Duration::hours(1)).unwrap()
        + chrono::Duration::hours(2)
        - chrono::Duration::minutes(10);
    let t = Instant::now();
    let enqueued =
        yeyak::outbox::reminders::enqueue(&mut conn, due_at, chrono::Duration::minutes(15), None).await.unwrap();
    let due_time = t.elapsed();
    println!("\n## Reminder scan at 10,000 upcoming bookings");
    println!("| tick | p50 ms | p99 ms | reminders enqueued |");
    println!("| --- | --- | --- | --- |");
    println!("| nothing due (200 ticks) | {:.2} | {:.2} | 0 |", ms(pct(&scan, 0.5)), ms(pct(&scan, 0.99)));
    println!("| 40 due at once | {:.2} | {:.2} | {enqueued} |", ms(due_time), ms(due_time));
    #[derive(diesel::QueryableByName)]
    struct Line {
        #[diesel(sql_type = diesel::sql_types::Text, column_name = "QUERY PLAN")]
        line: String,
    }
    let plan: Vec<Line> = diesel::sql_query(
        "EXPLAIN (ANALYZE, COSTS OFF) SELECT r.id FROM reservation r
           JOIN staff_user s ON s.id = r.organizer_staff_id AND s.email IS NOT NULL
          WHERE r.status = 'CONFIRMED' AND r.starts_at > now() AND r.starts_at <= now() + interval '15 minutes'",
    )
    .load(&mut conn)
    .await
    .unwrap();
    println!("\n```text");
    for l in plan {
        println!("{}", l.line);
    }
    println!("```");

    // Outbox → SMTP with two workers.
    diesel::sql_query("DELETE FROM notification_outbox").execute(&mut conn).await.unwrap();
    let n = 2000;
    diesel::sql_query(notices(n)).execute(&mut conn).await.unwrap();
    let before = sink.received().len();
    let started = Instant::now();
    let worker = |_: usize| {
        let mailer = yeyak::mail::smtp::Mailer::new(
            &smtp,
            "yeyak <rooms@example.com>",
            bench.state.policy().timezone,
            "yeyak.local",
        )
        .unwrap();
        let w = yeyak::outbox::worker::DeliveryWorker::new(
            bench.state.pool.clone(),
            clock.clone(),
            yeyak::outbox::provider::Provider::Log,
        )
        .with_mail(yeyak::outbox::provider::Provider::Smtp(Arc::new(mailer)));
        tokio::spawn(async move {
            loop {
                let s = w.run_once(32).await.unwrap();
                if s.claimed == 0 {
                    break;
                }
            }
        })
    };
    let handles: Vec<_> = (0..2).map(worker).collect();
    for h in handles {
        h.await.unwrap();
    }
    let took = started.elapsed();
    let sent = sink.received().len() - before;
    assert_eq!(sent, n, "every notice sent once");
    println!("\n## Outbox to SMTP, 2 workers, {n} messages");
    println!("| seconds | messages/s |");
    println!("| --- | --- |");
    println!("| {:.2} | {:.0} |", took.as_secs_f64(), n as f64 / took.as_secs_f64());
    drop(conn);
    bench.finish().await;
}
