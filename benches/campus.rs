//! Campus scale (SPEC §27): the reference site — 100 areas of 50 rooms in
//! three zones, 20,000 people, two years of bookings (3,000,000: a fifth
//! linked, a tenth in series) — loaded set-based straight into the tables
//! as an import would, then every bound of §27 measured beside a fresh
//! 3-room install carrying the same bookings per room (and the same
//! person's 500 future bookings), as ratios; then the open-loop mix of the
//! 400 people.
//!
//! Run: `cargo bench --bench campus` (release build, one yeyak process per
//! install in this process, keep-alive clients). `CAMPUS_ROOMS=500` makes a
//! smaller campus (bookings per room stay the same); `CAMPUS_KEEP=1` keeps
//! both databases and prints their names; `CAMPUS_DB=name` measures a kept
//! campus again without loading it (its `CAMPUS_ROOMS` must be given too).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{Days, NaiveDate, Utc};

mod common;
use common::{ms, pct, Bench, KEY};

/// Bookings per room over the two years (per room: 420 single, 60 in
/// series; per pair of neighbouring rooms: 240 linked).
const SINGLE_PER_ROOM: i64 = 42; // of every 73 days
const LINKED_PER_PAIR: i64 = 24; // of every 73 days
const PEOPLE: i64 = 20_000;
const PASSWORD: &str = "campus-pass-1";

/// One install under measure: yeyak, a signed-in admin browser, its app
/// password for CalDAV, and the names the measures use.
struct Site {
    label: &'static str,
    bench: Bench,
    admin: reqwest::Client,
    dav_password: String,
    rooms: i64,
}

/// The tables' secondary indexes, exclusion and foreign-key constraints and
/// user triggers, dropped while a load runs and rebuilt after it: building
/// a GiST index over the loaded rows is what makes the load take minutes.
const SAVE_AND_DROP: &str = "
SET maintenance_work_mem = '1GB';
CREATE TEMP TABLE campus_ddl AS
SELECT format('ALTER TABLE %I ADD CONSTRAINT %I %s', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid)) AS ddl,
       format('ALTER TABLE %I DROP CONSTRAINT %I', c.conrelid::regclass, c.conname) AS undo, 1 AS ord
  FROM pg_constraint c
 WHERE c.conrelid IN ('reservation'::regclass, 'reservation_room'::regclass, 'booking_event'::regclass)
   AND c.contype IN ('x', 'f')
UNION ALL
SELECT pg_get_indexdef(i.indexrelid), format('DROP INDEX %s', i.indexrelid::regclass), 0
  FROM pg_index i
 WHERE i.indrelid IN ('reservation'::regclass, 'reservation_room'::regclass, 'booking_event'::regclass)
   AND NOT i.indisprimary
   AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid);
DO $$ DECLARE d text; BEGIN
  FOR d IN SELECT undo FROM campus_ddl ORDER BY ord DESC LOOP EXECUTE d; END LOOP;
END $$;
ALTER TABLE reservation_room DISABLE TRIGGER USER;
ALTER TABLE booking_event DISABLE TRIGGER USER;";

const RESTORE: &str = "
ALTER TABLE reservation_room ENABLE TRIGGER USER;
ALTER TABLE booking_event ENABLE TRIGGER USER;
DO $$ DECLARE d text; BEGIN
  FOR d IN SELECT ddl FROM campus_ddl ORDER BY ord LOOP EXECUTE d; END LOOP;
END $$;
SELECT setval(pg_get_serial_sequence('reservation', 'id'), (SELECT max(id) FROM reservation));
SELECT setval(pg_get_serial_sequence('booking_series', 'id'), (SELECT COALESCE(max(id), 1) FROM booking_series));
ANALYZE;";

