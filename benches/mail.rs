//! Mail and feeds at the office's scale (issues 15 and 29), each "before"
//! beside "after" in one run where the old path can still be run:
//! - the room feed at 2,000 events: p50/p99 over HTTP, the 304 path's cost
//!   (latency and statements), and rendering and the query side by side
//!   with what they were (the `icalendar` crate's builder, the old query);
//! - the reminder scan at 10,000 upcoming bookings, with its plan;
//! - messages/s to the in-process sink and to a real MTA (a private Postfix,
//!   `common::postfix`): lettre's own transport as the outbox used it (two
//!   workers, one message at a time each) beside the outbox now (a pool of
//!   `YEYAK_SMTP_POOL` = 4 connections with `TCP_NODELAY`);
//! - 5,000 reminders due at one minute: seconds from that minute until all
//!   are handed to Postfix by a running process's background loops.
//!
//! Run: `cargo bench --bench mail` (as root, with Debian's `postfix`
//! installed; see `common/postfix.rs`). `BENCH_ONLY=burst` runs the burst
//! alone.

use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel_async::RunQueryDsl;

mod common;
use common::postfix::Postfix;
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
                                   'roomNames', jsonb_build_object('A', '회의실 A'),
                                   'startsAt', now() + interval '1 day', 'endsAt', now() + interval '1 day 1 hour',
                                   'to', 'kim@example.com', 'toName', '김민지'),
                'PENDING', now() - interval '1 minute', now()
           FROM generate_series(1, {n}) i"
    )
}

/// The room feed as it was rendered before issue 29: the `icalendar`
/// crate's builder, one property map per event, the crate's folding.
mod before {
    use icalendar::{Calendar, Component, Event, EventLike, EventStatus, Property};
    use yeyak::calendar::feed::Row;

    pub fn render(name: &str, rows: &[Row], host: &str) -> String {
        let mut cal = Calendar::empty();
        cal.append_property(Property::new("VERSION", "2.0"));
        cal.append_property(Property::new("PRODID", "-//yeyak//rooms//KO"));
        cal.append_property(Property::new("CALSCALE", "GREGORIAN"));
        cal.append_property(Property::new("NAME", name));
        cal.append_property(Property::new("X-WR-CALNAME", name));
        for b in rows {
            let mut e = Event::new();
            e.uid(&format!("booking-{}@{host}", b.id))
                .summary(&b.title)
                .location(&b.room_names.join(" + "))
                .sequence(b.version as u32)
                .timestamp(b.updated_at)
                .append_property(Property::new("DTSTART", b.starts_at.format("%Y%m%dT%H%M%SZ").to_string()))
                .append_property(Property::new("DTEND", b.ends_at.format("%Y%m%dT%H%M%SZ").to_string()))
                .status(EventStatus::Confirmed)
                .description(&format!("예약한 사람: {}", b.organizer_name));
            cal.push(e.done());
        }
        cal.done().to_string()
    }

    /// The feed's query before: every booking column, rooms aggregated, the
    /// room matched by `EXISTS` after the window.
    pub const QUERY: &str = "
SELECT r.id, r.title, r.organizer_name, r.organizer_digest, r.organizer_staff_id, r.starts_at, r.ends_at,
       r.cancelled_at, r.version, r.status, r.series_id, r.check_in_required, r.checked_in_at, r.released_at,
       r.is_exception, r.occurrence_start, r.updated_at, r.organizer_tenant,
       COALESCE(array_agg(rr.room ORDER BY rm.position, rm.code) FILTER (WHERE rr.room IS NOT NULL), '{}') AS rooms
  FROM reservation r
  LEFT JOIN reservation_room rr ON rr.reservation_id = r.id
  LEFT JOIN room rm ON rm.code = rr.room
 WHERE r.ends_at > $1 AND r.starts_at < $2
   AND ($3::int8 IS NULL OR r.organizer_staff_id = $3 OR r.organizer_digest = $4)
   AND ($5::text[] IS NULL OR EXISTS (SELECT 1 FROM reservation_room x WHERE x.reservation_id = r.id AND x.room = ANY($5)))
 GROUP BY r.id
 ORDER BY r.starts_at, r.id";
}

