//! Safe by default, round three (SPEC §20), part b: each test performs one
//! attack through the real server and PostgreSQL and asserts what it won.

use reqwest::StatusCode;
use serde_json::json;

use crate::accounts::add_person;
use crate::helpers::*;
use crate::web::{Browser, Page, ADMIN_PASSWORD, ADMIN_USER};

async fn staff_id(app: &TestApp, username: &str) -> i64 {
    app.db().await.query_one("SELECT id FROM staff_user WHERE username = $1", &[&username]).await.unwrap().get(0)
}

/// The feed address shown on a page.
fn feed_address(page: &Page) -> String {
    let start = page.html.find("/ical/me.ics?token=").expect("a feed address on the page");
    let head = &page.html[..start];
    let from = head.rfind(['"', '>']).map_or(0, |i| i + 1);
    page.html[from..].split(['"', '<']).next().unwrap().replace("&amp;", "&")
}

// --- Reserved tenants ---------------------------------------------------------

#[tokio::test]
async fn the_tenants_staff_and_display_cannot_be_given_to_a_key() {
    let app = TestApp::spawn().await;
    // The JSON door.
    for (i, tenant) in ["staff", "display", "Staff"].into_iter().enumerate() {
        let (status, err) = post(
            &app,
            "/api/admin/keys",
            ADMIN,
            "admin",
            &format!("k{i}"),
            json!({"tenant": tenant, "role": "integration"}),
        )
        .await;
        assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("RESERVED_TENANT")), "{err}");
    }
    // The form door.
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let page = admin.get("/admin/staff").await;
    let made = admin
        .post(
            "/admin/keys",
            &[("tenant", "display"), ("role", "admin"), ("label", "x"), ("csrf_token", &page.field("csrf_token"))],
        )
        .await;
    assert_eq!(made.status, StatusCode::BAD_REQUEST, "{}", made.html);
    assert!(!made.html.contains("<code>yk_"), "no secret was shown");
    assert_eq!(app.count("SELECT count(*) FROM api_key").await, 0, "no key was stored");
    // Configuration: `YEYAK_API_KEYS` naming a reserved tenant does not parse.
    for raw in
        ["staff:admin:a-long-enough-secret-123456", "ok:integration:a-long-secret-1234567,display:admin:xyz12345678"]
    {
        use clap::Parser;
        let err = yeyak::config::Config::try_parse_from(["yeyak", "--api-keys", raw]).expect_err(raw).to_string();
        assert!(err.contains("RESERVED_TENANT") && err.contains("reserved"), "{err}");
    }
    // The error code is documented.
    let (_, doc) = app.get_json("/api/openapi.json", TENANT_ONE).await;
    let codes = doc["components"]["schemas"]["ErrorCode"]["enum"].as_array().unwrap();
    assert!(codes.contains(&json!("RESERVED_TENANT")));
}

// --- Disabling ends the calendar token ---------------------------------------

#[tokio::test]
async fn a_disabled_persons_feed_address_stays_dead_after_they_are_enabled_again() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    add_person(&admin, "kim", "").await;
    let kim = Browser::new(&app);
    assert_eq!(kim.sign_in("kim", "correct-horse-1").await.status, StatusCode::SEE_OTHER);
    let leaked = feed_address(&kim.get("/account").await);
    let path = &leaked[leaked.find("/ical/").unwrap()..];
    let ics = |path: String| {
        let app = &app;
        async move { app.http.get(app.url(&path)).send().await.unwrap().status() }
    };
    assert_eq!(ics(path.to_owned()).await, StatusCode::OK);
    let id = staff_id(&app, "kim").await;
    let page = admin.get("/admin/staff").await;
    let off = admin.post(&format!("/admin/staff/{id}/disable"), &[("csrf_token", &page.field("csrf_token"))]).await;
    assert_eq!(off.status, StatusCode::OK);
    assert_eq!(ics(path.to_owned()).await, StatusCode::NOT_FOUND);
    let on = admin.post(&format!("/admin/staff/{id}/enable"), &[("csrf_token", &page.field("csrf_token"))]).await;
    assert_eq!(on.status, StatusCode::OK);
    // The address someone kept from before the disabling opens nothing…
    assert_eq!(ics(path.to_owned()).await, StatusCode::NOT_FOUND, "the old feed came back to life");
    // …and the person gets a new one on /account.
    assert_eq!(kim.sign_in("kim", "correct-horse-1").await.status, StatusCode::SEE_OTHER);
    let fresh = feed_address(&kim.get("/account").await);
    assert_ne!(fresh, leaked);
    assert_eq!(ics(fresh[fresh.find("/ical/").unwrap()..].to_owned()).await, StatusCode::OK);
}

