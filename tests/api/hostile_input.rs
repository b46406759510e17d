//! No request stops the server (SPEC §22), in-process: times that cannot be
//! represented, per-request work bounded by counts, throttles that count a
//! person once whatever the spelling and never lock out a correct app
//! password, the panic counter, and answers to addresses nobody routes.
//! (Bodies deep enough to overflow a stack go to the real binary instead:
//! `tests/hostile_process.rs`.)

use reqwest::StatusCode;

use crate::caldav::{invite, Dav};
use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

fn yeyak_code(body: &str) -> String {
    body.split("<Y:code>").nth(1).and_then(|s| s.split("</Y:code>").next()).unwrap_or_default().to_owned()
}

fn vcalendar(body: &str) -> String {
    format!("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//hostile//EN\r\n{body}END:VCALENDAR\r\n")
}

#[tokio::test]
async fn a_duration_past_any_date_is_refused_as_calendar_data_and_a_long_one_as_too_long() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let start = at(1, 1, 0).replace(['-', ':'], "")[..15].to_owned() + "Z";
    let event = |duration: &str| {
        vcalendar(&format!(
            "BEGIN:VEVENT\r\nUID:long@client\r\nDTSTAMP:20300101T000000Z\r\nDTSTART:{start}\r\nDURATION:{duration}\r\n\
             SUMMARY:길다\r\nATTENDEE;CUTYPE=ROOM:mailto:room-a@yeyak.local\r\nEND:VEVENT\r\n"
        ))
    };
    // It panicked inside the request before (`DateTime + TimeDelta` overflowed): no answer.
    let res = dav.put("long.ics", &event("P99999999W"), &[]).await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.body);
    assert!(res.body.contains("valid-calendar-data"), "{}", res.body);
    for years in ["P1Y", "PT1.5S"] {
        let res = dav.put("long.ics", &event(years), &[]).await;
        assert_eq!(res.status, StatusCode::BAD_REQUEST, "RFC 5545 has no {years}: {}", res.body);
    }
    // Representable but longer than any room allows: the event is kept and
    // the room declines with the booking rule's code (SPEC §22, §23).
    let res = dav.put("long.ics", &event("P10W"), &[]).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let got = dav.send("GET", "/dav/calendars/kim/bookings/long.ics", &[], "").await.body.replace("\r\n ", "");
    assert!(got.contains("PARTSTAT=DECLINED") && got.contains("X-YEYAK-CODE=BOOKING_TOO_LONG"), "{got}");
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 0, "nothing booked from it");
}

/// A multiget of `n` hrefs of kim's collection (one real member among them).
fn multiget(n: usize, real: &str) -> String {
    let mut hrefs = format!("<D:href>/dav/calendars/kim/bookings/{real}</D:href>");
    for i in 1..n {
        hrefs.push_str(&format!("<D:href>/dav/calendars/kim/bookings/none-{i}.ics</D:href>"));
    }
    format!(
        r#"<?xml version="1.0"?><C:calendar-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
           <D:prop><D:getetag/><C:calendar-data/></D:prop>{hrefs}</C:calendar-multiget>"#
    )
}

#[tokio::test]
async fn a_multiget_takes_at_most_1000_hrefs_in_statements_that_do_not_grow_with_them() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let res = dav.put("m.ics", &invite("m@client", "회의", &["A"], 1, 1, 2), &[]).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let path = "/dav/calendars/kim/bookings/";
    let statements = || app.state.db_stats.statements();
    let mut cost = Vec::new();
    for n in [2, 1_000] {
        let before = statements();
        let res = dav.report(path, &multiget(n, "m.ics")).await;
        cost.push(statements() - before);
        assert_eq!(res.status, StatusCode::MULTI_STATUS, "{}", &res.body[..res.body.len().min(500)]);
        assert_eq!(res.body.matches("<D:response>").count(), n, "one response per href");
        assert_eq!(res.body.matches("404 Not Found").count(), n - 1);
        assert!(res.body.contains("SUMMARY:회의"));
    }
    // 4,681 hrefs cost ~9,400 statements before: two per href.
    assert_eq!(cost[0], cost[1], "statements for 2 and 1,000 hrefs");
    let res = dav.report(path, &multiget(1_001, "m.ics")).await;
    assert_eq!((res.status, yeyak_code(&res.body).as_str()), (StatusCode::BAD_REQUEST, "TOO_MANY_HREFS"));
}

