//! Safe by default, round three (SPEC §20, issue 26): each test performs one
//! attack over HTTP and checks what really happened — statuses, codes,
//! database rows, the bytes a calendar, a spreadsheet or a webhook gets.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use actix_web::{web as aweb, App, HttpResponse, HttpServer};
use chrono::{DateTime, Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use yeyak::clock::Clock;

use crate::helpers::*;
use crate::smtp_sink::Sink;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

fn utc(v: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap().with_timezone(&Utc)
}

fn seoul_date(t: DateTime<Utc>) -> String {
    t.with_timezone(&chrono_tz::Asia::Seoul).date_naive().to_string()
}

/// A person added through the admin form with any display name (and an
/// email, so notices reach them); returns their id and a signed-in browser.
async fn person<'a>(app: &'a TestApp, admin: &Browser<'_>, user: &str, display: &str) -> (i64, Browser<'a>) {
    let page = admin.get("/admin/staff").await;
    let added = admin
        .post(
            "/admin/staff",
            &[
                ("username", user),
                ("display_name", display),
                ("password", "correct-horse-1"),
                ("email", &format!("{user}@example.com")),
                ("csrf_token", &page.field("csrf_token")),
            ],
        )
        .await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.html);
    let db = app.db().await;
    let id: i64 = db.query_one("SELECT id FROM staff_user WHERE username = $1", &[&user]).await.unwrap().get(0);
    let b = Browser::new(app);
    b.sign_in(user, "correct-horse-1").await;
    (id, b)
}

async fn patch_series(app: &TestApp, id: i64, body: Value) -> (StatusCode, Value) {
    let res = app
        .request(Method::PATCH, &format!("/api/series/{id}"), TENANT_ONE, Some("alice"))
        .json(&body)
        .send()
        .await
        .unwrap();
    self::body(res).await
}

async fn approve(app: &TestApp, id: i64) {
    let (status, b) =
        send(app, Method::POST, &format!("/api/bookings/{id}/approve"), ADMIN, Some(&format!("ap-{id}")), json!({}))
            .await;
    assert_eq!((status, b["status"].as_str()), (StatusCode::OK, Some("CONFIRMED")), "{b}");
}

/// The last history event of a booking.
async fn last_event(app: &TestApp, id: i64) -> Value {
    let (_, history) = app.get_json(&format!("/api/bookings/{id}/history"), TENANT_ONE).await;
    history["events"].as_array().unwrap().last().unwrap().clone()
}