// --- Start-up refusals on a public bind ---------------------------------------

/// Settings that pass every round-two refusal; only `tweak` makes one unsafe.
fn public_config(tweak: impl FnOnce(&mut Vec<String>)) -> yeyak::config::Config {
    use clap::Parser;
    let mut args: Vec<String> = [
        "yeyak",
        "--bind",
        "0.0.0.0:8080",
        "--admin-password",
        "a-real-admin-password",
        "--secret-key",
        "a-real-secret-key-that-is-long-enough-1",
        "--api-keys",
        "ops:admin:a-real-api-key-of-24-chars-or-more",
    ]
    .map(str::to_owned)
    .to_vec();
    tweak(&mut args);
    yeyak::config::Config::try_parse_from(args).expect("parses")
}

fn set(args: &mut [String], flag: &str, value: &str) {
    let i = args.iter().position(|a| a == flag).unwrap();
    args[i + 1] = value.to_owned();
}

#[test]
fn a_public_bind_refuses_short_secrets() {
    assert!(public_config(|_| {}).exposed_defaults().is_empty());
    for (flag, value, var) in [
        ("--admin-password", "elevenchars", "YEYAK_ADMIN_PASSWORD"),
        ("--secret-key", "a-secret-of-thirty-one-chars-xx", "YEYAK_SECRET_KEY"),
        ("--api-keys", "ops:admin:a-key-of-23-characters1", "YEYAK_API_KEYS"),
        ("--api-keys", "ops:admin:a-real-api-key-of-24-chars-or-more,t1:integration:short-but-ok-8", "YEYAK_API_KEYS"),
    ] {
        let config = public_config(|a| set(a, flag, value));
        assert_eq!(config.exposed_defaults(), [var], "{flag} {value}");
        // Loopback keeps working with anything (tests and development).
        let mut local = config.clone();
        local.bind = "127.0.0.1:8080".parse().unwrap();
        assert!(local.exposed_defaults().is_empty());
    }
    // At the limits they pass.
    let config = public_config(|a| {
        set(a, "--admin-password", "twelve-chars");
        set(a, "--secret-key", "a-secret-of-thirty-two-chars-xxx");
        set(a, "--api-keys", "ops:admin:a-key-of-24-characters-x");
    });
    assert!(config.exposed_defaults().is_empty());
}