#[tokio::test]
async fn free_busy_names_at_most_50_attendees_over_at_most_366_days() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let question = |attendees: usize, end: &str| {
        let lines: String =
            (0..attendees).map(|i| format!("ATTENDEE:mailto:room-{}@yeyak.local\r\n", ["a", "b"][i % 2])).collect();
        vcalendar(&format!(
            "METHOD:REQUEST\r\nBEGIN:VFREEBUSY\r\nUID:fb@client\r\nDTSTAMP:20300101T000000Z\r\n\
             DTSTART:20300101T000000Z\r\nDTEND:{end}\r\nORGANIZER:mailto:kim@example.com\r\n{lines}END:VFREEBUSY\r\n"
        ))
    };
    let outbox = "/dav/calendars/kim/outbox/";
    let dav = &dav;
    let post =
        |body: String| async move { dav.send("POST", outbox, &[("Content-Type", "text/calendar")], &body).await };
    let res = post(question(50, "20301231T000000Z")).await;
    assert_eq!(res.status, StatusCode::OK, "{}", &res.body[..res.body.len().min(400)]);
    assert_eq!(res.body.matches("2.0;Success").count(), 50);
    // 7,249 attendees answered 4 MB before.
    let res = post(question(51, "20301231T000000Z")).await;
    assert_eq!((res.status, yeyak_code(&res.body).as_str()), (StatusCode::BAD_REQUEST, "TOO_MANY_ATTENDEES"));
    let res = post(question(1, "20310102T000001Z")).await;
    assert_eq!((res.status, yeyak_code(&res.body).as_str()), (StatusCode::BAD_REQUEST, "WINDOW_TOO_LONG"));
    // The same window bound on a room's free-busy-query.
    let query = |end: &str| {
        format!(
            r#"<?xml version="1.0"?><C:free-busy-query xmlns:C="urn:ietf:params:xml:ns:caldav">
               <C:time-range start="20300101T000000Z" end="{end}"/></C:free-busy-query>"#
        )
    };
    let room = "/dav/calendars/rooms/A/";
    assert_eq!(dav.report(room, &query("20301231T000000Z")).await.status, StatusCode::OK);
    let res = dav.report(room, &query("20310102T000001Z")).await;
    assert_eq!((res.status, yeyak_code(&res.body).as_str()), (StatusCode::BAD_REQUEST, "WINDOW_TOO_LONG"));
}

#[tokio::test]
async fn a_calendar_query_with_only_a_start_or_only_an_end_is_answered() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let res = dav.put("q.ics", &invite("q@client", "질의", &["A"], 1, 1, 2), &[]).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let query = |range: &str| {
        format!(
            r#"<?xml version="1.0"?><C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
               <D:prop><D:getetag/></D:prop><C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT">
               <C:time-range {range}/></C:comp-filter></C:comp-filter></C:filter></C:calendar-query>"#
        )
    };
    // Only `end` answered 500 before (chrono's minimum instant is no PostgreSQL timestamp).
    for (range, found) in [
        ("end=\"20990101T000000Z\"", 1),
        ("end=\"20000101T000000Z\"", 0),
        ("start=\"20000101T000000Z\"", 1),
        ("start=\"20990101T000000Z\"", 0),
        ("start=\"00010101T000000Z\"", 1),
        ("end=\"99991231T235959Z\"", 1),
    ] {
        let res = dav.report("/dav/calendars/kim/bookings/", &query(range)).await;
        assert_eq!(res.status, StatusCode::MULTI_STATUS, "{range}: {}", res.body);
        assert_eq!(res.body.matches("<D:response>").count(), found, "{range}: {}", res.body);
    }
}

/// A sign-in from `address` (with `YEYAK_TRUST_PROXY`).
async fn sign_in_from(app: &TestApp, address: &str, user: &str, password: &str) -> StatusCode {
    let login = Browser::new(app).get("/login").await;
    let nonce = login.cookie_value("yeyak_csrf").unwrap();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(app.url("/login"))
        .header("Cookie", format!("yeyak_csrf={nonce}"))
        .header("X-Forwarded-For", address)
        .form(&[("username", user), ("password", password), ("csrf_token", &login.field("csrf_token"))])
        .send()
        .await
        .unwrap()
        .status()
}