/// (kind, payload status) of the webhook notice of a booking's version.
async fn notice(app: &TestApp, id: i64, version: i64) -> (String, String) {
    let row = app
        .db()
        .await
        .query_one(
            "SELECT kind, payload->>'status' FROM notification_outbox WHERE delivery_id = $1 AND channel = 'webhook'",
            &[&format!("booking-{id}-v{version}-changed")],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

#[tokio::test]
async fn a_series_retimed_in_an_approval_room_waits_for_approval_again() {
    let app = TestApp::spawn().await;
    add_room(&app, json!({"code": "P", "name": "임원 회의실", "approvalRequired": true})).await;
    let new = json!({"title": "임원 주간", "rooms": ["P"], "startsAt": at(1, 1, 0), "endsAt": at(1, 2, 0),
                     "recurrence": "FREQ=WEEKLY;COUNT=3"});
    let (status, s) = post(&app, "/api/series", TENANT_ONE, "alice", "s", new).await;
    assert_eq!(status, StatusCode::CREATED, "{s}");
    let id = s["series"]["id"].as_i64().unwrap();
    let occ: Vec<i64> = s["created"].as_array().unwrap().iter().map(|b| b["id"].as_i64().unwrap()).collect();
    for o in &occ {
        approve(&app, *o).await;
    }
    // A single booking in the same room, approved and moved: the yardstick.
    let (_, single) = body(
        app.create_booking(TENANT_ONE, "alice", "one", &booking("단건", &["P"], &at(2, 3, 0), &at(2, 4, 0))).await,
    )
    .await;
    let sid = single["id"].as_i64().unwrap();
    approve(&app, sid).await;
    let later = json!({"startsAt": at(2, 5, 0), "endsAt": at(2, 6, 0)});
    let (_, moved) = body(app.move_booking(TENANT_ONE, "alice", sid, None, &later).await).await;
    assert_eq!(moved["status"], "PENDING", "{moved}");

    // A new title alone needs no new approval.
    let (status, edited) = patch_series(&app, id, json!({"title": "임원 주간 회의"})).await;
    assert_eq!(status, StatusCode::OK, "{edited}");
    for b in edited["occurrences"].as_array().unwrap() {
        assert_eq!((b["title"].as_str(), b["status"].as_str()), (Some("임원 주간 회의"), Some("CONFIRMED")), "{b}");
    }
    // The attack: approved at 10:00, then quietly moved to 15:00 (local) in
    // a room that needs approval.
    let (status, edited) = patch_series(&app, id, json!({"startTime": "15:00", "endTime": "16:00"})).await;
    assert_eq!(status, StatusCode::OK, "{edited}");
    for b in edited["occurrences"].as_array().unwrap() {
        assert_eq!(b["status"], "PENDING", "a retimed occurrence waits for approval again: {b}");
    }
    for o in &occ {
        let (_, b) = app.get_json(&format!("/api/bookings/{o}"), TENANT_ONE).await;
        assert_eq!((b["status"].as_str(), b["version"].as_i64()), (Some("PENDING"), Some(4)), "{b}");
        // Recorded and announced exactly as a single move is.
        let event = last_event(&app, *o).await;
        let single_event = last_event(&app, sid).await;
        assert_eq!(event["action"], single_event["action"]);
        assert_eq!(event["changes"]["status"], json!({"before": "CONFIRMED", "after": "PENDING"}), "{event}");
        assert_eq!(event["changes"]["status"], single_event["changes"]["status"]);
        assert_eq!(notice(&app, *o, 4).await, ("booking.moved".to_owned(), "PENDING".to_owned()));
    }
    assert_eq!(notice(&app, sid, 3).await, ("booking.moved".to_owned(), "PENDING".to_owned()));
    let pending = app.count("SELECT count(*) FROM reservation WHERE status = 'PENDING'").await;
    assert_eq!(pending, 4);
    app.assert_consistent().await;
}

/// The content lines of an iCalendar text, unfolded.
fn unfolded(text: &str) -> Vec<String> {
    text.replace("\r\n ", "").split("\r\n").map(str::to_owned).collect()
}

fn line<'a>(lines: &'a [String], name: &str) -> &'a str {
    let prefix = format!("{name}:");
    lines.iter().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("no {name} in {lines:#?}"))
}