#[tokio::test]
async fn a_public_bind_refuses_while_an_old_admin_keeps_the_development_password() {
    // The first start made `admin` with the development password; the
    // installation then renamed YEYAK_ADMIN_USER and set real secrets.
    let app = TestApp::spawn().await;
    let db = app.database_url();
    let start = |db: String| {
        tokio::task::spawn_blocking(move || {
            crate::accounts::run_binary(&[
                ("YEYAK_BIND", "0.0.0.0:0"),
                ("DATABASE_URL", &db),
                ("YEYAK_ADMIN_USER", "boss"),
                ("YEYAK_ADMIN_PASSWORD", "a-real-admin-password"),
                ("YEYAK_API_KEYS", "ops:admin:a-real-api-key-of-24-chars-or-more"),
                ("YEYAK_SECRET_KEY", "a-real-secret-key-that-is-long-enough-1"),
                ("YEYAK_BACKGROUND", "false"),
            ])
        })
    };
    let (code, err) = start(db.clone()).await.unwrap();
    assert_eq!(code, Some(2), "it must not listen: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("`admin`") && err.contains("development password"), "{err}");
    // The admin changes that password (on a loopback start): now it starts.
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let account = admin.get("/account").await;
    let changed = admin
        .post(
            "/account/password",
            &[
                ("current_password", ADMIN_PASSWORD),
                ("new_password", "a-better-admin-password"),
                ("csrf_token", &account.field("csrf_token")),
            ],
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK);
    let (code, log) = start(db).await.unwrap();
    assert_eq!(code, None, "it listened: {log}");
}

// --- Forwarded headers and public addresses -----------------------------------

async fn account_feed(app: &TestApp, headers: &[(&str, &str)]) -> String {
    let b = Browser::new(app);
    assert_eq!(b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await.status, StatusCode::SEE_OTHER);
    let mut req = b.client.get(app.url("/account"));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let res = req.send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let html = res.text().await.unwrap();
    feed_address(&Page { status: StatusCode::OK, location: None, cookies: Vec::new(), html })
}

const SPOOFED: [(&str, &str); 3] = [
    ("X-Forwarded-Host", "evil.example"),
    ("X-Forwarded-Proto", "https"),
    ("Forwarded", "host=evil2.example;proto=https"),
];

#[tokio::test]
async fn forwarded_host_and_proto_are_ignored_without_a_trusted_proxy() {
    let plain = TestApp::spawn().await;
    let feed = account_feed(&plain, &SPOOFED).await;
    let host = plain.address.trim_start_matches("http://");
    assert!(feed.starts_with(&format!("http://{host}/ical/me.ics?token=")), "a client chose the feed host: {feed}");

    // Behind a trusted proxy its headers name the address people use.
    let proxied = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let feed =
        account_feed(&proxied, &[("X-Forwarded-Host", "rooms.proxy.example"), ("X-Forwarded-Proto", "https")]).await;
    assert!(feed.starts_with("https://rooms.proxy.example/ical/me.ics?token="), "{feed}");

    // YEYAK_PUBLIC_URL wins over every header.
    let public = TestApp::spawn_with(|c| {
        c.trust_proxy = true;
        c.public_url = Some(url::Url::parse("http://rooms.example.com").unwrap());
    })
    .await;
    let feed = account_feed(&public, &SPOOFED).await;
    assert!(feed.starts_with("http://rooms.example.com/ical/me.ics?token="), "{feed}");
}

// --- Pages of bookings -----------------------------------------------------------

#[tokio::test]
async fn a_huge_window_of_bookings_comes_in_pages_of_at_most_500() {
    let app = TestApp::spawn().await;
    // 1,200 bookings, three at each start time (rooms A, B, C), so the order
    // must break ties by id.
    let first = chrono::DateTime::parse_from_rfc3339(&at(1, 0, 0)).unwrap().with_timezone(&chrono::Utc);
    app.db()
        .await
        .execute(
            "WITH slots AS (
               SELECT g, $1::timestamptz + (g / 3) * interval '30 minutes' AS s, (ARRAY['A','B','C'])[g % 3 + 1] AS room
                 FROM generate_series(0, 1199) g),
             made AS (
               INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at, status)
               SELECT 'b' || g, 'o', 'd', s, s + interval '30 minutes', now(), now(), 'CONFIRMED' FROM slots
               RETURNING id, title, starts_at, ends_at)
             INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
             SELECT m.id, s.room, m.starts_at, m.ends_at, true FROM made m JOIN slots s ON m.title = 'b' || s.g",
            &[&first],
        )
        .await
        .unwrap();
    let window = format!("/api/bookings?from={}&to={}", urlencode(&at(1, 0, 0)), urlencode(&at(12, 0, 0)));
    let mut seen: Vec<(String, i64)> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = Vec::new();
    loop {
        let path = match &cursor {
            Some(c) => format!("{window}&cursor={c}"),
            None => window.clone(),
        };
        let (status, page) = app.get_json(&path, TENANT_ONE).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let bookings = page["bookings"].as_array().unwrap();
        assert!(bookings.len() <= 500, "one answer carried {} bookings", bookings.len());
        pages.push(bookings.len());
        seen.extend(bookings.iter().map(|b| (b["startsAt"].as_str().unwrap().to_owned(), b["id"].as_i64().unwrap())));
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
        assert!(pages.len() < 10, "pages never end");
    }
    assert_eq!(pages, [500, 500, 200]);
    let mut sorted = seen.clone();
    sorted.sort_by(|a, b| {
        let t = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap();
        (t(&a.0), a.1).cmp(&(t(&b.0), b.1))
    });
    sorted.dedup();
    assert_eq!(seen, sorted, "one stable order by start then id, nothing twice");
    // A forged cursor is refused, naming the field.
    let (status, err) = app.get_json(&format!("{window}&cursor=not-a-cursor"), TENANT_ONE).await;
    assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("cursor")), "{err}");
    // The document tells clients.
    let (_, doc) = app.get_json("/api/openapi.json", TENANT_ONE).await;
    let list = &doc["paths"]["/api/bookings"]["get"];
    assert!(list["parameters"].as_array().unwrap().iter().any(|p| p["name"] == "cursor"), "{list}");
}

