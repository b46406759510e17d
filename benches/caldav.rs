//! The CalDAV door (SPEC §17): `PROPFIND` Depth 1 over a room with 2,000
//! bookings (goal under 50 ms, authentication included), an unchanged
//! `sync-collection` (calendar apps poll every few minutes), and booking by
//! a `PUT` invitation against `POST /api/bookings` for the same booking
//! (goal: within 1.5× of the JSON door; since SPEC §23 the `PUT` also stores
//! the whole object), and a `GET` of a stored object (one statement after
//! authentication). Sequential requests from one client;
//! SQL statements counted by the pool.
//!
//! Run: `cargo bench --bench caldav`.

use std::time::{Duration, Instant};

mod common;
use common::{ms, pct, Bench, KEY};

/// 2,000 one-hour bookings in room A, every three hours from 2030-01-01.
const ROOM_A: &str = "
WITH ins AS (
  INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at)
  SELECT '회의 ' || n, '직원', 'bench',
         TIMESTAMPTZ '2030-01-01 00:00+00' + n * interval '3 hours',
         TIMESTAMPTZ '2030-01-01 01:00+00' + n * interval '3 hours', now(), now()
    FROM generate_series(0, 1999) n
  RETURNING id, starts_at, ends_at)
INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
SELECT id, 'A', starts_at, ends_at, true FROM ins;
INSERT INTO booking_event (reservation_id, at, action, actor, changes)
SELECT id, now(), 'created', '직원', '{}' FROM reservation;";

const PROPFIND: &str = r#"<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/">
<d:prop><d:resourcetype/><d:getetag/><d:getcontenttype/><d:sync-token/><cs:getctag/></d:prop></d:propfind>"#;

fn sync_body(token: &str) -> String {
    format!(
        r#"<?xml version="1.0"?><d:sync-collection xmlns:d="DAV:"><d:sync-token>{token}</d:sync-token>
           <d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>"#
    )
}

fn invitation(n: u32) -> String {
    let day = 1 + n / 10;
    let hour = n % 10;
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\nBEGIN:VEVENT\r\nUID:bench-{n}\r\n\
         DTSTAMP:20300101T000000Z\r\nDTSTART:203103{day:02}T{hour:02}0000Z\r\nDTEND:203103{day:02}T{hour:02}3000Z\r\n\
         SUMMARY:회의 {n}\r\nATTENDEE;CUTYPE=ROOM:mailto:room-b@yeyak.local\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

fn json_booking(n: u32) -> serde_json::Value {
    let day = 1 + n / 10;
    let hour = n % 10;
    serde_json::json!({
        "title": format!("회의 {n}"),
        "rooms": ["C"],
        "startsAt": format!("2031-03-{day:02}T{hour:02}:00:00Z"),
        "endsAt": format!("2031-03-{day:02}T{hour:02}:30:00Z"),
    })
}

struct Dav<'a> {
    bench: &'a Bench,
    secret: String,
}

impl Dav<'_> {
    async fn send(&self, method: &str, path: &str, depth: Option<&str>, body: String) -> (u16, Duration, String) {
        let mut req = self
            .bench
            .client
            .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), format!("{}{path}", self.bench.base))
            .basic_auth("admin", Some(&self.secret))
            .body(body);
        if let Some(d) = depth {
            req = req.header("Depth", d);
        }
        let t = Instant::now();
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        let text = res.text().await.unwrap();
        (status, t.elapsed(), text)
    }
}