#[tokio::test]
async fn calendar_text_is_escaped_in_feeds_downloads_and_invitations() {
    let (sink, smtp) = Sink::start().await;
    let app = TestApp::spawn_with(|c| c.smtp_url = Some(smtp.clone())).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let room = r#"회의실; 1, 2 \ 3: "큰 방""#;
    add_room(&app, json!({"code": "Q", "name": room})).await;
    let display = r#"김, 민지; 팀장: A\B"#;
    let (kim, kim_browser) = person(&app, &admin, "kim", display).await;
    let title = r#"분기, 계획; "검토" \ 끝: X-INJECT"#;
    let date = crate::web::tomorrow(&app);
    let booked = kim_browser.book(&date, title, "10:00", "11:00", &["Q"]).await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    let id = crate::web::booked_id(&booked);

    let esc = |s: &str| s.replace('\\', "\\\\").replace(';', "\\;").replace(',', "\\,");
    let token = yeyak::calendar::token::token(&app.state.secret, kim, 1);
    let room_feed = app.http.get(app.url(&format!("/ical/rooms/Q.ics?token={token}"))).send().await.unwrap();
    let room_feed = room_feed.text().await.unwrap();
    let lines = unfolded(&room_feed);
    assert_eq!(line(&lines, "NAME"), format!("NAME:{}", esc(room)), "the room's name, escaped");
    assert_eq!(line(&lines, "X-WR-CALNAME"), format!("X-WR-CALNAME:{}", esc(room)));
    assert_eq!(line(&lines, "SUMMARY"), format!("SUMMARY:{}", esc(title)));
    assert_eq!(line(&lines, "LOCATION"), format!("LOCATION:{}", esc(room)));
    assert_eq!(line(&lines, "DESCRIPTION"), format!("DESCRIPTION:{}", esc(&format!("예약한 사람: {display}"))));
    let events = crate::calendar::parse_ics(&room_feed);
    assert_eq!((events[0]["summary"].as_str(), events[0]["location"].as_str()), (Some(title), Some(room)));

    let me = app.http.get(app.url(&format!("/ical/me.ics?token={token}"))).send().await.unwrap();
    let lines = unfolded(&me.text().await.unwrap());
    assert_eq!(line(&lines, "NAME"), format!("NAME:{}", esc(&format!("{display}의 회의실 예약"))));
    let file = kim_browser.get(&format!("/bookings/{id}.ics")).await;
    let lines = unfolded(&file.html);
    assert_eq!(line(&lines, "NAME"), format!("NAME:{}", esc(title)), "a download is named by its title");
    assert_eq!(line(&lines, "SUMMARY"), format!("SUMMARY:{}", esc(title)));

    // The invitation: NAME escaped, CN quoted (it holds `,`, `;` and `:`).
    let mailer =
        yeyak::mail::smtp::Mailer::new(&smtp, "yeyak <rooms@example.com>", app.state.policy().timezone, "yeyak.local")
            .unwrap();
    let worker = yeyak::outbox::worker::DeliveryWorker::new(
        app.state.pool.clone(),
        app.state.clock.clone(),
        yeyak::outbox::provider::Provider::Log,
    )
    .with_mail(yeyak::outbox::provider::Provider::Smtp(Arc::new(mailer)));
    assert_eq!(worker.run_once(10).await.unwrap().delivered, 2, "the webhook (log) and the mail");
    let mails = sink.received();
    assert_eq!(mails.len(), 1);
    let parsed = crate::calendar::parse_mail(&mails[0].data);
    let part = parsed["parts"].as_array().unwrap().iter().find(|p| p["type"] == "text/calendar").unwrap().clone();
    let lines = unfolded(part["text"].as_str().unwrap());
    assert_eq!(line(&lines, "NAME"), format!("NAME:{}", esc(title)), "{lines:#?}");
    assert_eq!(line(&lines, "SUMMARY"), format!("SUMMARY:{}", esc(title)));
    // The organizer is the person (SPEC §18), the room an attendee; both CNs quoted.
    let organizer = lines.iter().find(|l| l.starts_with("ORGANIZER;")).unwrap();
    assert!(organizer.contains(&format!("CN=\"{display}\"")), "{organizer}");
    let attendee = lines.iter().find(|l| l.starts_with("ATTENDEE;")).unwrap();
    let room_cn = room.replace('"', "");
    assert!(attendee.contains("CUTYPE=ROOM") && attendee.contains(&format!("CN=\"{room_cn}\"")), "{attendee}");
}