fn urlencode(raw: &str) -> String {
    raw.replace('+', "%2B").replace(':', "%3A")
}

// --- A flood of unknown API keys ------------------------------------------------

#[tokio::test]
async fn a_flood_of_unknown_keys_leaves_connections_for_real_requests() {
    // Four connections: two for API work, two for the rest.
    let app = TestApp::spawn_with(|c| c.db_pool_size = 4).await;
    // Make every stored-key lookup slow: the table is locked by someone else.
    let locker = app.db().await;
    locker.batch_execute("BEGIN; LOCK TABLE api_key IN ACCESS EXCLUSIVE MODE").await.unwrap();
    let flood = futures_util::future::join_all((0..40).map(|i| {
        let app = &app;
        async move {
            let res = app
                .request(reqwest::Method::GET, "/api/resources", &format!("yk_unknown_{i:040}"), None)
                .send()
                .await
                .unwrap();
            body(res).await
        }
    }));
    let real = async {
        // Wait until the flood's lookups sit on the lock.
        let watcher = app.db().await;
        for _ in 0..200 {
            let waiting: i64 = watcher
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'",
                    &[&app.db_name],
                )
                .await
                .unwrap()
                .get(0);
            if waiting >= 2 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let started = std::time::Instant::now();
        let answer = app.get_json(&format!("/api/bookings?date={}", &at(1, 0, 0)[..10]), TENANT_ONE).await;
        let took = started.elapsed();
        locker.batch_execute("ROLLBACK").await.unwrap();
        (answer, took)
    };
    let (flooded, ((status, body), took)) = tokio::join!(flood, real);
    assert_eq!(status, StatusCode::OK, "a real request found no connection after {took:?}: {body}");
    for (status, body) in &flooded {
        let code = body["code"].as_str();
        assert!(
            matches!((*status, code), (StatusCode::UNAUTHORIZED, Some("UNAUTHENTICATED")))
                || matches!((*status, code), (StatusCode::TOO_MANY_REQUESTS, Some("ADMISSION_REJECTED"))),
            "{status} {body}"
        );
    }
    assert!(flooded.iter().any(|(s, _)| *s == StatusCode::TOO_MANY_REQUESTS), "the flood waited in the bulkhead");
}

// --- Sign-in throttling in numbers -------------------------------------------------

/// A browser at one address (behind a trusted proxy): a cookie jar.
fn browser_client() -> reqwest::Client {
    reqwest::Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

fn field_of(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker).unwrap_or_else(|| panic!("no field {name}")) + marker.len();
    html[start..].split('"').next().unwrap().to_owned()
}

async fn sign_in_from(
    app: &TestApp,
    client: &reqwest::Client,
    addr: &str,
    user: &str,
    password: &str,
) -> reqwest::Response {
    let login = client.get(app.url("/login")).header("X-Forwarded-For", addr).send().await.unwrap();
    let csrf = field_of(&login.text().await.unwrap(), "csrf_token");
    client
        .post(app.url("/login"))
        .header("X-Forwarded-For", addr)
        .form(&[("username", user), ("password", password), ("csrf_token", &csrf)])
        .send()
        .await
        .unwrap()
}

fn retry_after(res: &reqwest::Response) -> u64 {
    let value = res.headers().get("retry-after").unwrap_or_else(|| panic!("429 without Retry-After"));
    value.to_str().unwrap().parse().unwrap()
}

/// Fails sign-ins with wrong passwords until one is refused unchecked;
/// returns how many failed first, and the refusal.
async fn fail_until_throttled(
    app: &TestApp,
    addr: impl Fn(usize) -> String,
    user: &str,
    limit: usize,
) -> (usize, reqwest::Response) {
    for i in 0..limit {
        let res = sign_in_from(app, &browser_client(), &addr(i), user, &format!("wrong-guess-{i}")).await;
        match res.status() {
            StatusCode::UNAUTHORIZED => continue,
            StatusCode::TOO_MANY_REQUESTS => return (i, res),
            other => panic!("attempt {i}: {other}"),
        }
    }
    panic!("{limit} failures for {user} and still no throttle");
}

