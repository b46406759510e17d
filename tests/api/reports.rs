//! Utilisation reports (SPEC §12): the page's numbers equal an independent
//! SQL computation; both CSVs parse with Python's csv module (BOM, Korean,
//! quotes, commas and semicolons intact); retired rooms are left out and
//! empty rooms kept; only admins (key or session) get them; bad ranges are
//! 400 and nothing else.

use chrono::{Datelike, Duration, NaiveDate};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use yeyak::clock::Clock;

use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};
use crate::web_rooms::staff_member;

// Titles are one line since SPEC §20; line breaks of older rows are in csv_quoting.rs.
const TITLE: &str = "주간 \"전략\" 회의, 1부; 둘째 줄";

/// The Monday at least a week after the test clock's day (Asia/Seoul).
pub(crate) fn monday(app: &TestApp) -> NaiveDate {
    let today = app.clock.now().with_timezone(&chrono_tz::Asia::Seoul).date_naive();
    let next = today + Duration::days(7);
    next - Duration::days(next.weekday().num_days_from_monday() as i64) + Duration::days(7)
}

fn seoul(day: NaiveDate, hh: u32, mm: u32) -> String {
    format!("{day}T{hh:02}:{mm:02}:00+09:00")
}

pub(crate) async fn book(app: &TestApp, key: &str, title: &str, rooms: &[&str], starts: String, ends: String) -> Value {
    let idem = uuid::Uuid::new_v4().to_string();
    let (status, b) = body(app.create_booking(key, "alice", &idem, &booking(title, rooms, &starts, &ends)).await).await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    b
}

/// Python's csv module reads the download (`utf-8-sig` drops the BOM).
pub(crate) fn python_csv(bytes: &[u8]) -> Vec<Vec<String>> {
    let file = std::env::temp_dir().join(format!("yeyak-report-{}.csv", uuid::Uuid::new_v4().simple()));
    std::fs::write(&file, bytes).unwrap();
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import csv, json, sys\n\
             with open(sys.argv[1], newline='', encoding='utf-8-sig') as f:\n    print(json.dumps(list(csv.reader(f, strict=True))))",
        ])
        .arg(&file)
        .output()
        .expect("python3 runs");
    let _ = std::fs::remove_file(&file);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The numeric cells of a room's row on the page.
pub(crate) fn page_row(html: &str, code: &str) -> Vec<String> {
    let start = html.find(&format!("<tr id=\"room-{code}\">")).unwrap_or_else(|| panic!("no row {code}"));
    let row = &html[start..start + html[start..].find("</tr>").unwrap()];
    row.split("<td class=\"num\">").skip(1).map(|c| c.split("</td>").next().unwrap().to_owned()).collect()
}

/// The report computed independently: each booking copy clipped against
/// each working window on its own (no multiranges), day of week by `dow`.
const EXPECTED: &str = "
WITH bounds AS (SELECT ($1::date)::timestamp AT TIME ZONE 'Asia/Seoul' AS lo,
                       ($2::date + 1)::timestamp AT TIME ZONE 'Asia/Seoul' AS hi),
windows AS (
  SELECT (g::date + time '09:00') AT TIME ZONE 'Asia/Seoul' AS s, (g::date + time '18:00') AT TIME ZONE 'Asia/Seoul' AS e
    FROM generate_series($1::date::timestamp, $2::date::timestamp, interval '1 day') g
   WHERE extract(dow FROM g) BETWEEN 1 AND 5),
copies AS (
  SELECT rr.room, rr.starts_at, rr.ends_at, r.status, r.starts_at AS booked_start
    FROM reservation_room rr JOIN reservation r ON r.id = rr.reservation_id)