fn p50(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    (ms(pct(&v, 0.5)), ms(pct(&v, 0.99)))
}

/// Messages/s through lettre's own transport as the outbox used it before:
/// `workers` tasks, each one message at a time.
async fn lettre_transport(url: &str, n: usize, workers: usize) -> f64 {
    use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
    let transport =
        AsyncSmtpTransport::<Tokio1Executor>::from_url(url).unwrap().timeout(Some(Duration::from_secs(10))).build();
    let message = || {
        Message::builder()
            .from("yeyak <rooms@example.com>".parse().unwrap())
            .to("김민지 <kim@example.com>".parse().unwrap())
            .subject("[예약 확정] 처리량 측정")
            .multipart(
                lettre::message::MultiPart::alternative()
                    .singlepart(lettre::message::SinglePart::plain("김민지님,\n\n회의실을 예약했습니다.\n".repeat(8)))
                    .singlepart(
                        lettre::message::SinglePart::builder()
                            .header(
                                lettre::message::header::ContentType::parse(
                                    "text/calendar; charset=utf-8; method=REQUEST",
                                )
                                .unwrap(),
                            )
                            .body("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n".repeat(20)),
                    ),
            )
            .unwrap()
    };
    let started = Instant::now();
    let per = n / workers;
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let t = transport.clone();
            let m = message();
            tokio::spawn(async move {
                for _ in 0..per {
                    t.send(m.clone()).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    (per * workers) as f64 / started.elapsed().as_secs_f64()
}

/// Messages/s through the outbox now: one worker draining `n` notices with a
/// pool of `pool` connections.
async fn outbox(bench: &Bench, url: &str, n: usize, pool: usize) -> (f64, usize) {
    let mut conn = yeyak::db::establish(&bench.db_url()).await.unwrap();
    diesel::sql_query("DELETE FROM notification_outbox").execute(&mut conn).await.unwrap();
    diesel::sql_query(notices(n)).execute(&mut conn).await.unwrap();
    let mailer =
        yeyak::mail::smtp::Mailer::new(url, "yeyak <rooms@example.com>", chrono_tz::Asia::Seoul, "yeyak.local")
            .unwrap()
            .with_pool(pool);
    let worker = yeyak::outbox::worker::DeliveryWorker::new(
        bench.state.pool.clone(),
        bench.state.clock.clone(),
        yeyak::outbox::provider::Provider::Log,
    )
    .with_mail(yeyak::outbox::provider::Provider::Smtp(Arc::new(mailer)));
    let started = Instant::now();
    let mut delivered = 0;
    loop {
        let s = worker.drain(32, 1000).await.unwrap();
        delivered += s.delivered;
        if s.claimed == 0 {
            break;
        }
    }
    (n as f64 / started.elapsed().as_secs_f64(), delivered)
}

/// 5,000 reminders due at one minute (one booking per room, 5,000 rooms,
/// starting 15 minutes after the next whole minute): seconds from that
/// minute until every one is enqueued, and until the outbox has handed every
/// one to `smtp`, with the background loops of a real process doing the work.
async fn reminder_burst(smtp: &str, n: usize) -> (f64, f64) {
    use chrono::DurationRound;
    let bench = Bench::start_with(|c| {
        c.smtp_url = Some(smtp.to_owned());
    })
    .await;
    let now = chrono::Utc::now();
    let mut minute = now.duration_trunc(chrono::Duration::minutes(1)).unwrap() + chrono::Duration::minutes(1);
    if minute - now < chrono::Duration::seconds(20) {
        minute += chrono::Duration::minutes(1);
    }
    let at = (minute + chrono::Duration::minutes(15)).to_rfc3339();
    bench
        .sql(&format!(
            "INSERT INTO staff_user (username, display_name, password_hash, email)
                  VALUES ('kim', '김민지', '$argon2id$v=19$bench', 'kim@example.com');
             INSERT INTO room (code, name, area, position)
                  SELECT 'R' || i, '캠퍼스 ' || i, '캠퍼스', 100 + i FROM generate_series(1, {n}) i;
             WITH ins AS (
               INSERT INTO reservation (title, organizer_name, organizer_digest, organizer_staff_id, starts_at, ends_at, created_at, updated_at)
               SELECT 'R' || i, '김민지', 'bench', (SELECT id FROM staff_user WHERE username = 'kim'),
                      '{at}'::timestamptz, '{at}'::timestamptz + interval '30 minutes', now(), now()
                 FROM generate_series(1, {n}) i
               RETURNING id, title, starts_at, ends_at)
             INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
             SELECT id, title, starts_at, ends_at, true FROM ins;
             ANALYZE;"
        ))
        .await;
    let mut conn = yeyak::db::establish(&bench.db_url()).await.unwrap();
    #[derive(diesel::QueryableByName)]
    struct Counted {
        #[diesel(sql_type = diesel::sql_types::Int8)]
        queued: i64,
        #[diesel(sql_type = diesel::sql_types::Int8)]
        delivered: i64,
    }
    let wait = (minute - chrono::Utc::now()).to_std().unwrap_or_default();
    tokio::time::sleep(wait).await;
    let (mut enqueued_at, mut done_at) = (None, None);
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(300) {
        let c: Counted = diesel::sql_query(
            "SELECT count(*) AS queued, count(*) FILTER (WHERE status = 'DELIVERED') AS delivered
               FROM notification_outbox WHERE kind = 'booking.reminder'",
        )
        .get_result(&mut conn)
        .await
        .unwrap();
        let since = (chrono::Utc::now() - minute).num_milliseconds() as f64 / 1000.0;
        if enqueued_at.is_none() && c.queued as usize == n {
            enqueued_at = Some(since);
        }
        if c.delivered as usize == n {
            done_at = Some(since);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(conn);
    bench.finish().await;
    (enqueued_at.unwrap_or(f64::NAN), done_at.unwrap_or(f64::NAN))
}

async fn burst_table(postfix: &Postfix) {
    let before = postfix.delivered();
    let (queued, done) = reminder_burst(&postfix.url, 5000).await;
    println!("\n## Reminder burst: 5,000 due at one minute, handed to Postfix by a running process");
    println!("| all enqueued (s after the minute) | all handed over (s after the minute) | accepted by Postfix |");
    println!("| --- | --- | --- |");
    // Postfix logs each message a moment after accepting it.
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!("| {queued:.1} | {done:.1} | {} |", postfix.delivered() - before);
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let postfix = Postfix::start();
    if let Err(e) = &postfix {
        println!("(no real MTA: {e})");
    }
    if std::env::var("BENCH_ONLY").as_deref() == Ok("burst") {
        burst_table(postfix.as_ref().expect("postfix")).await;
        return;
    }
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

    // Room feed over HTTP: a year of room A.
    let token = yeyak::calendar::token::token(&bench.state.secret, kim.id, 1);
    let url = format!("{}/ical/rooms/A.ics?token={token}", bench.base);
    let (mut full, mut bytes, mut etag) = (Vec::new(), 0, String::new());
    for i in 0..120 {
        let t = Instant::now();
        let res = bench.client.get(&url).send().await.unwrap();
        etag = res.headers()["etag"].to_str().unwrap().to_owned();
        let body = res.text().await.unwrap();
        if i >= 20 {
            full.push(t.elapsed());
        }
        bytes = body.len();
        assert_eq!(body.matches("BEGIN:VEVENT").count(), 2000);
    }
    let mut not_modified = Vec::new();
    let statements = bench.state.db_stats.statements();
    for i in 0..220 {
        let t = Instant::now();
        let res = bench.client.get(&url).header("If-None-Match", &etag).send().await.unwrap();
        assert_eq!(res.status().as_u16(), 304);
        let _ = res.bytes().await;
        if i >= 20 {
            not_modified.push(t.elapsed());
        }
    }
    let per_304 = (bench.state.db_stats.statements() - statements) as f64 / 220.0;
    let (full50, full99) = p50(full);
    let (nm50, nm99) = p50(not_modified);
    println!("## Room feed, 2,000 events over a year, over HTTP (100 requests after 20 warm-up)");
    println!("| request | p50 ms | p99 ms | bytes | statements |");
    println!("| --- | --- | --- | --- | --- |");
    println!("| full (200) | {full50:.1} | {full99:.1} | {bytes} | 3 |");
    println!("| still holds (304, If-None-Match) | {nm50:.2} | {nm99:.2} | 0 | {per_304:.1} |");

    // Where a full answer's time goes, before and after, side by side.
    let site = yeyak::calendar::feed::Site {
        host: "yeyak.local",
        room_domain: "yeyak.local",
        base: "http://b",
        lang: yeyak::i18n::Lang::Ko,
    };
    let window = yeyak::calendar::feed::Window::at(chrono::Utc::now());
    let feed = yeyak::calendar::feed::Feed::Room("A");
    let rows = yeyak::calendar::feed::rows(&mut conn, feed, &window).await.unwrap();
    assert_eq!(rows.len(), 2000);
    let time = |f: &mut dyn FnMut()| {
        let mut v = Vec::new();
        for i in 0..60 {
            let t = Instant::now();
            f();
            if i >= 10 {
                v.push(t.elapsed());
            }
        }
        p50(v).0
    };
    let render_before = time(&mut || {
        std::hint::black_box(before::render("회의실 A", &rows, "yeyak.local"));
    });
    let render_after = time(&mut || {
        std::hint::black_box(yeyak::calendar::feed::render("회의실 A", &rows, &site));
    });
    let (mut q_before, mut q_after) = (Vec::new(), Vec::new());
    for i in 0..50 {
        use diesel::sql_types::{Array, Int8, Nullable, Text, Timestamptz};
        let t = Instant::now();
        let old: Vec<yeyak::rooms::Booking> = diesel::sql_query(before::QUERY)
            .bind::<Timestamptz, _>(window.from)
            .bind::<Timestamptz, _>(window.to)
            .bind::<Nullable<Int8>, _>(None::<i64>)
            .bind::<Text, _>("")
            .bind::<Nullable<Array<Text>>, _>(Some(vec!["A".to_owned()]))
            .load(&mut conn)
            .await
            .unwrap();
        let old_time = t.elapsed();
        let t = Instant::now();
        let new = yeyak::calendar::feed::rows(&mut conn, feed, &window).await.unwrap();
        let new_time = t.elapsed();
        assert_eq!((old.len(), new.len()), (2000, 2000));
        if i >= 10 {
            q_before.push(old_time);
            q_after.push(new_time);
        }
    }
    let (query_before, query_after) = (p50(q_before).0, p50(q_after).0);
    println!("\n## A full room feed's parts, 2,000 events (p50 of 50 after 10 warm-up)");
    println!("| part | before ms | after ms | after / before |");
    println!("| --- | --- | --- | --- |");
    println!(
        "| rendering (icalendar builder → one buffer) | {render_before:.1} | {render_after:.1} | {:.2} |",
        render_after / render_before
    );
    println!(
        "| query (booking columns + EXISTS → feed rows with rooms and organizer) | {query_before:.1} | {query_after:.1} | {:.2} |",
        query_after / query_before
    );

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

    // Messages/s: lettre's own transport as before beside the outbox now.
    let mut targets = vec![("in-process sink", smtp.clone(), 2000)];
    if let Ok(p) = &postfix {
        targets.push(("Postfix (discard)", p.url.clone(), 3000));
    }
    println!("\n## Messages/s to an SMTP server");
    println!("| server | lettre's transport, 2 workers one at a time (before) | outbox, pool of 4 (after) | after / before |");
    println!("| --- | --- | --- | --- |");
    for (name, url, n) in targets {
        let received = sink.received().len();
        let before = lettre_transport(&url, n / 4, 2).await;
        let (after, delivered) = outbox(&bench, &url, n, 4).await;
        assert_eq!(delivered, n, "every notice delivered once");
        if url == smtp {
            assert_eq!(sink.received().len() - received, n / 4 / 2 * 2 + n, "the sink got every message");
        }
        println!("| {name} | {before:.0} | {after:.0} | {:.1} |", after / before);
    }
    drop(conn);
    bench.finish().await;

    if let Ok(p) = &postfix {
        burst_table(p).await;
    }
}