#[tokio::test]
async fn sign_in_throttles_an_address_and_a_username_in_numbers() {
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    add_person(&admin, "kim", "").await;
    // One address: throttled after 5 to 10 failures.
    let (failures, refused) = fail_until_throttled(&app, |_| "203.0.113.5".into(), "nobody", 12).await;
    assert!((5..=10).contains(&failures), "{failures} failures before the address was throttled");
    assert!(retry_after(&refused) > 0);
    // A throttled attempt checks no password and is not counted.
    let counted =
        || async { app.count("SELECT failures::int8 FROM address_login_throttle WHERE address = '203.0.113.5'").await };
    let before = counted().await;
    let right = sign_in_from(&app, &browser_client(), "203.0.113.5", "kim", "correct-horse-1").await;
    assert_eq!(right.status(), StatusCode::TOO_MANY_REQUESTS, "the right password was checked");
    assert!(retry_after(&right) > 0);
    assert_eq!(counted().await, before, "the throttled attempt was counted");
    // The address lock is the address's: kim signs in from another one, and
    // the name "nobody" was not locked by its failures there.
    let other = sign_in_from(&app, &browser_client(), "203.0.113.6", "kim", "correct-horse-1").await;
    assert_eq!(other.status(), StatusCode::SEE_OTHER, "another address is not locked");
    assert_eq!(
        app.count("SELECT count(*) FROM staff_login_throttle WHERE username = 'nobody' AND locked_until IS NOT NULL")
            .await,
        0,
        "five failures lock the address, not the name"
    );
    // One username from many addresses, one failure each (no address limit
    // is reached): throttled after 10 to 20 failures.
    let (failures, refused) = fail_until_throttled(&app, |i| format!("198.51.100.{}", i + 1), "kim", 25).await;
    assert!((10..=20).contains(&failures), "{failures} failures before the username was throttled");
    assert!(retry_after(&refused) > 0);
    let fresh = sign_in_from(&app, &browser_client(), "198.51.100.200", "kim", "correct-horse-1").await;
    assert_eq!(fresh.status(), StatusCode::TOO_MANY_REQUESTS, "a fresh address is refused for that name");
    // Other names are unaffected, from those same addresses.
    let admin_there = sign_in_from(&app, &browser_client(), "198.51.100.3", ADMIN_USER, ADMIN_PASSWORD).await;
    assert_eq!(admin_there.status(), StatusCode::SEE_OTHER, "the name lock is the name's");
}

#[tokio::test]
async fn a_malformed_username_counts_against_its_address() {
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let (failures, refused) = fail_until_throttled(&app, |_| "192.0.2.77".into(), "not a name!", 12).await;
    assert!((5..=10).contains(&failures), "{failures}");
    assert!(retry_after(&refused) > 0);
    // The address is throttled for well-formed names too.
    let res = sign_in_from(&app, &browser_client(), "192.0.2.77", ADMIN_USER, ADMIN_PASSWORD).await;
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn strangers_on_many_addresses_cannot_lock_a_person_out_of_their_own_browser() {
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    add_person(&admin, "kim", "").await;
    add_person(&admin, "mallory", "").await;
    // Kim signs in on her laptop: it gets a device cookie (HttpOnly, no password in it).
    let laptop = browser_client();
    let res = sign_in_from(&app, &laptop, "10.9.9.9", "kim", "correct-horse-1").await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let device: Vec<String> = res
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .filter(|c| c.contains("device"))
        .collect();
    // Mallory signs in as herself: her browser is a device of hers only.
    let mallorys = browser_client();
    assert_eq!(
        sign_in_from(&app, &mallorys, "10.6.6.6", "mallory", "correct-horse-1").await.status(),
        StatusCode::SEE_OTHER
    );
    // Strangers, one guess each from 25 addresses, lock the name.
    let (_, refused) = fail_until_throttled(&app, |i| format!("10.0.0.{}", i + 1), "kim", 25).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let elsewhere = sign_in_from(&app, &browser_client(), "10.8.8.8", "kim", "correct-horse-1").await;
    assert_eq!(elsewhere.status(), StatusCode::TOO_MANY_REQUESTS, "the lock holds for other browsers");
    let as_mallory = sign_in_from(&app, &mallorys, "10.6.6.6", "kim", "correct-horse-1").await;
    assert_eq!(as_mallory.status(), StatusCode::TOO_MANY_REQUESTS, "another person's device cookie is no pass");
    // Kim's own laptop still signs her in.
    let res = sign_in_from(&app, &laptop, "10.9.9.9", "kim", "correct-horse-1").await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER, "the strangers locked kim out of her own laptop");
    assert_eq!(device.len(), 1, "one device cookie");
    assert!(device[0].contains("HttpOnly") && !device[0].contains("correct-horse"), "{}", device[0]);
}