SELECT room.code,
  (SELECT coalesce(sum(extract(epoch FROM least(c.ends_at, b.hi) - greatest(c.starts_at, b.lo))), 0)::float8
     FROM copies c, bounds b WHERE c.room = room.code AND c.status IN ('CONFIRMED', 'RELEASED')
      AND c.starts_at < b.hi AND c.ends_at > b.lo) AS booked,
  (SELECT coalesce(sum(extract(epoch FROM least(c.ends_at, w.e) - greatest(c.starts_at, w.s))), 0)::float8
     FROM copies c, windows w WHERE c.room = room.code AND c.status IN ('CONFIRMED', 'RELEASED')
      AND c.starts_at < w.e AND c.ends_at > w.s) AS working,
  (SELECT extract(epoch FROM sum(e - s))::float8 FROM windows) AS capacity,
  (SELECT count(*) FROM copies c, bounds b WHERE c.room = room.code AND c.status IN ('CONFIRMED', 'RELEASED')
      AND c.booked_start >= b.lo AND c.booked_start < b.hi) AS bookings,
  (SELECT count(*) FROM copies c, bounds b WHERE c.room = room.code AND c.status = 'CANCELLED'
      AND c.booked_start >= b.lo AND c.booked_start < b.hi) AS cancellations,
  (SELECT count(*) FROM copies c, bounds b WHERE c.room = room.code AND c.status = 'RELEASED'
      AND c.booked_start >= b.lo AND c.booked_start < b.hi) AS releases,
  -- Released time from the release's own history event (its end before and after).
  (SELECT coalesce(sum(extract(epoch FROM least((e.changes -> 'endsAt' ->> 'before')::timestamptz, b.hi)
                                        - greatest((e.changes -> 'endsAt' ->> 'after')::timestamptz, b.lo))), 0)::float8
     FROM booking_event e JOIN reservation_room rr ON rr.reservation_id = e.reservation_id, bounds b
    WHERE rr.room = room.code AND e.action = 'released'
      AND (e.changes -> 'endsAt' ->> 'before')::timestamptz > b.lo
      AND (e.changes -> 'endsAt' ->> 'after')::timestamptz < b.hi) AS released
  FROM room WHERE room.active ORDER BY room.area, room.position, room.code";