/// The catalogue: `본관` (rooms A, B, C) filled to 50, then areas of 50 in
/// three zones (the installation's, Berlin, New York), and the people.
/// Zones are written out: an area made after start-up without one would be
/// read as UTC until the next start settles it (`catalogue::areas::settle_zones`).
fn catalogue_sql(rooms: i64, hash: &str, home: &str) -> String {
    format!(
        "INSERT INTO area (code, name, time_zone, position)
         SELECT 'C' || lpad(a::text, 3, '0'), 'Campus ' || a,
                (ARRAY['{home}', 'Europe/Berlin', 'America/New_York'])[a % 3 + 1], a + 1
           FROM generate_series(1, greatest(({rooms} - 1) / 50, 0)) a;
         INSERT INTO room (code, name, area, position, capacity, equipment)
         SELECT 'R' || n, 'Room ' || n,
                CASE WHEN n <= 50 THEN '본관' ELSE 'C' || lpad(((n - 1) / 50)::text, 3, '0') END,
                (n - 1) % 50 + 1, 2 + n % 20,
                CASE WHEN n % 3 = 0 THEN ARRAY['projector'] ELSE '{{}}' END
           FROM generate_series(4, {rooms}) n;
         INSERT INTO staff_user (username, display_name, password_hash, email)
         SELECT 'p' || k, 'Person ' || k, '{hash}', 'p' || k || '@campus.example'
           FROM generate_series(1, {PEOPLE}) k;"
    )
}

/// Two years of bookings around today for every active room, in each
/// room's local time: singles 09:00-17:00, linked pairs at 17:00, weekly
/// series at 08:00. Ids are given (`OVERRIDING SYSTEM VALUE`), so one
/// plan feeds `reservation`, `reservation_room`, `booking_event` and
/// `booking_series` without a returning join.
fn bookings_sql(home: &str) -> String {
    format!(
        "CREATE TEMP TABLE campus_room AS
         SELECT r.code, row_number() OVER (ORDER BY r.area, r.position) AS n, r.position,
                lead(r.code) OVER (PARTITION BY r.area ORDER BY r.position) AS next_code,
                COALESCE(a.time_zone, '{home}') AS tz
           FROM room r JOIN area a ON a.code = r.area WHERE r.active;
         CREATE TEMP TABLE campus_people AS
         SELECT min(id) AS first_id FROM staff_user WHERE username LIKE 'p%';
         CREATE TEMP TABLE campus_plan AS
         WITH d0 AS (SELECT current_date - 365 AS d0),
         single AS (
           SELECT c.code AS room, NULL::text AS room2, c.tz, d0 + d AS day, (9 + (d + c.n) % 8)::int AS hour,
                  NULL::int AS series_no
             FROM campus_room c, d0, generate_series(0, 729) d
            WHERE (d * 7 + c.n) % 73 < {SINGLE_PER_ROOM}),
         linked AS (
           SELECT c.code, c.next_code, c.tz, d0 + d, 17, NULL::int
             FROM campus_room c, d0, generate_series(0, 729) d
            WHERE c.position % 2 = 1 AND c.next_code IS NOT NULL AND (d * 11 + c.n) % 73 < {LINKED_PER_PAIR}),
         series AS (
           SELECT c.code, NULL::text, c.tz, d0 - extract(isodow FROM d0)::int + 8 + (s * 17 + w) * 7 + (c.n % 5)::int, 8,
                  (c.n * 6 + s)::int
             FROM campus_room c, d0, generate_series(0, 5) s, generate_series(0, 9) w)
         SELECT row_number() OVER () + (SELECT COALESCE(max(id), 0) FROM reservation) AS id, room, room2, series_no,
                ((day + make_time(hour, 0, 0)) AT TIME ZONE tz) AS starts_at,
                ((day + make_time(hour + 1, 0, 0)) AT TIME ZONE tz) AS ends_at, tz
           FROM (SELECT * FROM single UNION ALL SELECT * FROM linked UNION ALL SELECT * FROM series) p;
         INSERT INTO booking_series (id, title, organizer_name, organizer_digest, organizer_staff_id, rooms,
                                     recurrence, starts_at, ends_at, timezone, created_at, updated_at)
         OVERRIDING SYSTEM VALUE
         SELECT series_no, 'Weekly ' || series_no, 'Person ' || (series_no % {PEOPLE} + 1),
                'campus-' || (series_no % {PEOPLE} + 1), (SELECT first_id FROM campus_people) + series_no % {PEOPLE},
                ARRAY[min(room)], 'FREQ=WEEKLY;COUNT=10', min(starts_at), min(ends_at), min(tz),
                min(starts_at) - interval '30 days', min(starts_at) - interval '30 days'
           FROM campus_plan WHERE series_no IS NOT NULL GROUP BY series_no;
         INSERT INTO reservation (id, title, organizer_name, organizer_digest, organizer_staff_id, starts_at, ends_at,
                                  created_at, updated_at, series_id, occurrence_start)
         OVERRIDING SYSTEM VALUE
         SELECT id, 'Meeting ' || id, 'Person ' || (id % {PEOPLE} + 1), 'campus-' || (id % {PEOPLE} + 1),
                (SELECT first_id FROM campus_people) + id % {PEOPLE}, starts_at, ends_at,
                starts_at - interval '7 days', starts_at - interval '7 days',
                series_no, CASE WHEN series_no IS NOT NULL THEN starts_at END
           FROM campus_plan;
         INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
         SELECT id, room, starts_at, ends_at, true FROM campus_plan
         UNION ALL
         SELECT id, room2, starts_at, ends_at, true FROM campus_plan WHERE room2 IS NOT NULL;
         INSERT INTO booking_event (reservation_id, at, action, actor, changes)
         SELECT id, starts_at - interval '7 days', 'created', 'Person ' || (id % {PEOPLE} + 1),
                jsonb_build_object(
                  'title', jsonb_build_object('before', null, 'after', 'Meeting ' || id),
                  'rooms', jsonb_build_object('before', null, 'after',
                           CASE WHEN room2 IS NULL THEN jsonb_build_array(room) ELSE jsonb_build_array(room, room2) END),
                  'startsAt', jsonb_build_object('before', null, 'after', starts_at),
                  'endsAt', jsonb_build_object('before', null, 'after', ends_at),
                  'status', jsonb_build_object('before', null, 'after', 'CONFIRMED'))
           FROM campus_plan;"
    )
}

