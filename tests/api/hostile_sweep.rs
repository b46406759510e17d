//! Any request up to the size limits, to any route, with any method and
//! headers, gets an answer (SPEC §22): every route of the route table and
//! of the OpenAPI document, and the CalDAV door's resources, each asked
//! with several methods, garbage bodies (up to each door's limit) and odd
//! headers. Nothing is left unanswered, nothing answers 500, `/readyz`
//! stays 200 and the database stays consistent.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reqwest::StatusCode;

use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

/// Every (method, path pattern) of `src/routes.rs` and the route functions it configures.
fn page_routes() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let table = std::fs::read_to_string(root.join("src/routes.rs")).unwrap();
    let mut sources = vec![table.clone()];
    for part in table.split(".configure(ui::").skip(1) {
        let module = part.split("::").next().unwrap();
        sources.push(std::fs::read_to_string(root.join(format!("src/web/{module}.rs"))).unwrap());
    }
    let mut routes = Vec::new();
    for source in sources {
        for part in source.split(".route(\"").skip(1) {
            let (path, rest) = part.split_once('"').unwrap();
            let method = rest.split("web::").nth(1).and_then(|m| m.split("()").next()).unwrap_or("route");
            let method = if method == "route" { "PROPFIND".to_owned() } else { method.to_uppercase() };
            routes.push((method, path.replace("\\\\", "\\")));
        }
    }
    routes.sort();
    routes.dedup();
    routes
}

/// What a `{param}` of a pattern is filled with.
const SEGMENTS: &[&str] = &["1", "A", "0", "-1", "99999999999999999999", "%00", "..%2F..", "%ED%95%9C", "x.ics", "'"];

/// Concrete paths for a pattern: each parameter filled with a few odd values.
fn fill(pattern: &str, rng: &mut StdRng) -> Vec<String> {
    (0..3)
        .map(|_| {
            let mut out = String::new();
            let mut rest = pattern;
            while let Some(open) = rest.find('{') {
                out.push_str(&rest[..open]);
                let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
                // Half the time an id that exists, so the request reaches its handler.
                let segment = if rng.gen_bool(0.5) {
                    SEGMENTS[rng.gen_range(0..2)]
                } else {
                    SEGMENTS[rng.gen_range(0..SEGMENTS.len())]
                };
                out.push_str(segment);
                rest = &rest[close..];
            }
            out.push_str(rest);
            out
        })
        .collect()
}

/// A body of one of several hostile kinds, at most `limit` bytes; forms
/// carry the signed-in person's real CSRF token, so they reach the handler.
fn garbage(rng: &mut StdRng, limit: usize, csrf: &str) -> (Vec<u8>, &'static str) {
    let form = |fields: &str| format!("{fields}&csrf_token={csrf}&idempotency_key=sweep-{}", rng_id()).into_bytes();
    match rng.gen_range(0..12) {
        9 => (form("date=262143-12-31&start=25:61&end=00:00&rooms=A&title=x&repeat=weekly&repeat_until=99999-12-31"), "application/x-www-form-urlencoded"),
        10 => (form("date=2030-01-07&start=10:00&end=10:00&rooms=A&rooms=A&title=%00%01&minutes=99999999999&code=A%2F..&capacity=1e99&position=-1&max_duration_minutes=99999999999&horizon_days=-1&label=%ED&language=xx&password=&username=..&display_name=%FF"), "application/x-www-form-urlencoded"),
        11 => (form(&format!("title={}&date=2030-01-07&start=10:00&end=11:00&rooms=A", "%EA%B0%80".repeat(limit / 30))), "application/x-www-form-urlencoded"),
        0 => (Vec::new(), "application/json"),
        1 => ((0..rng.gen_range(1..4096)).map(|_| rng.gen::<u8>()).collect(), "application/octet-stream"),
        2 => (vec![b'x'; limit], "application/x-www-form-urlencoded"),
        3 => (format!("{}{}", "[".repeat(limit / 2 - 1), "]".repeat(limit / 2 - 1)).into_bytes(), "application/json"),
        4 => (b"{\"rooms\":[\"A\"],\"startsAt\":\"+262143-12-31T23:59:00Z\",\"endsAt\":\"-262144-01-01T00:00:00Z\",\"title\":\"\xff\"}".to_vec(), "application/json"),
        5 => (b"date=262143-12-31&start=25:61&end=99:99&rooms=A&title=%00&repeat=weekly&repeat_until=99999-01-01&csrf_token=x".to_vec(), "application/x-www-form-urlencoded"),
        6 => ("<a>".repeat(limit / 7).into_bytes(), "application/xml"),
        7 => (b"BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:99991231T235959Z\r\nDURATION:P4294967295W\r\nRRULE:FREQ=SECONDLY;INTERVAL=0;COUNT=4294967295\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n".to_vec(), "text/calendar"),
        8 => (b"\xef\xbb\xbf{\"a\":1e99999999,\"b\":-0,\"c\":\"\\ud800\"}".to_vec(), "application/json; charset=utf-16"),
        _ => (b"{\"rooms\":[\"A\"],\"startsAt\":\"2030-01-07T10:00:00Z\",\"endsAt\":\"2030-01-07T10:00:00Z\",\"title\":\"\\u0000\",\"repeat\":{\"frequency\":\"DAILY\",\"interval\":4294967295,\"count\":4294967295,\"until\":\"9999-12-31\"},\"quantity\":-9223372036854775808,\"minutes\":1e308}".to_vec(), "application/json"),
    }
}