#[tokio::test]
async fn the_page_and_the_csv_equal_an_independent_computation_and_read_back_intact() {
    let app = TestApp::spawn().await;
    add_room(&app, json!({"code": "K", "name": "체크인 방", "checkInRequired": true})).await;
    add_room(&app, json!({"code": "P", "name": "임원실", "approvalRequired": true})).await;
    add_room(&app, json!({"code": "EMPTY", "name": "빈 방, \"조용한\" 곳", "area": "별관"})).await;
    add_room(&app, json!({"code": "OLD", "name": "없어질 방"})).await;
    let mon = monday(&app);
    let day = |n: i64| mon + Duration::days(n);
    let titled = book(&app, ADMIN, TITLE, &["A"], seoul(mon, 8, 0), seoul(mon, 10, 0)).await;
    book(&app, ADMIN, "연결", &["A", "B"], seoul(day(1), 13, 0), seoul(day(1), 15, 0)).await;
    book(&app, ADMIN, "토요일", &["B"], seoul(day(5), 10, 0), seoul(day(5), 12, 0)).await;
    book(&app, ADMIN, "전날 밤부터", &["C"], seoul(day(-1), 23, 0), seoul(mon, 1, 0)).await;
    book(&app, ADMIN, "퇴근 무렵", &["C"], seoul(day(2), 17, 0), seoul(day(2), 19, 30)).await;
    let cancelled = book(&app, ADMIN, "취소될 회의", &["C"], seoul(day(3), 9, 0), seoul(day(3), 10, 0)).await;
    let (status, _) =
        body(app.cancel_booking(ADMIN, "alice", cancelled["id"].as_i64().unwrap(), None, &json!({})).await).await;
    assert_eq!(status, StatusCode::OK);
    book(&app, TENANT_ONE, "승인 대기", &["P"], seoul(day(1), 9, 0), seoul(day(1), 12, 0)).await;
    book(&app, ADMIN, "노쇼", &["K"], seoul(day(3), 10, 0), seoul(day(3), 12, 0)).await;
    book(&app, ADMIN, "없어질 방 회의", &["OLD"], seoul(mon, 10, 0), seoul(mon, 11, 0)).await;
    let (status, _) =
        send(&app, Method::POST, "/api/rooms/OLD/retire", ADMIN, Some("retire"), json!({"cancelFutureBookings": true}))
            .await;
    assert_eq!(status, StatusCode::OK);
    // The no-show is released 15 minutes in: it keeps 16 minutes.
    let thursday_10 = chrono::DateTime::parse_from_rfc3339(&seoul(day(3), 10, 0)).unwrap().to_utc();
    app.clock.set(thursday_10 + Duration::minutes(15) + Duration::seconds(30));
    app.state.sweeper.tick().await.unwrap();

    let (from, to) = (mon.to_string(), day(6).to_string());
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let page = admin.get(&format!("/admin/reports?from={from}&to={to}")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.html);
    assert!(page.html.contains("role=\"img\"") && page.html.contains("<title>회의실별 업무시간 이용률"));
    assert!(
        page.html.contains(&format!("/api/admin/reports/utilisation.csv?from={from}&#38;to={to}")),
        "{}",
        &page.html[page.html.find("downloads").unwrap()..][..400]
    );
    assert!(page.html.contains(&format!("/api/admin/reports/bookings.csv?from={from}&#38;to={to}")));
    assert!(!page.html.contains("room-OLD"), "retired rooms are left out");

    let csv = app
        .http
        .get(app.url(&format!("/api/admin/reports/utilisation.csv?from={from}&to={to}")))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status(), StatusCode::OK);
    assert_eq!(csv.headers()["content-type"], "text/csv; charset=utf-8");
    assert_eq!(
        csv.headers()["content-disposition"],
        format!("attachment; filename=\"utilisation_{from}_{to}.csv\"").as_str()
    );
    let bytes = csv.bytes().await.unwrap();
    assert!(bytes.starts_with(b"\xEF\xBB\xBF"), "UTF-8 BOM first");
    let rows = python_csv(&bytes);
    assert_eq!(rows[0], yeyak::reports::csv::UTILISATION_HEADER.map(String::from).to_vec());

    let db = app.db().await;
    let expected = db.query(EXPECTED, &[&mon, &day(6)]).await.unwrap();
    let codes: Vec<String> = expected.iter().map(|r| r.get(0)).collect();
    assert_eq!(
        codes,
        ["EMPTY", "A", "B", "C", "K", "P"],
        "active rooms by area (별관 < 본관), then position; OLD left out"
    );
    assert_eq!(rows.len(), 1 + expected.len());
    for (row, csv_row) in expected.iter().zip(&rows[1..]) {
        let code: String = row.get(0);
        let (booked, working, capacity): (f64, f64, f64) = (row.get(1), row.get(2), row.get(3));
        let counts: [i64; 3] = [row.get(4), row.get(5), row.get(6)];
        // Nothing here books released time again: reused is zero.
        let released: f64 = row.get(7);
        let share = if capacity > 0.0 { working * 100.0 / capacity } else { 0.0 };
        assert_eq!(
            page_row(&page.html, &code),
            vec![
                format!("{:.1}", booked / 3600.0),
                format!("{share:.1}%"),
                counts[0].to_string(),
                counts[1].to_string(),
                counts[2].to_string(),
                format!("{:.1}", released / 3600.0),
                "0.0".to_owned(),
                "0.0%".to_owned()
            ],
            "page row of {code}"
        );
        assert_eq!(csv_row[0], code);
        let numbers: Vec<String> = csv_row[3..].to_vec();
        assert_eq!(
            numbers,
            vec![
                format!("{:.2}", booked / 3600.0),
                format!("{:.2}", working / 3600.0),
                format!("{:.2}", capacity / 3600.0),
                format!("{share:.1}"),
                counts[0].to_string(),
                counts[1].to_string(),
                counts[2].to_string(),
                format!("{:.2}", released / 3600.0),
                "0.00".to_owned()
            ],
            "CSV row of {code}"
        );
    }
    // Worked by hand: A 08–10 Monday (1 h in working hours) + A+B Tuesday 13–15.
    assert_eq!(page_row(&page.html, "A")[..3], ["4.0", "6.7%", "2"]);
    // B: the linked booking once, Saturday's two hours outside working days.
    assert_eq!(page_row(&page.html, "B")[..3], ["4.0", "4.4%", "2"]);
    // C: 1 h after Sunday midnight (counted by start on Sunday: not a booking of
    // the range), 17:00–19:30 Wednesday (1 h working), one cancellation.
    assert_eq!(page_row(&page.html, "C"), ["3.5", "2.2%", "1", "1", "0", "0.0", "0.0", "0.0%"]);
    // K: 10:00–12:00 released after 16 minutes, giving back 1 h 44 min
    // nobody booked again; P: pending only; EMPTY: nothing.
    assert_eq!(page_row(&page.html, "K"), ["0.3", "0.6%", "1", "0", "1", "1.7", "0.0", "0.0%"]);
    assert_eq!(page_row(&page.html, "P"), ["0.0", "0.0%", "0", "0", "0", "0.0", "0.0", "0.0%"]);
    assert_eq!(page_row(&page.html, "EMPTY"), ["0.0", "0.0%", "0", "0", "0", "0.0", "0.0", "0.0%"]);
    assert_eq!(rows[1][1], "빈 방, \"조용한\" 곳", "a name with a comma and quotes round-trips");

    // The bookings list: every booking starting in the range, titles intact.
    let res = app
        .http
        .get(app.url(&format!("/api/admin/reports/bookings.csv?from={from}&to={to}")))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.headers()["content-disposition"],
        format!("attachment; filename=\"bookings_{from}_{to}.csv\"").as_str()
    );
    let bytes = res.bytes().await.unwrap();
    assert!(bytes.starts_with(b"\xEF\xBB\xBF"));
    assert!(bytes.windows(2).any(|w| w == b"\r\n"), "CRLF records");
    let rows = python_csv(&bytes);
    assert_eq!(rows[0], yeyak::reports::csv::BOOKINGS_HEADER.map(String::from).to_vec());
    let first = &rows[1];
    assert_eq!(first[0], titled["id"].to_string());
    assert_eq!(
        (first[1].as_str(), first[2].as_str(), first[3].as_str()),
        (format!("{mon} 08:00:00").as_str(), format!("{mon} 10:00:00").as_str(), "A")
    );
    assert_eq!(first[4], TITLE, "Korean, quotes, a comma and a semicolon round-trip");
    let statuses: Vec<(&str, &str)> = rows[1..].iter().map(|r| (r[3].as_str(), r[6].as_str())).collect();
    assert_eq!(
        statuses,
        [
            ("A", "CONFIRMED"),
            ("OLD", "CANCELLED"),
            ("P", "PENDING"),
            ("A+B", "CONFIRMED"),
            ("C", "CONFIRMED"),
            ("C", "CANCELLED"),
            ("K", "RELEASED"),
            ("B", "CONFIRMED")
        ],
        "by start; the Sunday-night booking starts before the range"
    );
    let released = rows.iter().find(|r| r[6] == "RELEASED").unwrap();
    assert_eq!(released[2], format!("{} 10:16:00", day(3)), "its shortened end");
}