/// The signed-in person's 500 future bookings, 20:00 in Seoul (a time no
/// loaded booking uses) in rooms A, B and C from tomorrow on: copies of the
/// one booked through the form (room A, tomorrow), so they carry the
/// person's own digest and id.
const PERSON_SQL: &str = "
INSERT INTO reservation (id, title, organizer_name, organizer_digest, organizer_staff_id, starts_at, ends_at,
                         created_at, updated_at)
OVERRIDING SYSTEM VALUE
SELECT (SELECT max(id) FROM reservation) + k, 'Mine ' || k, t.organizer_name, t.organizer_digest, t.organizer_staff_id,
       t.starts_at + (k / 3) * interval '1 day', t.ends_at + (k / 3) * interval '1 day', now(), now()
  FROM generate_series(1, 499) k, (SELECT * FROM reservation WHERE title = 'Mine 0') t;
INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
SELECT id, (ARRAY['A', 'B', 'C'])[substr(title, 6)::int % 3 + 1], starts_at, ends_at, true
  FROM reservation WHERE title LIKE 'Mine %' AND title <> 'Mine 0';
INSERT INTO booking_event (reservation_id, at, action, actor, changes)
SELECT id, created_at, 'created', organizer_name,
       jsonb_build_object('status', jsonb_build_object('before', null, 'after', 'CONFIRMED'))
  FROM reservation WHERE title LIKE 'Mine %' AND title <> 'Mine 0';";