/// `admin:yeyak-admin` for HTTP Basic.
fn base64_admin() -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("{ADMIN_USER}:{ADMIN_PASSWORD}"))
}

/// A fresh idempotency key's tail.
fn rng_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Odd query strings: dates past what calendars hold, broken numbers, odd languages.
const QUERIES: &[&str] = &[
    "",
    "?date=262143-12-31&area=%00",
    "?date=-262144-01-01",
    "?date=9999-12-31&lang=en",
    "?from=262143-12-31T00:00:00Z&to=-0001-01-01T00:00:00Z",
    "?from=2030-01-01T00:00:00Z&to=2030-01-01T00:00:00Z&limit=99999999999&cursor=-1",
    "?date=2030-02-30&start=24:00&end=00:00&rooms=A&capacity=-1&equipment=%FF",
    "?token=x&lang=%ED%95%9C&next=//evil.example&bookingId=1e9",
    "?minutes=99999999999&unit=xx&x=y&x=z",
];

/// Odd headers added to a request; `signed_in`: with the credentials its
/// door takes (a hostile staff member's request gets past the door).
fn odd_headers(rng: &mut StdRng, session: &str, path: &str, signed_in: bool) -> Vec<(&'static str, String)> {
    let mut headers = Vec::new();
    if signed_in {
        headers.push(("Cookie", session.to_owned()));
        if path.starts_with("/api") {
            headers.push(("Authorization", format!("Bearer {ADMIN}")));
        } else if path.starts_with("/dav") {
            headers.push(("Authorization", format!("Basic {}", base64_admin())));
        }
    } else {
        match rng.gen_range(0..6) {
            0 => headers.push(("Authorization", format!("Bearer {ADMIN}"))),
            1 => headers.push(("Authorization", "Basic !!!not-base64!!!".to_owned())),
            2 => headers.push(("Authorization", "Basic YWRtaW46eWV5YWstYWRtaW4=".to_owned())),
            3 => headers.push(("Cookie", format!("{session}; yeyak_lang=xx; yeyak_csrf=%%%"))),
            4 => headers.push(("Cookie", "yeyak_session=\u{7f}; =;;; a".to_owned())),
            _ => headers.push(("Authorization", format!("Bearer {}", "k".repeat(4000)))),
        }
    }
    let accept = ["ko;q=abc, en;q=NaN, *;q=-1", "zz-ZZ-u-co-phonebk, 한국어", ",,,;;;q=1.0.0", "en"];
    headers.push(("Accept-Language", accept[rng.gen_range(0..accept.len())].to_owned()));
    let odd = [
        ("X-Reservation-Owner", "\u{0}\u{1}owner".to_owned()),
        ("Idempotency-Key", "k".repeat(300)),
        ("X-Request-Id", "../../etc/passwd".to_owned()),
        ("Depth", "infinity".to_owned()),
        ("If-None-Match", "*".to_owned()),
        ("If-Match", "\"not-an-etag".to_owned()),
        ("Range", "bytes=99999999-".to_owned()),
        ("If-Modified-Since", "Mon, 99 Foo 99999 99:99:99 GMT".to_owned()),
    ];
    let (name, value) = odd[rng.gen_range(0..odd.len())].clone();
    headers.push((name, value));
    headers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_route_answers_every_method_and_garbage_and_the_server_stays_ready() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    let signed_in = admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let account = admin.get("/account").await;
    let cookie = |name: &str| signed_in.cookie_value(name).or_else(|| account.cookie_value(name)).unwrap();
    let session = format!("yeyak_session={}; yeyak_csrf={}", cookie("yeyak_session"), cookie("yeyak_csrf"));
    let csrf = account.field("csrf_token");
    // Something for the ids of the paths to name.
    let booked =
        app.create_booking(ADMIN, "ops", "sweep-seed", &booking("seed", &["A"], &at(1, 1, 0), &at(1, 2, 0))).await;
    assert_eq!(booked.status(), StatusCode::CREATED);
    let mut rng = StdRng::seed_from_u64(22);
    let mut routes: Vec<(String, String)> = page_routes();
    let (_, openapi) = app.get_json("/api/openapi.json", ADMIN).await;
    for (pattern, operations) in openapi["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            routes.push((method.to_uppercase(), pattern.clone()));
        }
    }
    let mut paths: Vec<(String, String)> = Vec::new();
    for (method, pattern) in &routes {
        paths.extend(fill(pattern, &mut rng).into_iter().map(|p| (method.clone(), p)));
    }
    for dav in [
        "/dav/",
        "/dav/principals/",
        "/dav/principals/admin/",
        "/dav/principals/rooms/A/",
        "/dav/calendars/admin/",
        "/dav/calendars/admin/bookings/",
        "/dav/calendars/admin/bookings/x.ics",
        "/dav/calendars/admin/outbox/",
        "/dav/calendars/rooms/A/",
        "/dav/calendars/rooms/A/booking-1.ics",
        "/.well-known/caldav",
    ] {
        for method in ["PROPFIND", "REPORT", "PUT", "GET", "DELETE", "POST", "PROPPATCH"] {
            paths.push((method.to_owned(), dav.to_owned()));
        }
    }
    for other in ["/metrics", "/healthz", "/static/../Cargo.toml", "/%", "/api", "/no/such/page"] {
        paths.push(("GET".to_owned(), other.to_owned()));
    }
    let methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "PROPFIND", "REPORT", "OPTIONS", "HEAD", "MKCALENDAR"];
    let mut requests = Vec::new();
    for (registered, path) in &paths {
        // Mostly the method the route answers, so the garbage reaches its handler.
        let mut asked: Vec<&str> = vec![registered.as_str(); 4];
        asked.extend((0..2).map(|_| methods[rng.gen_range(0..methods.len())]));
        for (i, method) in asked.into_iter().enumerate() {
            let limit = if path.starts_with("/dav") { 256 * 1024 } else { 64 * 1024 };
            let (body, content_type) = garbage(&mut rng, limit, &csrf);
            let query = QUERIES[rng.gen_range(0..QUERIES.len())];
            let method = method.to_owned();
            // Signed in, except where a well-formed post would end the
            // sweep's own session (signing out, disabling or re-keying the admin).
            let ends_session = ["logout", "disable", "password", "revoke"].iter().any(|w| path.contains(w));
            let headers = odd_headers(&mut rng, &session, path, i < 3 && !ends_session);
            requests.push((method, format!("{path}{query}"), body, content_type, headers));
        }
    }
    // Every read with every odd query string, signed in: dates past what a
    // calendar holds must not reach date arithmetic unchecked.
    for (registered, path) in paths.iter().filter(|(m, _)| m == "GET") {
        for query in QUERIES {
            let headers = odd_headers(&mut rng, &session, path, true);
            requests.push((registered.clone(), format!("{path}{query}"), Vec::new(), "text/plain", headers));
        }
    }
    let total = requests.len();
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let mut failures = Vec::new();
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    // Eight at a time: the sweep is about answers, not load.
    for chunk in requests.chunks(8) {
        let answers =
            futures_util::future::join_all(chunk.iter().map(|(method, path, body, content_type, headers)| {
                let mut req = client
                    .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), app.url(path))
                    .header("Content-Type", *content_type)
                    .body(body.clone());
                for (name, value) in headers {
                    // Raw bytes: non-ASCII is obs-text on the wire; controls cannot be sent at all.
                    let bytes: Vec<u8> = value.bytes().filter(|b| *b >= 0x20 && *b != 0x7f || *b == b'\t').collect();
                    req = req.header(*name, reqwest::header::HeaderValue::from_bytes(&bytes).unwrap());
                }
                async move { (method, path, req.send().await) }
            }))
            .await;
        for (method, path, answer) in answers {
            match answer {
                Err(e) => failures.push(format!("{method} {path}: no answer ({e})")),
                Ok(res) if res.status() == StatusCode::INTERNAL_SERVER_ERROR => {
                    let text = res.text().await.unwrap_or_default();
                    failures.push(format!("{method} {path}: 500 {}", &text[..text.len().min(300)]));
                }
                Ok(res) => *statuses.entry(res.status().as_u16()).or_default() += 1,
            }
        }
    }
    assert!(failures.is_empty(), "{} of {total} requests failed:\n{}", failures.len(), failures.join("\n"));
    assert!(total > 2_000, "the sweep covered {total} requests");
    println!("answers by status: {statuses:?}");
    let ready = app.http.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::OK);
    let metrics = app.http.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.lines().any(|l| l == "yeyak_panics_total 0"), "no handler panicked");
    app.assert_consistent().await;
}