#[tokio::test]
async fn a_crowd_of_sign_ins_beyond_the_hashing_queue_gets_503_at_once() {
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let login = Browser::new(&app).get("/login").await;
    let (csrf, nonce) = (login.field("csrf_token"), login.cookie_value("yeyak_csrf").unwrap());
    let crowd = (0..150).map(|i| {
        let (app, csrf, nonce) = (&app, csrf.clone(), nonce.clone());
        async move {
            let res = app
                .http
                .post(app.url("/login"))
                .header("Cookie", format!("yeyak_csrf={nonce}"))
                .header("X-Forwarded-For", format!("10.2.{}.{}", i / 100, i % 100 + 1))
                .form(&[
                    ("username", format!("person{i}")),
                    ("password", "wrong-password".into()),
                    ("csrf_token", csrf),
                ])
                .send()
                .await
                .unwrap();
            let retry = res.headers().contains_key("retry-after");
            (res.status(), retry)
        }
    });
    let answers = futures_util::future::join_all(crowd).await;
    let busy = answers.iter().filter(|(s, _)| *s == StatusCode::SERVICE_UNAVAILABLE).count();
    let checked = answers.iter().filter(|(s, _)| *s == StatusCode::UNAUTHORIZED).count();
    assert_eq!(busy + checked, answers.len(), "{answers:?}");
    assert!(busy > 0, "150 sign-ins at once all waited for a hashing slot");
    assert!(checked >= 2, "{answers:?}");
    assert!(answers.iter().filter(|(s, _)| *s == StatusCode::SERVICE_UNAVAILABLE).all(|(_, retry)| *retry));
}

#[tokio::test]
async fn wrong_current_passwords_on_the_account_page_are_throttled() {
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    add_person(&admin, "kim", "").await;
    // Someone holding kim's session (not her password) guesses it.
    let stolen = browser_client();
    assert_eq!(sign_in_from(&app, &stolen, "10.7.7.7", "kim", "correct-horse-1").await.status(), StatusCode::SEE_OTHER);
    let change = |current: String, new: &'static str| {
        let (app, stolen) = (&app, &stolen);
        async move {
            let page = stolen.get(app.url("/account")).header("X-Forwarded-For", "10.7.7.7").send().await.unwrap();
            let csrf = field_of(&page.text().await.unwrap(), "csrf_token");
            stolen
                .post(app.url("/account/password"))
                .header("X-Forwarded-For", "10.7.7.7")
                .form(&[("current_password", current.as_str()), ("new_password", new), ("csrf_token", &csrf)])
                .send()
                .await
                .unwrap()
        }
    };
    let mut failures = 0;
    let refused = loop {
        let res = change(format!("guess-number-{failures}"), "taken-over-password").await;
        match res.status() {
            StatusCode::BAD_REQUEST => failures += 1,
            StatusCode::TOO_MANY_REQUESTS => break res,
            other => panic!("{other}"),
        }
        assert!(failures <= 12, "{failures} wrong current passwords and no throttle");
    };
    assert!((5..=10).contains(&failures), "{failures}");
    assert!(retry_after(&refused) > 0);
    // Even the right one is not checked now, and nothing changed.
    let right = change("correct-horse-1".into(), "taken-over-password").await;
    assert_eq!(right.status(), StatusCode::TOO_MANY_REQUESTS);
    let elsewhere = sign_in_from(&app, &browser_client(), "10.5.5.5", "kim", "correct-horse-1").await;
    assert_eq!(elsewhere.status(), StatusCode::SEE_OTHER, "the password is still kim's");
}