#[tokio::test]
async fn control_characters_are_refused_in_every_name_naming_the_field() {
    let app = TestApp::spawn().await;
    let refused = |status: StatusCode, body: &Value, field: &str| {
        assert_eq!(
            (status, body["code"].as_str(), body["details"]["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some("MALFORMED_REQUEST"), Some(field)),
            "{body}"
        );
    };
    for (i, bad) in
        ["회의\u{2028}주입", "회의\u{2029}주입", "첫 줄\n둘째 줄", "a\u{7f}b", "a\u{1b}[31mb"].iter().enumerate()
    {
        let b = booking(bad, &["A"], &at(1, 10, 0), &at(1, 11, 0));
        let (status, err) = body(app.create_booking(TENANT_ONE, "alice", &format!("t{i}"), &b).await).await;
        refused(status, &err, "title");
        let mut b = booking("회의", &["A"], &at(1, 10, 0), &at(1, 11, 0));
        b["organizerName"] = json!(bad);
        let (status, err) = body(app.create_booking(TENANT_ONE, "alice", &format!("o{i}"), &b).await).await;
        refused(status, &err, "organizerName");
        let series = json!({"title": bad, "rooms": ["A"], "startsAt": at(1, 10, 0), "endsAt": at(1, 11, 0),
                            "recurrence": "FREQ=DAILY;COUNT=2"});
        let (status, err) = post(&app, "/api/series", TENANT_ONE, "alice", &format!("s{i}"), series).await;
        refused(status, &err, "title");
        let (status, err) = send(
            &app,
            Method::POST,
            "/api/rooms",
            ADMIN,
            Some(&format!("r{i}")),
            json!({"code": format!("Z{i}"), "name": bad}),
        )
        .await;
        refused(status, &err, "name");
        let key = json!({"tenant": "t9", "role": "integration", "label": bad});
        let (status, err) = send(&app, Method::POST, "/api/admin/keys", ADMIN, None, key).await;
        refused(status, &err, "label");
    }
    // A retitle by PATCH is refused the same way.
    let (_, ok) = body(
        app.create_booking(TENANT_ONE, "alice", "ok", &booking("회의", &["A"], &at(1, 10, 0), &at(1, 11, 0))).await,
    )
    .await;
    let retitle = json!({"startsAt": at(1, 10, 0), "endsAt": at(1, 11, 0), "title": "새\u{2028}제목"});
    let (status, err) =
        body(app.move_booking(TENANT_ONE, "alice", ok["id"].as_i64().unwrap(), None, &retitle).await).await;
    refused(status, &err, "title");
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 1, "only the clean booking");
    assert_eq!(app.count("SELECT count(*) FROM booking_series").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM room WHERE code LIKE 'Z%'").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM api_key WHERE tenant = 't9'").await, 0);

    // The admin forms: a person's display name and a key's label.
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    for bad in ["김\u{2028}민지", "김\u{0}민지", "김\u{7f}"] {
        let page = admin.get("/admin/staff").await;
        let form = [
            ("username", "kim"),
            ("display_name", bad),
            ("password", "correct-horse-1"),
            ("csrf_token", &page.field("csrf_token")),
        ];
        let added = admin.post("/admin/staff", &form).await;
        assert_eq!(added.status, StatusCode::BAD_REQUEST, "{bad:?}: {}", added.html);
        let form =
            [("tenant", "t9"), ("role", "integration"), ("label", bad), ("csrf_token", &page.field("csrf_token"))];
        let key = admin.post("/admin/keys", &form).await;
        assert_eq!(key.status, StatusCode::BAD_REQUEST, "{bad:?}: {}", key.html);
    }
    assert_eq!(app.count("SELECT count(*) FROM staff_user WHERE username = 'kim'").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM api_key WHERE tenant = 't9'").await, 0);
}

async fn long_series(app: &TestApp, room: &str, rule: &str, idem: &str) -> (StatusCode, Value) {
    let new =
        json!({"title": "장기", "rooms": [room], "startsAt": at(1, 1, 0), "endsAt": at(1, 2, 0), "recurrence": rule});
    post(app, "/api/series", TENANT_ONE, "alice", idem, new).await
}

#[tokio::test]
async fn a_series_ends_at_most_five_years_after_its_first_occurrence() {
    let app = TestApp::spawn().await;
    // Two occurrences 30 years apart; six a year apart for six years; a
    // monthly rule until ten years on; daily steps of 366 days past 5 years.
    let ten_years = (utc(&json!(at(1, 1, 0))) + Duration::days(3653)).format("%Y%m%d").to_string();
    for (i, rule) in [
        "FREQ=MONTHLY;INTERVAL=366;COUNT=2".to_owned(),
        "FREQ=WEEKLY;INTERVAL=53;COUNT=6".to_owned(),
        format!("FREQ=MONTHLY;UNTIL={ten_years}"),
        "FREQ=DAILY;INTERVAL=366;COUNT=6".to_owned(),
    ]
    .iter()
    .enumerate()
    {
        let (status, body) = long_series(&app, "A", rule, &format!("long{i}")).await;
        assert_eq!(
            (status, body["code"].as_str(), body["details"]["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some("SERIES_TOO_LONG"), Some("recurrence")),
            "{rule}: {body}"
        );
    }
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM booking_series").await, 0);
    // Within five years is fine: 5 × 366 days is 1830 days (too long), 5 × 52
    // weeks is 1820 (fine), and 1464 days is fine.
    for (room, rule, n) in [("A", "FREQ=WEEKLY;INTERVAL=52;COUNT=6", 6), ("B", "FREQ=DAILY;INTERVAL=366;COUNT=5", 5)] {
        let (status, body) = long_series(&app, room, rule, &format!("ok{room}")).await;
        assert_eq!(status, StatusCode::CREATED, "{rule}: {body}");
        let created = body["created"].as_array().unwrap();
        assert_eq!(created.len(), n);
        let span = utc(&created[n - 1]["startsAt"]) - utc(&created[0]["startsAt"]);
        assert!(span <= Duration::days(1827), "{rule}: {span}");
    }
    assert!(
        app.count("SELECT count(*) FROM reservation WHERE starts_at > now() + interval '5 years 2 days'").await == 0
    );
}

async fn report(app: &TestApp, file: &str, day: &str) -> String {
    let url = app.url(&format!("/api/admin/reports/{file}?from={day}&to={day}"));
    let res = app.http.get(url).bearer_auth(ADMIN).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    res.text().await.unwrap()
}

#[tokio::test]
async fn csv_cells_with_separators_are_quoted_and_formulas_stay_defused() {
    let app = TestApp::spawn().await;
    let tomorrow = utc(&json!(at(1, 0, 0)));
    let titles = ["a;b", "=1+2;x", "-3", "@SUM(A1)", "+1", "plain", "쉼표, 있음"];
    for (i, t) in titles.iter().enumerate() {
        let mut b = booking(t, &["A"], &at(1, i as u32, 0), &at(1, i as u32, 30));
        b["organizerName"] = json!("김;민지");
        let (status, made) = body(app.create_booking(TENANT_ONE, "alice", &format!("c{i}"), &b).await).await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
    }
    // Rows written before titles refused control characters.
    app.db()
        .await
        .execute("UPDATE reservation SET title = E'\\tstart\\r\\nrow' WHERE title = 'plain'", &[])
        .await
        .unwrap();
    app.db().await.execute("UPDATE room SET name = '=cmd|x;y' WHERE code = 'A'", &[]).await.unwrap();
    let day = seoul_date(tomorrow);
    let bookings = report(&app, "bookings.csv", &day).await;
    for cell in [
        "\"a;b\"",
        "\"'=1+2;x\"",
        ",'-3,",
        ",'@SUM(A1),",
        ",'+1,",
        "\"쉼표, 있음\"",
        "\"'\tstart\r\nrow\"",
        ",\"김;민지\",",
    ] {
        assert!(bookings.contains(cell), "{cell:?} in {bookings}");
    }
    assert!(!bookings.contains(",a;b,") && !bookings.contains(",김;민지,"), "{bookings}");
    // Read back by a strict RFC 4180 reader: every cell whole, formulas inert.
    let rows: Vec<Vec<String>> = ::csv::ReaderBuilder::new()
        .from_reader(bookings.trim_start_matches('\u{feff}').as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    let cells: Vec<(&str, &str)> = rows.iter().map(|r| (r[4].as_str(), r[5].as_str())).collect();
    let expected = ["a;b", "'=1+2;x", "'-3", "'@SUM(A1)", "'+1", "'\tstart\r\nrow", "쉼표, 있음"];
    assert_eq!(cells, expected.iter().map(|t| (*t, "김;민지")).collect::<Vec<_>>());
    let utilisation = report(&app, "utilisation.csv", &day).await;
    assert!(utilisation.contains(",\"'=cmd|x;y\","), "{utilisation}");
}

/// A receiver that answers `/moved` with a redirect to `/hook`, and counts
/// what reaches `/hook` by any method.
async fn redirecting_receiver(status: u16) -> (Arc<AtomicU32>, String) {
    let reached = Arc::new(AtomicU32::new(0));
    let counter = reached.clone();
    let server = HttpServer::new(move || {
        let counter = counter.clone();
        App::new()
            .route(
                "/moved",
                aweb::post().to(move || async move {
                    HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap())
                        .insert_header(("Location", "/hook"))
                        .finish()
                }),
            )
            .default_service(aweb::to(move || {
                let counter = counter.clone();
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    HttpResponse::Created().finish()
                }
            }))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let addr = server.addrs()[0];
    tokio::spawn(server.run());
    (reached, format!("http://{addr}/moved"))
}

#[tokio::test]
async fn a_webhook_redirect_is_a_failed_attempt_not_followed() {
    let app = TestApp::spawn().await;
    for (i, status) in [301u16, 302, 303, 307, 308].into_iter().enumerate() {
        let (reached, url) = redirecting_receiver(status).await;
        let intent = yeyak::outbox::Intent::hold_expired(100 + i as i64, 1);
        let mut conn = yeyak::db::establish(&app.database_url()).await.unwrap();
        yeyak::outbox::enqueue(&mut conn, &intent, app.clock.now()).await.unwrap();
        let worker = yeyak::outbox::worker::DeliveryWorker::new(
            app.state.pool.clone(),
            Arc::new(app.clock.clone()),
            yeyak::outbox::provider::Provider::webhook(&url),
        );
        let summary = worker.run_once(10).await.unwrap();
        assert_eq!((summary.claimed, summary.delivered), (1, 0), "{status}: {summary:?}");
        assert_eq!(reached.load(Ordering::SeqCst), 0, "{status}: the redirect was not followed");
        let db = app.db().await;
        let row = db
            .query_one("SELECT status FROM notification_outbox WHERE delivery_id = $1", &[&intent.delivery_id])
            .await
            .unwrap();
        assert_eq!(row.get::<_, String>(0), "EXHAUSTED", "{status}: a redirect is permanent");
        let attempt = db
            .query_one(
                "SELECT outcome, detail FROM notification_attempt WHERE delivery_id = $1",
                &[&intent.delivery_id],
            )
            .await
            .unwrap();
        let (outcome, detail): (String, Option<String>) = (attempt.get(0), attempt.get(1));
        assert_eq!(outcome, "PERMANENT", "{status}");
        assert!(detail.unwrap_or_default().contains(&status.to_string()), "{status}: the attempt names the answer");
    }
}

#[tokio::test]
async fn integration_bookings_show_their_tenant_on_every_page() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, kim) = person(&app, &admin, "kim", "김민지").await;
    let starts = app.clock.now() + Duration::hours(1);
    let date = seoul_date(starts);
    // An integration books as "김민지", the name of a real colleague.
    let mut b = booking("임원 보고", &["A"], &starts.to_rfc3339(), &(starts + Duration::hours(1)).to_rfc3339());
    b["organizerName"] = json!("김민지");
    let (status, made) = body(app.create_booking(TENANT_ONE, "alice", "i1", &b).await).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let id = made["id"].as_i64().unwrap();
    assert!(made.get("organizerTenant").is_none_or(|t| t == "t1"), "{made}");
    // An admin key's booking, a series by an integration, and Kim's own.
    let later = starts + Duration::hours(2);
    let ops = booking("운영", &["B"], &later.to_rfc3339(), &(later + Duration::hours(1)).to_rfc3339());
    let (_, ops) = body(app.create_booking(ADMIN, "ops", "i2", &ops).await).await;
    let series = json!({"title": "반복", "rooms": ["C"], "startsAt": starts.to_rfc3339(),
                        "endsAt": (starts + Duration::hours(1)).to_rfc3339(), "recurrence": "FREQ=DAILY;COUNT=2",
                        "organizerName": "김민지"});
    let (status, s) = post(&app, "/api/series", TENANT_TWO, "bob", "i3", series).await;
    assert_eq!(status, StatusCode::CREATED, "{s}");
    let own = kim.book(&crate::web::tomorrow(&app), "내 회의", "23:00", "23:30", &["B"]).await;
    let own = crate::web::booked_id(&own);

    let shown = "김민지 · t1";
    let day = kim.get(&format!("/rooms?date={date}")).await;
    let block = &day.html[day.html.find("임원 보고</strong>").expect("the block")..];
    assert!(block[..block.find("</a>").unwrap()].contains(shown), "the day grid: {}", day.html);
    assert!(day.html.contains("김민지 · t2"), "the series on the day grid");
    let page = kim.get(&format!("/bookings/{id}")).await;
    assert!(page.html.contains(&format!("<dd>{shown}</dd>")), "the booking page: {}", page.html);
    let page = kim.get(&format!("/bookings/{own}")).await;
    assert!(page.html.contains("<dd>김민지</dd>"), "Kim's own booking: {}", page.html);
    let url = crate::display::display_url(&admin, "A").await;
    let door = app.http.get(app.url(&url)).send().await.unwrap().text().await.unwrap();
    assert!(door.contains(shown), "the door display: {door}");
    assert!(!door.contains("김민지<") && !door.contains("김민지</span>"), "never the bare name: {door}");
    let tenant = |id: i64| {
        let app = &app;
        async move {
            app.db()
                .await
                .query_one("SELECT organizer_tenant FROM reservation WHERE id = $1", &[&id])
                .await
                .unwrap()
                .get::<_, Option<String>>(0)
        }
    };
    assert_eq!(tenant(id).await.as_deref(), Some("t1"));
    assert_eq!(tenant(ops["id"].as_i64().unwrap()).await.as_deref(), Some("ops"));
    assert_eq!(tenant(s["created"][1]["id"].as_i64().unwrap()).await.as_deref(), Some("t2"));
    assert_eq!(tenant(own).await, None, "a person's booking names the person");
}