async fn browser(base: &str, user: &str, password: &str) -> reqwest::Client {
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(8)
        .build()
        .unwrap();
    let login = client.get(format!("{base}/login")).send().await.unwrap().text().await.unwrap();
    let csrf = field(&login, "csrf_token");
    let res = client
        .post(format!("{base}/login"))
        .form(&[("username", user), ("password", password), ("csrf_token", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 303, "{user} signed in");
    client
}

fn field(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    html[html.find(&marker).unwrap_or_else(|| panic!("{name} in the page")) + marker.len()..]
        .split('"')
        .next()
        .unwrap()
        .to_owned()
}

fn tomorrow() -> NaiveDate {
    Utc::now().with_timezone(&chrono_tz::Asia::Seoul).date_naive() + Days::new(1)
}

/// Starts an install, loads it (`rooms` rooms, the same bookings per room),
/// books the admin's first booking through the form and copies it 499 times.
///
/// With `reuse`, the database an earlier run kept (`CAMPUS_KEEP=1`) is
/// measured again as it is: nothing is loaded, and what the earlier mixed
/// load booked (its bookings and their idempotency records) is deleted first.
async fn site(label: &'static str, rooms: i64, reuse: Option<String>) -> Site {
    let bench = match &reuse {
        Some(db) => Bench::start_on(db.clone(), |c| c.background = false).await,
        None => Bench::start_with(|c| c.background = false).await,
    };
    let started = Instant::now();
    let admin = if reuse.is_some() {
        // The earlier mix's bookings and the answers kept for their keys:
        // left behind, this run's same keys were answered 409.
        bench
            .sql(
                "DELETE FROM reservation WHERE title = 'load';
                 DELETE FROM idempotency_record WHERE idempotency_key LIKE 'mix-%'",
            )
            .await;
        browser(&bench.base, "admin", "yeyak-admin").await
    } else {
        load(&bench, rooms).await
    };
    // A floor of 1,000 desks with its plan (SPEC §28), beside the rooms.
    // Desks seat one; the searches ask for two or more, so they search the
    // rooms as before and the 3-room install still searches 3.
    common::desk_area(&bench, "D1", 1_000, tomorrow()).await;
    // Measure the site as it runs, not its load's aftermath: the dead rows
    // of a previous run's bookings vacuumed, the load's writes checkpointed.
    bench.sql("VACUUM ANALYZE reservation, reservation_room, booking_event").await;
    bench.sql("CHECKPOINT").await;
    // An app password for CalDAV.
    let account = admin.get(format!("{}/account", bench.base)).send().await.unwrap().text().await.unwrap();
    let made = admin
        .post(format!("{}/account/app-passwords", bench.base))
        .form(&[("label", "bench"), ("csrf_token", field(&account, "csrf_token").as_str())])
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let dav_password =
        made.split("<code class=\"secret\">").nth(1).unwrap().split("</code>").next().unwrap().to_owned();
    let count = |sql| bench.count(sql);
    eprintln!(
        "{label}: {} rooms, {} bookings ({} linked, {} in series), {} people, loaded in {:.0} s",
        count("SELECT count(*) AS n FROM room WHERE active").await,
        count("SELECT count(*) AS n FROM reservation").await,
        count(
            "SELECT count(*) AS n FROM (SELECT 1 FROM reservation_room GROUP BY reservation_id HAVING count(*) > 1) x"
        )
        .await,
        count("SELECT count(*) AS n FROM reservation WHERE series_id IS NOT NULL").await,
        count("SELECT count(*) AS n FROM staff_user").await,
        started.elapsed().as_secs_f64()
    );
    Site { label, bench, admin, dav_password, rooms }
}

/// Loads the catalogue, the people and the bookings into a fresh install;
/// the admin's browser, signed in.
async fn load(bench: &Bench, rooms: i64) -> reqwest::Client {
    let hash = yeyak::auth::hashing::hash_password(PASSWORD);
    let home = bench.state.policy().timezone.name().to_owned();
    bench.sql(&catalogue_sql(rooms, &hash, &home)).await;
    let admin = browser(&bench.base, "admin", "yeyak-admin").await;
    // The person's first booking, through the form: it carries their digest.
    let day = tomorrow();
    let page = admin.get(format!("{}/rooms?date={day}", bench.base)).send().await.unwrap().text().await.unwrap();
    let form = [
        ("title", "Mine 0".to_owned()),
        ("date", day.to_string()),
        ("start", "20:00".into()),
        ("end", "21:00".into()),
        ("rooms", "A".into()),
        ("csrf_token", field(&page, "csrf_token")),
        ("idempotency_key", field(&page, "idempotency_key")),
    ];
    let res = admin.post(format!("{}/bookings", bench.base)).form(&form).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 303, "the first booking");
    let load = format!("{SAVE_AND_DROP}\n{}\n{PERSON_SQL}\n{RESTORE}", bookings_sql(&home));
    bench.sql(&load).await;
    admin
}

/// Latencies of `n` sequential requests (after `warm` unmeasured ones).
async fn sequential(
    warm: usize,
    n: usize,
    mut send: impl FnMut() -> reqwest::RequestBuilder,
) -> Result<Vec<Duration>, String> {
    let mut lat = Vec::with_capacity(n);
    for i in 0..warm + n {
        let t = Instant::now();
        let res = send().timeout(Duration::from_secs(120)).send().await.map_err(|e| e.to_string())?;
        let status = res.status();
        let _ = res.bytes().await;
        if !(status.is_success() || status.as_u16() == 207) {
            return Err(format!("status {status}"));
        }
        if i >= warm {
            lat.push(t.elapsed());
        }
    }
    lat.sort();
    Ok(lat)
}

struct Measure {
    name: &'static str,
    bound: &'static str,
    bound_ms: f64,
    /// Whether the bound is on p99 (else on every request).
    p99: bool,
    warm: usize,
    n: usize,
}

async fn measure(site: &Site, m: &Measure) -> Result<Vec<Duration>, String> {
    let base = site.bench.base.clone();
    let day = tomorrow();
    let year_from = day - Days::new(365);
    // `본관`: 50 rooms on the campus, A, B and C on the small install (named
    // on both, since the desk floor is an area of its own).
    let area_of_50 = "&area=%EB%B3%B8%EA%B4%80";
    let admin = site.admin.clone();
    let api = site.bench.client.clone();
    let free_from = format!("{day}T10:00:00%2B09:00");
    let free_to = format!("{day}T11:00:00%2B09:00");
    let (dav_user, dav_password) = ("admin".to_owned(), site.dav_password.clone());
    match m.name {
        "day page, 50-room area" => {
            sequential(m.warm, m.n, || admin.get(format!("{base}/rooms?date={day}{area_of_50}"))).await
        }
        "week page, 50-room area" => {
            sequential(m.warm, m.n, || admin.get(format!("{base}/rooms/week?date={day}{area_of_50}"))).await
        }
        "free-room search, all rooms" => {
            sequential(m.warm, m.n, || {
                api.get(format!("{base}/api/rooms/free?from={free_from}&to={free_to}&minCapacity=2")).bearer_auth(KEY)
            })
            .await
        }
        "/find, all rooms" => {
            sequential(m.warm, m.n, || admin.get(format!("{base}/find?date={day}&start=10:00&end=11:00&capacity=2")))
                .await
        }
        "/my, 500 future bookings" => sequential(m.warm, m.n, || admin.get(format!("{base}/my"))).await,
        "room CalDAV PROPFIND Depth 1" => {
            sequential(m.warm, m.n, || {
                api.request(reqwest::Method::from_bytes(b"PROPFIND").unwrap(), format!("{base}/dav/calendars/rooms/A/"))
                    .basic_auth(&dav_user, Some(&dav_password))
                    .header("Depth", "1")
            })
            .await
        }
        "utilisation report, one area, a year" => {
            sequential(m.warm, m.n, || {
                api.get(format!("{base}/api/admin/reports/utilisation.csv?from={year_from}&to={day}{area_of_50}"))
                    .bearer_auth(common::ADMIN_KEY)
            })
            .await
        }
        "utilisation report, site, a year" => {
            sequential(m.warm, m.n, || {
                api.get(format!("{base}/api/admin/reports/utilisation.csv?from={year_from}&to={day}"))
                    .bearer_auth(common::ADMIN_KEY)
            })
            .await
        }
        "floor plan, 1,000 places (§28)" => {
            sequential(m.warm, m.n, || admin.get(format!("{base}/areas/D1/plan?date={day}"))).await
        }
        "GET /api/admin/consistency" => {
            sequential(m.warm, m.n, || api.get(format!("{base}/api/admin/consistency")).bearer_auth(common::ADMIN_KEY))
                .await
        }
        other => Err(format!("unknown measure {other}")),
    }
}

const MEASURES: &[Measure] = &[
    Measure { name: "day page, 50-room area", bound: "p99 < 30 ms", bound_ms: 30.0, p99: true, warm: 20, n: 300 },
    Measure { name: "week page, 50-room area", bound: "p99 < 60 ms", bound_ms: 60.0, p99: true, warm: 10, n: 200 },
    Measure { name: "free-room search, all rooms", bound: "p99 < 50 ms", bound_ms: 50.0, p99: true, warm: 20, n: 300 },
    Measure { name: "/find, all rooms", bound: "p99 < 50 ms", bound_ms: 50.0, p99: true, warm: 10, n: 200 },
    Measure { name: "/my, 500 future bookings", bound: "p99 < 30 ms", bound_ms: 30.0, p99: true, warm: 10, n: 200 },
    Measure { name: "room CalDAV PROPFIND Depth 1", bound: "< 50 ms", bound_ms: 50.0, p99: true, warm: 2, n: 30 },
    Measure {
        name: "utilisation report, one area, a year",
        bound: "< 1 s",
        bound_ms: 1_000.0,
        p99: false,
        warm: 1,
        n: 5,
    },
    Measure {
        name: "utilisation report, site, a year",
        bound: "< 10 s",
        bound_ms: 10_000.0,
        p99: false,
        warm: 0,
        n: 3,
    },
    Measure { name: "GET /api/admin/consistency", bound: "< 10 s", bound_ms: 10_000.0, p99: false, warm: 0, n: 3 },
    Measure {
        name: "floor plan, 1,000 places (§28)", bound: "< 100 ms", bound_ms: 100.0, p99: true, warm: 10, n: 200
    },
];

/// The open-loop mix: `views`, `searches` and `bookings` requests a second
/// for `secs`, each sent at its time whatever the others are doing, by
/// `people` signed-in browsers. Bookings take 21:00-22:00 local in a room
/// and day of their own (no loaded booking is that late, so none is
/// refused for time).
async fn mixed(site: &Site, people: usize, secs: u64) {
    let base = site.bench.base.clone();
    let mut browsers = Vec::new();
    for k in 0..people {
        browsers.push(browser(&base, &format!("p{}", k + 1), PASSWORD).await);
    }
    let browsers = Arc::new(browsers);
    let day = tomorrow();
    // Each room with its area's zone, as `catalogue_sql` made them.
    let zones = [chrono_tz::Asia::Seoul, chrono_tz::Europe::Berlin, chrono_tz::America::New_York];
    let rooms: Vec<(String, chrono_tz::Tz)> = (1..=site.rooms)
        .map(|n| {
            let code = if n <= 3 { ["A", "B", "C"][n as usize - 1].to_owned() } else { format!("R{n}") };
            let area = (n - 1) / 50;
            (code, if area == 0 { zones[0] } else { zones[(area % 3) as usize] })
        })
        .collect();
    let rooms = Arc::new(rooms);
    let areas = (site.rooms / 50).max(1);
    let booked = Arc::new(AtomicU64::new(0));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(&'static str, Option<Duration>, u16)>();
    let started = Instant::now();
    let kinds: [(&'static str, u64); 3] = [("page view", 100), ("search", 20), ("booking", 10)];
    let mut tasks = Vec::new();
    for (kind, rate) in kinds {
        let total = rate * secs;
        for i in 0..total {
            let at = started + Duration::from_micros(i * 1_000_000 / rate);
            let (base, browsers, rooms, booked, tx, api) =
                (base.clone(), browsers.clone(), rooms.clone(), booked.clone(), tx.clone(), site.bench.client.clone());
            tasks.push(tokio::spawn(async move {
                tokio::time::sleep_until(at.into()).await;
                let who = &browsers[(i as usize * 7 + kind.len()) % browsers.len()];
                let req = match kind {
                    "page view" => {
                        let area = i % areas as u64;
                        let date = day + Days::new(i % 30);
                        let area = if area == 0 { "%EB%B3%B8%EA%B4%80".to_owned() } else { format!("C{area:03}") };
                        if i % 5 == 4 {
                            who.get(format!("{base}/rooms/week?date={date}&area={area}"))
                        } else if i % 5 == 3 {
                            who.get(format!("{base}/my"))
                        } else {
                            who.get(format!("{base}/rooms?date={date}&area={area}"))
                        }
                    }
                    "search" => {
                        let date = day + Days::new(i % 30);
                        api.get(format!(
                            "{base}/api/rooms/free?from={date}T{:02}:00:00%2B09:00&to={date}T{:02}:00:00%2B09:00&minCapacity={}",
                            9 + i % 8,
                            10 + i % 8,
                            2 + i % 10
                        ))
                        .bearer_auth(KEY)
                    }
                    _ => {
                        let k = booked.fetch_add(1, Ordering::Relaxed);
                        let n = (k as usize * 37) % rooms.len();
                        let (room, zone) = &rooms[n];
                        let date = day + Days::new(2 + k / rooms.len() as u64);
                        let at = |h: u32| {
                            use chrono::TimeZone;
                            zone.from_local_datetime(&date.and_hms_opt(h, 0, 0).unwrap()).unwrap().to_rfc3339()
                        };
                        api.post(format!("{base}/api/bookings"))
                            .bearer_auth(KEY)
                            .header("X-Reservation-Owner", format!("load-{k}"))
                            .header("Idempotency-Key", format!("mix-{k}"))
                            .json(&serde_json::json!({
                                "title": "load",
                                "rooms": [room],
                                "startsAt": at(21),
                                "endsAt": at(22),
                            }))
                    }
                };
                let t = Instant::now();
                match req.timeout(Duration::from_secs(20)).send().await {
                    Ok(res) => {
                        let status = res.status().as_u16();
                        let _ = res.bytes().await;
                        let _ = tx.send((kind, Some(t.elapsed()), status));
                    }
                    Err(_) => {
                        let _ = tx.send((kind, None, 0));
                    }
                }
            }));
        }
    }
    drop(tx);
    let sampling = sample_activity(site.bench.db_url(), started + Duration::from_secs(secs));
    let cpu_before = cpu_seconds();
    for t in tasks {
        let _ = t.await;
    }
    let cpu = cpu_seconds();
    let wall = started.elapsed().as_secs_f64();
    let seen = sampling.await.unwrap_or_default();
    type Seen = (Vec<Duration>, usize, std::collections::BTreeMap<u16, usize>);
    let mut by_kind: std::collections::BTreeMap<&str, Seen> = Default::default();
    while let Some((kind, lat, status)) = rx.recv().await {
        let e = by_kind.entry(kind).or_default();
        match lat {
            Some(l) => {
                e.0.push(l);
                if !(200..400).contains(&status) {
                    *e.2.entry(status).or_default() += 1;
                }
            }
            None => e.1 += 1,
        }
    }
    println!("\n### {}: open-loop mix of {people} signed-in people for {secs} s", site.label);
    println!(
        "cores busy over the mix's {wall:.1} s: this process (yeyak and the clients) {:.2}, PostgreSQL {:.2}",
        (cpu.0 - cpu_before.0) / wall,
        (cpu.1 - cpu_before.1) / wall
    );
    println!("what PostgreSQL was running, sampled every 100 ms (statements at once, summed over the samples):");
    for (what, n) in seen.iter().take(6) {
        println!("  {n:>6}  {what}");
    }
    println!("| kind | per second | sent | answered | unanswered after 20 s | not 2xx/3xx | p50 ms | p99 ms | bound |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (kind, rate) in kinds {
        let (mut lat, lost, refused) = by_kind.remove(kind).unwrap_or_default();
        let refused = if refused.is_empty() {
            "0".to_owned()
        } else {
            refused.iter().map(|(s, n)| format!("{n}× {s}")).collect::<Vec<_>>().join(", ")
        };
        lat.sort();
        let bound = match kind {
            "page view" => "p99 < 30 ms (day), < 60 ms (week)",
            "search" => "p99 < 50 ms",
            _ => "p99 < 25 ms",
        };
        let (p50, p99) = if lat.is_empty() { (f64::NAN, f64::NAN) } else { (ms(pct(&lat, 0.5)), ms(pct(&lat, 0.99))) };
        println!(
            "| {kind} | {rate} | {} | {} | {lost} | {refused} | {p50:.1} | {p99:.1} | {bound} |",
            rate * secs,
            lat.len()
        );
    }
}

/// Samples the install's active statements every 100 ms until `until`:
/// each statement's wait (or `cpu`) and its first words, with how often
/// each was seen, most first. Says where the mix's time went in PostgreSQL.
fn sample_activity(url: String, until: Instant) -> tokio::task::JoinHandle<Vec<(String, usize)>> {
    tokio::spawn(async move {
        use diesel_async::RunQueryDsl;
        #[derive(diesel::QueryableByName)]
        struct Active {
            #[diesel(sql_type = diesel::sql_types::Text)]
            what: String,
        }
        let mut seen = std::collections::BTreeMap::<String, usize>::new();
        let Ok(mut conn) = yeyak::db::establish(&url).await else { return Vec::new() };
        while Instant::now() < until {
            let rows = diesel::sql_query(
                "SELECT coalesce(wait_event_type || ':' || wait_event, 'cpu') || '  '
                        || left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 90) AS what
                   FROM pg_stat_activity
                  WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()",
            )
            .load::<Active>(&mut conn)
            .await
            .unwrap_or_default();
            for row in rows {
                *seen.entry(row.what).or_default() += 1;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let mut seen: Vec<(String, usize)> = seen.into_iter().collect();
        seen.sort_by_key(|b| std::cmp::Reverse(b.1));
        seen
    })
}

/// CPU seconds used so far by this process and by all PostgreSQL
/// processes (user + system, from `/proc`; zero where it cannot be read).
fn cpu_seconds() -> (f64, f64) {
    // Fields after the command's closing parenthesis: utime and stime are
    // the 12th and 13th; clock ticks are 100 a second on Linux.
    let ticks = |stat: &str| -> f64 {
        let rest = stat.rsplit(')').next().unwrap_or("");
        let f: Vec<&str> = rest.split_whitespace().collect();
        let n = |k: usize| f.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        (n(11) + n(12)) / 100.0
    };
    let own = std::fs::read_to_string("/proc/self/stat").map(|s| ticks(&s)).unwrap_or(0.0);
    let mut pg = 0.0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let dir = entry.path();
        if std::fs::read_to_string(dir.join("comm")).is_ok_and(|c| c.trim() == "postgres") {
            pg += std::fs::read_to_string(dir.join("stat")).map(|s| ticks(&s)).unwrap_or(0.0);
        }
    }
    (own, pg)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let rooms: i64 = std::env::var("CAMPUS_ROOMS").ok().and_then(|v| v.parse().ok()).unwrap_or(5_000);
    let people: usize = std::env::var("CAMPUS_PEOPLE").ok().and_then(|v| v.parse().ok()).unwrap_or(400);
    let secs: u64 = std::env::var("CAMPUS_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    println!("## Campus: {rooms} rooms against 3, release build, one process each");
    println!(
        "machine: {} cores; started {}",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        Utc::now().format("%Y-%m-%d %H:%M UTC")
    );
    let small = site("3 rooms", 3, None).await;
    let campus = site("campus", rooms, std::env::var("CAMPUS_DB").ok()).await;
    println!();
    println!("| measure | bound | campus p50 ms | campus p99 (max) ms | 3 rooms p50 ms | 3 rooms p99 (max) ms | p99 ratio | holds |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for m in MEASURES {
        let a = measure(&campus, m).await;
        let b = measure(&small, m).await;
        match (a, b) {
            (Ok(a), Ok(b)) => {
                let q = if m.p99 { 0.99 } else { 1.0 };
                let (ca, cb) = (ms(pct(&a, q)), ms(pct(&b, q)));
                println!(
                    "| {} | {} | {:.1} | {ca:.1} | {:.1} | {cb:.1} | {:.1} | {} |",
                    m.name,
                    m.bound,
                    ms(pct(&a, 0.5)),
                    ms(pct(&b, 0.5)),
                    ca / cb,
                    if ca < m.bound_ms { "yes" } else { "**no**" }
                );
            }
            (a, b) => println!("| {} | {} | failed: {:?} | | {:?} | | | **no** |", m.name, m.bound, a.err(), b.err()),
        }
    }
    mixed(&campus, people, secs).await;
    mixed(&small, people.min(40), secs).await;
    if std::env::var("CAMPUS_KEEP").is_ok() {
        println!("kept: {} and {}", campus.bench.db, small.bench.db);
    } else {
        campus.bench.finish().await;
        small.bench.finish().await;
    }
}
