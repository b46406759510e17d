//! Korean and English pages (SPEC §19): every page of the route table, in
//! both languages, signed out, as staff, as an admin and at the door; the
//! answers to refused forms; the language decision (`?lang` and its cookie,
//! the person's choice on `/account`, `Accept-Language`, Korean); feeds and
//! mail in their reader's language. The data is ASCII, so any Hangul on an
//! English page is a text that escaped the catalogue — except the product
//! name `예약` and `한국어` in the switch.

use reqwest::header::{HeaderMap, HeaderValue, ACCEPT_LANGUAGE};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::*;
use crate::smtp_sink::Sink;
use crate::web::{booked_id, tomorrow, Browser, Page, ADMIN_PASSWORD, ADMIN_USER};

const PASSWORD: &str = "correct-horse-1";

fn is_hangul(c: char) -> bool {
    matches!(c, '\u{AC00}'..='\u{D7A3}' | '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}')
}

/// A browser without JavaScript whose requests carry `Accept-Language`.
fn browser<'a>(app: &'a TestApp, accept: Option<&str>) -> Browser<'a> {
    let mut headers = HeaderMap::new();
    if let Some(accept) = accept {
        headers.insert(ACCEPT_LANGUAGE, HeaderValue::from_str(accept).unwrap());
    }
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .default_headers(headers)
        .build()
        .unwrap();
    Browser { app, client }
}

/// The Hangul on a page outside the two words allowed on English pages.
fn stray_hangul(html: &str) -> Vec<String> {
    let cleaned: Vec<char> = html.replace("예약", "").replace("한국어", "").chars().collect();
    let mut found = Vec::new();
    for (i, c) in cleaned.iter().enumerate() {
        if is_hangul(*c) {
            let around: String = cleaned[i.saturating_sub(60)..(i + 60).min(cleaned.len())].iter().collect();
            found.push(around.replace('\n', " "));
            if found.len() == 3 {
                break;
            }
        }
    }
    found
}

/// What every page in `lang` must be: `<html lang>`, every text found in
/// the catalogue, the switch, and (in English) no Hangul but the allowed.
fn check_page(what: &str, lang: &str, page: &Page) {
    assert!(page.html.contains(&format!("<html lang=\"{lang}\">")), "{what}: <html lang=\"{lang}\">: {}", page.html);
    assert!(!page.html.contains('⟦'), "{what} ({lang}): a key missing from the catalogue: {}", page.html);
    assert!(page.html.contains("hreflang=\"ko\"") && page.html.contains("hreflang=\"en\""), "{what}: the switch");
    match lang {
        "en" => {
            let stray = stray_hangul(&page.html);
            assert!(stray.is_empty(), "{what}: Hangul on an English page: {stray:#?}");
        }
        _ => assert!(page.html.chars().any(is_hangul), "{what}: a Korean page in Korean"),
    }
}

/// The GET routes of the route table (`src/routes.rs` and the route
/// functions it configures), as written there.
fn get_routes() -> Vec<String> {
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
            if rest.trim_start_matches(',').trim_start().starts_with("web::get()") {
                routes.push(path.replace("\\\\", "\\"));
            }
        }
    }
    routes
}

/// The world the pages show: ASCII names everywhere.
pub struct World {
    pub date: String,
    booking: i64,
    pending: i64,
    occurrence: i64,
    series: i64,
    pub display: String,
}