fn row(label: &str, lat: &mut [Duration], statements: f64, extra: &str) {
    lat.sort();
    println!(
        "| {label} | {} | {:.2} | {:.2} | {statements:.1} | {extra} |",
        lat.len(),
        ms(pct(lat, 0.5)),
        ms(pct(lat, 0.99))
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bench = Bench::start_with(|c| c.background = false).await;
    bench.sql(ROOM_A).await;
    let (secret, digest) = yeyak::auth::app_password::generate(&bench.state.secret);
    bench
        .sql(&format!(
            "INSERT INTO app_password (staff_id, label, digest, created_at)
             SELECT id, 'bench', '{digest}', now() FROM staff_user WHERE username = 'admin'"
        ))
        .await;
    let dav = Dav { bench: &bench, secret };
    let stats = &bench.state.db_stats;

    println!("## CalDAV (issue 28), sequential requests, authentication by app password included");
    println!("| request | n | p50 ms | p99 ms | SQL statements per request | answer |");
    println!("| --- | --- | --- | --- | --- | --- |");

    for _ in 0..5 {
        dav.send("PROPFIND", "/dav/calendars/rooms/A/", Some("1"), PROPFIND.into()).await;
    }
    let before = stats.statements();
    let mut lat = Vec::new();
    let mut size = 0;
    for _ in 0..100 {
        let (status, t, body) = dav.send("PROPFIND", "/dav/calendars/rooms/A/", Some("1"), PROPFIND.into()).await;
        assert_eq!(status, 207);
        assert_eq!(body.matches("<D:getetag>").count(), 2000);
        size = body.len();
        lat.push(t);
    }
    let per = (stats.statements() - before) as f64 / 100.0;
    row("`PROPFIND` Depth 1, room with 2,000 bookings", &mut lat, per, &format!("{size} bytes, 2,001 responses"));

    let (_, _, first) = dav.send("REPORT", "/dav/calendars/rooms/A/", Some("1"), sync_body("")).await;
    let token = first.split("<D:sync-token>").last().unwrap().split("</D:sync-token>").next().unwrap().to_owned();
    let before = stats.statements();
    let mut lat = Vec::new();
    for _ in 0..500 {
        let (status, t, body) = dav.send("REPORT", "/dav/calendars/rooms/A/", Some("1"), sync_body(&token)).await;
        assert_eq!(status, 207);
        assert!(!body.contains("<D:response>"), "unchanged");
        lat.push(t);
    }
    let per = (stats.statements() - before) as f64 / 500.0;
    row("unchanged `sync-collection`, same room", &mut lat, per, "no member, the same token");

    // The same booking through both doors (each of its own room and times).
    let mut put = Vec::new();
    let mut post = Vec::new();
    let (mut put_statements, mut post_statements) = (0u64, 0u64);
    for n in 0..200u32 {
        let before = stats.statements();
        let path = format!("/dav/calendars/admin/bookings/bench-{n}.ics");
        let (status, t, body) = dav.send("PUT", &path, None, invitation(n)).await;
        assert_eq!(status, 201, "{body}");
        put.push(t);
        put_statements += stats.statements() - before;
        let before = stats.statements();
        let (status, t) = bench.post("/api/bookings", "bench", &format!("json-{n}"), &json_booking(n)).await;
        assert_eq!(status, 201);
        post.push(t);
        post_statements += stats.statements() - before;
    }
    let _ = KEY;
    let (mut put_sorted, mut post_sorted) = (put.clone(), post.clone());
    put_sorted.sort();
    post_sorted.sort();
    let ratio = ms(pct(&put_sorted, 0.5)) / ms(pct(&post_sorted, 0.5));
    row(
        "`PUT` invitation of one room (new booking)",
        &mut put,
        put_statements as f64 / 200.0,
        &format!("{ratio:.2}× the JSON door's p50"),
    );
    row("`POST /api/bookings`, the same booking", &mut post, post_statements as f64 / 200.0, "201");

    // A stored object read back: one statement after authentication (SPEC §23).
    let before = stats.statements();
    let mut lat = Vec::new();
    for n in 0..200u32 {
        let (status, t, body) =
            dav.send("GET", &format!("/dav/calendars/admin/bookings/bench-{n}.ics"), None, String::new()).await;
        assert_eq!(status, 200);
        assert!(body.contains("PARTSTAT=ACCEPTED"), "{body}");
        lat.push(t);
    }
    let per = (stats.statements() - before) as f64 / 200.0;
    row("`GET` of a stored object", &mut lat, per, "the event as stored, the room's answer in it");
    bench.finish().await;
}