#[tokio::test]
async fn only_admins_get_reports_by_key_or_by_session() {
    let app = TestApp::spawn().await;
    let paths = ["/api/admin/reports/utilisation.csv", "/api/admin/reports/bookings.csv"];
    for path in paths {
        let res = app.http.get(app.url(path)).bearer_auth(TENANT_ONE).send().await.unwrap();
        let (status, err) = body(res).await;
        assert_eq!((status, err["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")), "{path}");
        let (status, err) = body(app.http.get(app.url(path)).send().await.unwrap()).await;
        assert_eq!((status, err["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("UNAUTHENTICATED")), "{path}");
        let res = app.http.get(app.url(path)).bearer_auth("not-a-key").send().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    }
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let staff = staff_member(&app, &admin, "kim").await;
    let page = staff.get("/admin/reports").await;
    assert_eq!(page.status, StatusCode::FORBIDDEN);
    assert!(!page.html.contains("room-A"));
    for path in paths {
        let res = staff.client.get(app.url(path)).send().await.unwrap();
        let (status, err) = body(res).await;
        assert_eq!((status, err["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")), "staff on {path}");
        // A signed-in admin clicking the page's link gets the file.
        let res = admin.client.get(app.url(path)).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "admin session on {path}");
        assert!(res.bytes().await.unwrap().starts_with(b"\xEF\xBB\xBF"));
    }
    // The default range is the last four weeks, ending today.
    let page = admin.get("/admin/reports").await;
    assert_eq!(page.status, StatusCode::OK);
    let today = app.clock.now().with_timezone(&chrono_tz::Asia::Seoul).date_naive();
    assert!(page.html.contains(&format!("value=\"{}\"", today - Duration::days(27))));
    assert!(page.html.contains(&format!("value=\"{today}\"")));
    assert!(page.html.contains("href=\"/admin/reports\""), "linked from the admin navigation");
    let anonymous = Browser::new(&app).get("/admin/reports").await;
    assert_eq!(anonymous.status, StatusCode::SEE_OTHER);

    let doc: Value = app.http.get(app.url("/api/openapi.json")).send().await.unwrap().json().await.unwrap();
    for (path, id) in [(paths[0], "utilisationReport"), (paths[1], "bookingsReport")] {
        let op = &doc["paths"][path]["get"];
        assert_eq!(op["operationId"], id);
        assert_eq!(op["tags"], json!(["admin"]));
        assert!(op["responses"]["200"]["content"]["text/csv"].is_object(), "{op}");
    }
}

#[tokio::test]
async fn bad_ranges_are_400_naming_the_field_and_nothing_else() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let cases = [
        ("from=2026-13-01&to=2026-12-31", "from"),
        ("from=2026-11-01&to=tomorrow", "to"),
        ("from=2026-1-1", "from"),
        ("from=%2B12026-01-01&to=2026-01-01", "from"),
        ("from=2026-11-02&to=2026-11-01", "to"),
        ("from=2025-01-01&to=2026-01-02", "to"),
        ("to=0000-01-01", "to"),
    ];
    let before = app.count("SELECT count(*) FROM reservation").await;
    for (query, field) in cases {
        for path in ["/api/admin/reports/utilisation.csv", "/api/admin/reports/bookings.csv"] {
            let res = app.http.get(app.url(&format!("{path}?{query}"))).bearer_auth(ADMIN).send().await.unwrap();
            assert_eq!(res.headers()["content-type"], "application/json", "{path}?{query}");
            let (status, err) = body(res).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{path}?{query}: {err}");
            assert_eq!(err["code"], "MALFORMED_REQUEST");
            assert_eq!(err["details"]["field"], field, "{path}?{query}");
        }
        let page = admin.get(&format!("/admin/reports?{query}")).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "page ?{query}");
        assert!(page.html.contains("role=\"alert\"") && !page.html.contains("<svg"), "{query}");
    }
    // A leap year is the longest range allowed.
    let res = app
        .http
        .get(app.url("/api/admin/reports/utilisation.csv?from=2024-01-01&to=2024-12-31"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, before, "reading changes nothing");
}