pub async fn world(app: &TestApp) -> World {
    // The seed's rooms, renamed and moved out of their suite, then back into one.
    for (step, code) in ["A", "B", "C", "A", "B", "C"].into_iter().enumerate() {
        let patch = if step < 3 {
            json!({"name": format!("Room {code}"), "area": "Main", "suite": null, "checkInRequired": code == "A"})
        } else {
            json!({"suite": "ABC"})
        };
        let (status, body) = send(
            app,
            reqwest::Method::PATCH,
            &format!("/api/rooms/{code}"),
            ADMIN,
            Some(&format!("rename-{step}")),
            patch,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    add_room(app, json!({"code": "BOARD", "name": "Board room", "area": "Main", "approvalRequired": true})).await;
    // The seed's area is empty now; /admin/areas would show its Hangul code.
    app.db().await.execute("DELETE FROM area WHERE code <> 'Main'", &[]).await.unwrap();
    // A holiday calendar with a day, named by the area (SPEC §24).
    let calendar = json!({"code": "us", "name": "US holidays"});
    let (status, answer) =
        send(app, reqwest::Method::POST, "/api/holiday-calendars", ADMIN, Some("cal-us"), calendar).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let days = json!({"days": [{"date": "2027-07-05", "name": "Independence Day (observed)"}]});
    let (status, answer) = send(app, reqwest::Method::PUT, "/api/holiday-calendars/us/days", ADMIN, None, days).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let named = json!({"holidayCalendar": "us"});
    let (status, answer) = send(app, reqwest::Method::PATCH, "/api/areas/Main", ADMIN, Some("area-us"), named).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let admin = browser(app, None);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let staff = admin.get("/admin/staff").await;
    let added = admin
        .post(
            "/admin/staff",
            &[
                ("username", "alice"),
                ("display_name", "Alice Kim"),
                ("email", "alice@example.com"),
                ("password", PASSWORD),
                ("csrf_token", &staff.field("csrf_token")),
            ],
        )
        .await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.html);
    let alice = browser(app, None);
    alice.sign_in("alice", PASSWORD).await;
    let date = tomorrow(app);
    let booking = booked_id(&alice.book(&date, "Planning", "10:00", "11:00", &["A"]).await);
    // A weekly series in C.
    let day = alice.get(&format!("/rooms?date={date}")).await;
    let series = alice
        .post(
            "/bookings",
            &[
                ("title", "Standup"),
                ("date", &date),
                ("start", "09:00"),
                ("end", "09:30"),
                ("rooms", "C"),
                ("repeat", "weekly"),
                (
                    "repeat_until",
                    &(chrono::NaiveDate::parse_from_str(&date, "%Y-%m-%d").unwrap() + chrono::Duration::days(21))
                        .to_string(),
                ),
                ("csrf_token", &day.field("csrf_token")),
                ("idempotency_key", &day.field("idempotency_key")),
            ],
        )
        .await;
    assert_eq!(series.status, StatusCode::SEE_OTHER, "{}", series.html);
    let occurrence = app.count("SELECT min(id) FROM reservation WHERE series_id IS NOT NULL").await;
    let series = app.count("SELECT min(id) FROM booking_series").await;
    // An integration's booking, pending in the room that needs approval.
    let (status, pending) = body(
        app.create_booking(
            TENANT_ONE,
            "bob",
            "pending",
            &json!({"title": "Vendor call", "rooms": ["BOARD"], "startsAt": format!("{date}T15:00:00+09:00"),
                    "endsAt": format!("{date}T16:00:00+09:00"), "organizerName": "Bob"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{pending}");
    let display = crate::display::display_url(&admin, "A").await;
    World { date, booking, pending: pending["id"].as_i64().unwrap(), occurrence, series, display }
}

/// The addresses of a GET route worth visiting; `None` for the routes that
/// answer no HTML page (checked on their own below).
fn addresses(route: &str, w: &World) -> Option<Vec<String>> {
    let (date, id) = (&w.date, w.booking);
    Some(match route {
        "/" => vec!["/".into(), format!("/?date={date}&booked={id}")],
        "/rooms" => vec![
            "/rooms".into(),
            format!("/rooms?date={date}&moved={id}"),
            format!("/rooms?date={date}&series=1&created=3&skipped=1"),
            format!("/rooms?date={date}&cancelled={id}"),
            format!("/rooms?date={date}&start=10:00&end=11:00&room=B"),
            format!("/rooms?date={date}&room=B&unit=am"),
        ],
        "/rooms/week" => vec!["/rooms/week".into(), format!("/rooms/week?date={date}")],
        "/find" => vec!["/find".into(), format!("/find?date={date}&start=10:00&end=11:00&capacity=2")],
        "/my" => vec!["/my".into()],
        "/bookings/{id}" => vec![
            format!("/bookings/{id}"),
            format!("/bookings/{id}?checked_in=1"),
            format!("/bookings/{}", w.pending),
            format!("/bookings/{}", w.occurrence),
            "/bookings/999999".into(),
        ],
        "/bookings/{id}/cancel" => vec![format!("/bookings/{id}/cancel"), format!("/bookings/{}/cancel", w.occurrence)],
        "/login" => vec!["/login".into(), "/login?next=%2Fmy".into()],
        // A series not struck (nothing to restore) and none at all.
        "/series/{id}/restore" => vec![format!("/series/{}/restore", w.series), "/series/999999/restore".into()],
        // Without a provider configured, company sign-in is a page that says so.
        "/auth/oidc/start" | "/auth/oidc/callback" => vec![route.to_owned()],
        "/admin/consistency" | "/admin/staff" | "/account" | "/admin/approvals" | "/admin/rooms" => {
            vec![route.to_owned()]
        }
        "/admin/reports" => vec!["/admin/reports".into(), "/admin/reports?from=2026-02-30".into()],
        "/admin/access-log" => vec!["/admin/access-log".into(), "/admin/access-log?from=2026-02-30".into()],
        "/admin/rooms/{code}" => vec!["/admin/rooms/A".into(), "/admin/rooms/NOPE".into()],
        "/admin/areas" => {
            vec!["/admin/areas".into(), "/admin/areas?created=Main".into(), "/admin/areas?updated=Main".into()]
        }
        "/admin/areas/{code}" => vec!["/admin/areas/Main".into(), "/admin/areas/NOPE".into()],
        "/areas/{code}/plan" => {
            vec!["/areas/Main/plan".into(), format!("/areas/Main/plan?date={date}"), "/areas/NOPE/plan".into()]
        }
        "/admin/holidays" => {
            vec!["/admin/holidays".into(), "/admin/holidays?created=us".into(), "/admin/holidays?replaced=us".into()]
        }
        "/display/{code}" => vec![
            w.display.clone(),
            format!("{}&done=booked", w.display),
            format!("{}&done=checked-in", w.display),
            "/display/A?token=wrong".into(),
        ],
        // Machine answers: a stylesheet, calendars (checked in their reader's
        // language below), a person's JSON export, health, metrics and the
        // API's description.
        "/areas/{code}/plan.img"
        | "/static/grid.css"
        | "/ical/me.ics"
        | "/ical/rooms/{file}"
        | "/bookings/{file:[0-9]+\\.ics}"
        | "/account/export.ics"
        | "/account/export" => return None,
        "/metrics" | "/healthz" | "/readyz" | "/openapi.json" => return None,
        other => panic!("a page route this walk does not know: {other} (add its addresses here)"),
    })
}

#[tokio::test]
async fn every_page_speaks_the_language_asked_for_and_english_pages_hold_no_hangul() {
    let app = TestApp::spawn().await;
    let w = world(&app).await;
    let routes = get_routes();
    assert!(routes.len() >= 20 && routes.iter().any(|r| r == "/display/{code}"), "{routes:?}");
    let mut seen = 0;
    for (lang, accept) in [("ko", None), ("en", Some("en-GB,en;q=0.9,ko;q=0.5"))] {
        let signed_out = browser(&app, accept);
        let staff = browser(&app, accept);
        staff.sign_in("alice", PASSWORD).await;
        let admin = browser(&app, accept);
        admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
        for route in &routes {
            let Some(paths) = addresses(route, &w) else { continue };
            for path in paths {
                for (who, b) in [("signed out", &signed_out), ("staff", &staff), ("admin", &admin)] {
                    let mut page = b.get(&path).await;
                    let what = format!("{who} {path}");
                    if page.status == StatusCode::SEE_OTHER {
                        let to = page.location.clone().unwrap();
                        assert!(who == "signed out" && to.starts_with("/login?next="), "{what} → {to}");
                        page = b.get(&to).await;
                    }
                    assert!(!page.status.is_server_error(), "{what}: {}", page.status);
                    check_page(&what, lang, &page);
                    seen += 1;
                }
            }
        }
        // The answers to refused forms, in the same language.
        let day = staff.get(&format!("/rooms?date={}", w.date)).await;
        let (csrf, key) = (day.field("csrf_token"), day.field("idempotency_key"));
        let form = |title: &'static str, start: &'static str, key: String| {
            let (csrf, date) = (csrf.clone(), w.date.clone());
            vec![
                ("title", title.to_owned()),
                ("date", date),
                ("start", start.to_owned()),
                ("end", "11:00".to_owned()),
                ("rooms", "A".to_owned()),
                ("csrf_token", csrf),
                ("idempotency_key", key),
            ]
        };
        let post = |b: &Browser<'_>, path: &str, fields: Vec<(&'static str, String)>| {
            let request = b.client.post(b.app.url(path)).form(&fields);
            async move {
                let res = request.send().await.unwrap();
                let status = res.status();
                (status, res.text().await.unwrap())
            }
        };
        let taken = post(&staff, "/bookings", form("Clash", "10:30", format!("{key}-{lang}-1"))).await;
        let untitled = post(&staff, "/bookings", form("", "12:00", format!("{key}-{lang}-2"))).await;
        let forged = post(&staff, "/bookings", vec![("title", "x".to_owned()), ("csrf_token", "00".to_owned())]).await;
        let short = post(
            &staff,
            "/account/password",
            vec![
                ("current_password", PASSWORD.to_owned()),
                ("new_password", "x".to_owned()),
                ("csrf_token", csrf.clone()),
            ],
        )
        .await;
        let door =
            post(&signed_out, "/display/A/book", vec![("token", "wrong".to_owned()), ("minutes", "15".to_owned())])
                .await;
        for (what, (status, html), want) in [
            ("taken", taken, StatusCode::CONFLICT),
            ("untitled", untitled, StatusCode::BAD_REQUEST),
            ("forged", forged, StatusCode::FORBIDDEN),
            ("short password", short, StatusCode::BAD_REQUEST),
            ("wrong door token", door, StatusCode::NOT_FOUND),
        ] {
            assert_eq!(status, want, "{what}: {html}");
            let page = Page { status, location: None, cookies: Vec::new(), html };
            check_page(what, lang, &page);
        }
        seen += 5;
    }
    assert!(seen > 200, "{seen} pages");
}

#[tokio::test]
async fn a_refused_form_answers_in_the_pages_language_with_the_same_status() {
    let app = TestApp::spawn().await;
    let english = browser(&app, Some("en"));
    english.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let date = tomorrow(&app);
    english.book(&date, "First", "10:00", "11:00", &["A"]).await;
    let refused = english.book(&date, "Second", "10:30", "11:30", &["A"]).await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert!(refused.html.contains("id=\"form-error\">This time is already booked</p>"), "{}", refused.html);
    assert!(refused.html.contains("value=\"Second\""), "the input is kept");
    let untitled = english.book(&date, "", "12:00", "13:00", &["A"]).await;
    assert_eq!(untitled.status, StatusCode::BAD_REQUEST);
    assert!(untitled.html.contains("Give the title in 1 to 200 characters."), "{}", untitled.html);
    let linked = english.book(&date, "Far apart", "14:00", "15:00", &["A", "C"]).await;
    assert_eq!(linked.status, StatusCode::BAD_REQUEST);
    assert!(linked.html.contains("Only adjoining rooms may be booked together."), "{}", linked.html);
    // The same refusals in Korean, as before.
    let korean = browser(&app, None);
    korean.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let refused = korean.book(&date, "Second", "10:30", "11:30", &["A"]).await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert!(refused.html.contains("id=\"form-error\">이미 예약된 시간입니다</p>"), "{}", refused.html);
}

#[tokio::test]
async fn the_language_is_the_query_then_its_cookie_then_the_persons_choice_then_the_browser() {
    let app = TestApp::spawn().await;
    let lang_of = |page: &Page| page.html.split("<html lang=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    // Signed out: Korean by default, the browser's wish, then ?lang (remembered).
    assert_eq!(lang_of(&browser(&app, None).get("/login").await), "ko");
    let b = browser(&app, Some("en-US,en;q=0.9"));
    assert_eq!(lang_of(&b.get("/login").await), "en");
    let asked = b.get("/login?lang=ko").await;
    assert_eq!(lang_of(&asked), "ko");
    assert_eq!(asked.cookie_value("yeyak_lang").as_deref(), Some("ko"), "{:?}", asked.cookies);
    assert_eq!(lang_of(&b.get("/login").await), "ko", "the cookie remembers ?lang over Accept-Language");
    assert!(b.get("/login").await.html.contains("href=\"/login?lang=en\""), "the switch links this page");
    // ?lang on a page that redirects to sign-in is remembered too.
    let c = browser(&app, None);
    let redirected = c.get("/rooms?lang=en").await;
    assert_eq!(redirected.status, StatusCode::SEE_OTHER);
    assert_eq!(lang_of(&c.get(redirected.location.as_deref().unwrap()).await), "en");

    // Signed in: the person's choice beats the browser, and is theirs on every device.
    let admin = browser(&app, None);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let account = admin.get("/account").await;
    assert_eq!(lang_of(&account), "ko");
    let csrf = account.field("csrf_token");
    let bad = admin.post("/account/language", &[("language", "fr"), ("csrf_token", &csrf)]).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(app.count("SELECT count(*) FROM staff_user WHERE language IS NOT NULL").await, 0);
    let forged = admin.post("/account/language", &[("language", "en"), ("csrf_token", "00")]).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let chosen = admin.post("/account/language", &[("language", "en"), ("csrf_token", &csrf)]).await;
    assert_eq!(chosen.status, StatusCode::OK, "{}", chosen.html);
    assert_eq!(lang_of(&chosen), "en", "the answer is in the chosen language");
    assert!(chosen.html.contains("Your language is now English"), "{}", chosen.html);
    assert!(chosen.html.contains("<option value=\"en\" lang=\"en\" selected>"), "{}", chosen.html);
    assert_eq!(app.count("SELECT count(*) FROM staff_user WHERE username = 'admin' AND language = 'en'").await, 1);
    let elsewhere = browser(&app, Some("ko-KR,ko"));
    elsewhere.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    assert_eq!(lang_of(&elsewhere.get("/").await), "en", "the person's choice beats Accept-Language");
    // … and a language picked with ?lang on this browser beats it, and stays.
    assert_eq!(lang_of(&elsewhere.get("/my?lang=ko").await), "ko");
    assert_eq!(lang_of(&elsewhere.get("/").await), "ko");
    // The first admin's display name is its username.
    assert_eq!(
        app.count("SELECT count(*) FROM staff_user WHERE username = 'admin' AND display_name = 'admin'").await,
        1
    );
}

#[tokio::test]
async fn mail_and_feeds_read_in_their_recipients_language() {
    let (sink, smtp) = Sink::start().await;
    let app = TestApp::spawn_with(|c| c.smtp_url = Some(smtp.clone())).await;
    let admin = browser(&app, None);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    for (user, email) in [("ann", "ann@example.com"), ("kim", "kim@example.com")] {
        let staff = admin.get("/admin/staff").await;
        let added = admin
            .post(
                "/admin/staff",
                &[
                    ("username", user),
                    ("display_name", user),
                    ("email", email),
                    ("password", PASSWORD),
                    ("csrf_token", &staff.field("csrf_token")),
                ],
            )
            .await;
        assert_eq!(added.status, StatusCode::OK, "{}", added.html);
    }
    // Ann reads English (chosen on /account, from a Korean browser); Kim chose nothing.
    let ann = browser(&app, None);
    ann.sign_in("ann", PASSWORD).await;
    let account = ann.get("/account").await;
    let chosen =
        ann.post("/account/language", &[("language", "en"), ("csrf_token", &account.field("csrf_token"))]).await;
    assert_eq!(chosen.status, StatusCode::OK);
    let kim = browser(&app, Some("en"));
    kim.sign_in("kim", PASSWORD).await;
    let date = tomorrow(&app);
    ann.book(&date, "Budget review", "10:00", "11:00", &["A"]).await;
    kim.book(&date, "Design sync", "13:00", "14:00", &["B"]).await;
    let mailer =
        yeyak::mail::smtp::Mailer::new(&smtp, "yeyak <rooms@example.com>", app.state.policy().timezone, "yeyak.local")
            .unwrap();
    let worker = yeyak::outbox::worker::DeliveryWorker::new(
        app.state.pool.clone(),
        app.state.clock.clone(),
        yeyak::outbox::provider::Provider::Log,
    )
    .with_mail(yeyak::outbox::provider::Provider::Smtp(std::sync::Arc::new(mailer)));
    worker.run_once(100).await.unwrap();
    let mails = sink.received();
    let to = |who: &str| {
        let m = mails.iter().find(|m| m.to == [format!("<{who}@example.com>")]).unwrap_or_else(|| panic!("{mails:#?}"));
        crate::calendar::parse_mail(&m.data)
    };
    let text_of = |mail: &Value, kind: &str| {
        mail["parts"].as_array().unwrap().iter().find(|p| p["type"] == kind).unwrap()["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let english = to("ann");
    assert!(english["subject"].as_str().unwrap().starts_with("[Booked] Budget review · "), "{english}");
    let text = text_of(&english, "text/plain");
    assert!(text.starts_with("Hello ann,") && text.contains("Rooms: A"), "{text}");
    let calendar = text_of(&english, "text/calendar").replace("\r\n ", "");
    assert!(calendar.contains("DESCRIPTION:Booked by: ann"), "{calendar}");
    // The room's name is data, shown as entered (SPEC §19): the seed's is Korean.
    assert!(calendar.contains("LOCATION:회의실 A") && calendar.contains("CUTYPE=ROOM;CN=회의실 A;"), "{calendar}");
    let all = format!("{}{text}{calendar}", english["subject"]).replace("회의실 A", "");
    assert!(!all.chars().any(is_hangul), "English mail holds no Korean but data: {all}");
    // Kim's browser asks for English, but mail follows the stored choice: none, so Korean.
    let korean = to("kim");
    assert!(korean["subject"].as_str().unwrap().starts_with("[예약 확정] Design sync · "), "{korean}");
    assert!(text_of(&korean, "text/plain").contains("kim님"), "{korean}");

    // Feeds speak their holder's language.
    let ann_id = app.count("SELECT id FROM staff_user WHERE username = 'ann'").await;
    let token = yeyak::calendar::token::token(&app.state.secret, ann_id, 1);
    for path in [format!("/ical/me.ics?token={token}"), format!("/ical/rooms/A.ics?token={token}")] {
        let feed = app.http.get(app.url(&path)).send().await.unwrap().text().await.unwrap().replace("\r\n ", "");
        assert!(feed.contains("DESCRIPTION:Booked by: ann"), "{path}: {feed}");
        if path.contains("me.ics") {
            assert!(feed.contains("X-WR-CALNAME:Room bookings of ann"), "{feed}");
        }
        let stray: Vec<char> = feed.replace("회의실 A", "").chars().filter(|c| is_hangul(*c)).collect();
        assert!(stray.is_empty(), "{path}: {stray:?} in {feed}");
    }
}
