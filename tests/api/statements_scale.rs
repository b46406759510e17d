//! SPEC §27: statements per page and per API read do not grow with the
//! catalogue. The same reads on a 3-room, a 50-room and a 5,000-room
//! install, with the same bookings per room and the same person's
//! bookings, counted by the process's own statement counter
//! (`yeyak_db_statements_total`).

use reqwest::StatusCode;

use crate::caldav::Dav;
use crate::helpers::*;
use crate::web::{tomorrow, Browser, ADMIN_PASSWORD, ADMIN_USER};

/// Rooms up to `rooms` in all: the default area `본관` filled to 50, then
/// areas of 50 in three zones; and three bookings a room tomorrow.
fn catalogue_sql(rooms: i64, day: &str) -> String {
    format!(
        "INSERT INTO area (code, name, time_zone, position)
         SELECT 'Z' || lpad(a::text, 3, '0'), 'Z' || a,
                (ARRAY[NULL, 'Europe/Berlin', 'America/New_York'])[a % 3 + 1], a + 1
           FROM generate_series(1, greatest(({rooms} - 1) / 50, 0)) a;
         INSERT INTO room (code, name, area, position, capacity)
         SELECT 'R' || n, 'R ' || n,
                CASE WHEN n <= 50 THEN '본관' ELSE 'Z' || lpad(((n - 1) / 50)::text, 3, '0') END,
                CASE WHEN n <= 50 THEN n ELSE (n - 1) % 50 + 1 END, 2 + n % 20
           FROM generate_series(4, {rooms}) n;
         WITH slots AS (SELECT code, h FROM room, (VALUES (1), (3), (5)) v(h)),
         ins AS (
           INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at)
           SELECT 'm ' || h || ' ' || code, 'someone', 'load',
                  (DATE '{day}' + h * interval '1 hour') AT TIME ZONE 'UTC',
                  (DATE '{day}' + (h + 1) * interval '1 hour') AT TIME ZONE 'UTC', now(), now()
             FROM slots
           RETURNING id, title, starts_at, ends_at)
         INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
         SELECT id, split_part(title, ' ', 3), starts_at, ends_at, true FROM ins;"
    )
}

/// Statements each read sends, in a fixed order, on an install of `rooms`.
async fn reads(rooms: i64) -> Vec<(String, u64)> {
    let first = TestApp::spawn().await;
    let day = tomorrow(&first);
    first.db().await.batch_execute(&catalogue_sql(rooms, &day)).await.unwrap();
    // A process that draws the grown catalogue from the start.
    let app = first.another_process().await;
    assert_eq!(app.count("SELECT count(*) FROM room WHERE active").await, rooms);

    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    // The same person's bookings on every install.
    let kim = Dav::person(&app, "kim").await;
    let kim_pages = Browser::new(&app);
    kim_pages.sign_in("kim", "correct-horse-1").await;
    for (title, start, end) in [("kim-1", "08:00", "09:00"), ("kim-2", "16:00", "17:00"), ("kim-3", "18:00", "19:00")] {
        let page = kim_pages.book(&day, title, start, end, &["A"]).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.html);
    }

    let q = |t: String| t.replace('+', "%2B");
    let pages = [
        format!("/rooms?date={day}"),
        format!("/rooms/week?date={day}"),
        format!("/find?date={day}&start=13:00&end=14:00"),
        "/admin/reports".to_owned(),
    ];
    let api = [
        "/api/rooms".to_owned(),
        "/api/rooms/A".to_owned(),
        format!("/api/rooms/A/availability?date={day}"),
        format!("/api/rooms/free?from={}&to={}", q(at(1, 4, 0)), q(at(1, 5, 0))),
        format!("/api/bookings?date={day}"),
        "/api/areas".to_owned(),
    ];
    let stats = || app.state.db_stats.statements();
    // The page catalogue reloads when older than a second (one statement
    // for any number of rooms, catalogue::cache), so a read may pay for
    // it: each read is warmed once, then counted three times back to back,
    // and its fewest statements kept.
    let mut sent = Vec::new();
    let least = |counts: Vec<u64>| counts.into_iter().min().unwrap();
    for path in &pages {
        let who = if path.starts_with("/admin") { &admin } else { &kim_pages };
        let mut counts = Vec::new();
        for round in 0..4 {
            let before = stats();
            let page = who.get(path).await;
            assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.html);
            if round > 0 {
                counts.push(stats() - before);
            }
        }
        sent.push((path.clone(), least(counts)));
    }
    let mut counts = Vec::new();
    for round in 0..4 {
        let before = stats();
        let my = kim_pages.get("/my").await;
        assert_eq!(my.status, StatusCode::OK);
        assert!(["kim-1", "kim-2", "kim-3"].iter().all(|t| my.html.contains(t)), "{}", my.html);
        if round > 0 {
            counts.push(stats() - before);
        }
    }
    sent.push(("/my".to_owned(), least(counts)));
    for path in &api {
        let mut counts = Vec::new();
        for round in 0..4 {
            let before = stats();
            let (status, body) = app.get_json(path, TENANT_ONE).await;
            assert_eq!(status, StatusCode::OK, "{path}: {body}");
            if round > 0 {
                counts.push(stats() - before);
            }
        }
        sent.push((path.clone(), least(counts)));
    }
    for path in ["/dav/calendars/rooms/A/", "/dav/calendars/kim/bookings/"] {
        let mut counts = Vec::new();
        for round in 0..4 {
            let before = stats();
            let answer = kim.send("PROPFIND", path, &[("Depth", "1")], "").await;
            assert_eq!(answer.status.as_u16(), 207, "{path}: {}", answer.body);
            if round > 0 {
                counts.push(stats() - before);
            }
        }
        sent.push((format!("PROPFIND {path}"), least(counts)));
    }
    sent
}

#[tokio::test]
async fn pages_and_api_reads_send_as_many_statements_at_5000_rooms_as_at_3() {
    let small = reads(3).await;
    let fifty = reads(50).await;
    let campus = reads(5_000).await;
    // Names differ only by the test day; compare the counts by position.
    let counts = |r: &[(String, u64)]| -> Vec<(String, u64)> {
        r.iter().map(|(p, n)| (p.split('?').next().unwrap().to_owned(), *n)).collect()
    };
    let small = counts(&small);
    eprintln!("statements per read (3 rooms): {small:?}");
    assert!(small.iter().map(|(_, n)| n).sum::<u64>() > 0, "the counter counts: {small:?}");
    assert_eq!(counts(&fifty), small, "50 rooms against 3");
    assert_eq!(counts(&campus), small, "5,000 rooms against 3");
}