#[tokio::test]
async fn every_spelling_of_a_username_shares_one_throttle_and_one_account() {
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    // Ten failures under ten spellings, each from an address of its own (so
    // only the username's count can lock): the lock is the person's.
    for (i, spelling) in ["ADMIN", "Admin", "aDmin", "adMin", "admIn", "admiN", "ADmin", "AdMin", "AdmIn", "AdmiN"]
        .into_iter()
        .enumerate()
    {
        let status = sign_in_from(&app, &format!("198.51.100.{}", i + 1), spelling, "wrong-guess").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{spelling}");
    }
    let rows = app.count("SELECT count(*) FROM staff_login_throttle").await;
    assert_eq!(rows, 1, "one row for every spelling");
    assert_eq!(
        sign_in_from(&app, "198.51.100.99", ADMIN_USER, ADMIN_PASSWORD).await,
        StatusCode::TOO_MANY_REQUESTS,
        "the lock holds for the lowercase spelling too"
    );
    // The account itself is found under any spelling.
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    assert_eq!(sign_in_from(&app, "198.51.100.1", "ADMIN", ADMIN_PASSWORD).await, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_locked_username_never_refuses_a_correct_app_password() {
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let dav = Dav::person(&app, "kim").await;
    let propfind = |address: &'static str, password: String| {
        let app = &app;
        async move {
            app.http
                .request(reqwest::Method::from_bytes(b"PROPFIND").unwrap(), app.url("/dav/calendars/kim/bookings/"))
                .basic_auth("kim", Some(password))
                .header("Depth", "0")
                .header("X-Forwarded-For", address)
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    // A stranger, spread over addresses, locks the username.
    for i in 0..12 {
        let address: &'static str = Box::leak(format!("192.0.2.{}", i + 1).into_boxed_str());
        propfind(address, format!("yp_wrong{i:0>48}")).await;
    }
    let locked: i64 = app.count("SELECT count(*) FROM staff_login_throttle WHERE locked_until IS NOT NULL").await;
    assert_eq!(locked, 1, "the username is locked");
    // kim's calendar app still opens with its app password (it got 429 for 15 minutes before)…
    assert_eq!(propfind("203.0.113.7", dav.password.clone()).await, StatusCode::MULTI_STATUS);
    // …while a password sign-in of the same name stays locked.
    assert_eq!(sign_in_from(&app, "203.0.113.7", "kim", "correct-horse-1").await, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_parallel_burst_of_wrong_app_passwords_from_one_address_is_checked_no_more_than_the_limit() {
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let _dav = Dav::person(&app, "kim").await;
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(40));
    let burst = (0..40).map(|i| {
        let (app, barrier) = (&app, barrier.clone());
        async move {
            let req = app
                .http
                .request(reqwest::Method::from_bytes(b"PROPFIND").unwrap(), app.url("/dav/calendars/kim/bookings/"))
                .basic_auth("kim", Some(format!("yp_wrong{i:0>48}")))
                .header("Depth", "0")
                .header("X-Forwarded-For", "203.0.113.40");
            barrier.wait().await;
            req.send().await.unwrap().status()
        }
    });
    let answers = futures_util::future::join_all(burst).await;
    let checked = answers.iter().filter(|s| **s == StatusCode::UNAUTHORIZED).count();
    let refused = answers.iter().filter(|s| **s == StatusCode::TOO_MANY_REQUESTS).count();
    // 19 of 40 were checked against a limit of 5 before.
    assert_eq!((checked, refused), (5, 35), "{answers:?}");
}

#[tokio::test]
async fn panics_are_counted_from_the_start_and_unrouted_addresses_answer_in_their_doors_format() {
    let app = TestApp::spawn().await;
    let metrics = app.http.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.lines().any(|l| l == "yeyak_panics_total 0"), "{metrics}");
    // A page address nobody routes: a page in yeyak's look, in the reader's language, with a way home.
    for (lang, words) in [("ko", "이 주소에는 페이지가 없습니다"), ("en", "There is no page at this address")]
    {
        let res = app.http.get(app.url("/no/such/page")).header("Accept-Language", lang).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        assert!(res.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
        let html = res.text().await.unwrap();
        assert!(html.contains(words) && html.contains("href=\"/\""), "{html}");
    }
    let res = app.http.get(app.url("/api/no/such/route")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    assert_eq!(body(res).await.1["code"], "NOT_FOUND");
    let dav = Dav::person(&app, "kim").await;
    let res = dav.send("PROPFIND", "/dav/no/such/thing/", &[("Depth", "0")], "").await;
    assert_eq!((res.status, yeyak_code(&res.body).as_str()), (StatusCode::NOT_FOUND, "NOT_FOUND"), "{}", res.body);
}

#[tokio::test]
async fn a_nul_byte_in_any_text_is_refused_as_malformed_never_a_500() {
    let app = TestApp::spawn().await;
    // PostgreSQL cannot store a NUL: from a path, a query, a JSON body and a
    // CalDAV path alike it reached the database and answered 500 before.
    let page = app.http.get(app.url("/display/%00?token=x")).send().await.unwrap();
    assert!(page.status().is_client_error(), "a display path: {}", page.status());
    for path in ["/api/rooms/%00/availability?date=2030-01-07", "/api/bookings?room=%00", "/api/rooms/%00"] {
        let (status, body) = app.get_json(path, ADMIN).await;
        assert!(status.is_client_error(), "{path}: {status} {body}");
    }
    let patch = send(
        &app,
        reqwest::Method::PATCH,
        "/api/rooms/A",
        ADMIN,
        Some("nul-1"),
        serde_json::json!({"area": "a\u{0}b"}),
    );
    let (status, body) = patch.await;
    assert!(status.is_client_error(), "a JSON body: {status} {body}");
    let dav = Dav::person(&app, "kim").await;
    let res = dav.send("GET", "/dav/calendars/kim/bookings/a%00b.ics", &[], "").await;
    assert!(res.status.is_client_error(), "a CalDAV member: {} {}", res.status, res.body);
    app.assert_consistent().await;
}
