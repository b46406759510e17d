//! Calendars and mail (SPEC §10), read back by independent parsers: Python's
//! `icalendar` for feeds and invitations, Python's `email` for messages
//! received by a real SMTP server (`smtp_sink`).

use std::process::Command;

use chrono::{DateTime, Duration, DurationRound, Utc};
use reqwest::StatusCode;
use serde_json::{json, Value};
use yeyak::clock::Clock;

use crate::helpers::*;
use crate::smtp_sink::Sink;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

/// Runs Python with `icalendar` (installed on first use) on stdin.
fn python(script: &str, input: &str) -> Value {
    let has = Command::new("python3").args(["-c", "import icalendar"]).status().is_ok_and(|s| s.success());
    if !has {
        let ok = Command::new("python3").args(["-m", "pip", "install", "-q", "icalendar"]).status().unwrap();
        assert!(ok.success(), "pip install icalendar");
    }
    use std::io::Write;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every VEVENT of an iCalendar text, as parsed by Python's `icalendar`.
pub fn parse_ics(text: &str) -> Vec<Value> {
    let script = r#"
import sys, json, icalendar
raw = sys.stdin.buffer.read()
assert b"\n" not in raw.replace(b"\r\n", b""), "bare LF"
for line in raw.split(b"\r\n"):
    assert len(line) <= 75, (len(line), line)
    line.decode("utf-8")
cal = icalendar.Calendar.from_ical(raw)
def person(p):
    if p is None:
        return None
    out = {"address": str(p), "cn": str(p.params.get("CN"))}
    if "CUTYPE" in p.params:
        out["cutype"] = str(p.params["CUTYPE"])
    return out
def attendees(e):
    a = e.get("ATTENDEE")
    return [] if a is None else (a if isinstance(a, list) else [a])
out = []
for e in cal.walk("VEVENT"):
    out.append({"uid": str(e["UID"]), "summary": str(e["SUMMARY"]), "status": str(e.get("STATUS", "")),
                "sequence": int(e.get("SEQUENCE", 0)), "location": str(e.get("LOCATION", "")),
                "start": e.decoded("DTSTART").isoformat(), "end": e.decoded("DTEND").isoformat(),
                "method": str(cal.get("METHOD", "")), "organizer": person(e.get("ORGANIZER")),
                "attendees": [person(a) for a in attendees(e)]})
print(json.dumps(out))
"#;
    python(script, text).as_array().unwrap().clone()
}

/// A received message as Python's `email` reads it: subject, Message-ID and
/// each part's content type and decoded text.
pub fn parse_mail(raw: &str) -> Value {
    let script = r#"
import sys, json, email
from email import policy
msg = email.message_from_bytes(sys.stdin.buffer.read(), policy=policy.default)
parts = [{"type": p.get_content_type(), "method": p.get_param("method"), "text": p.get_content()}
         for p in msg.walk() if not p.is_multipart()]
print(json.dumps({"subject": str(msg["Subject"]), "messageId": str(msg["Message-ID"]), "to": str(msg["To"]), "parts": parts}))
"#;
    python(script, raw)
}

fn when(v: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap().with_timezone(&Utc)
}

/// Adds a staff member (with an email) through the database and returns
/// their id and a signed-in browser.
pub async fn person<'a>(app: &'a TestApp, admin: &Browser<'_>, user: &str, email: &str) -> (i64, Browser<'a>) {
    let b = crate::web_rooms::staff_member(app, admin, user).await;
    let db = app.db().await;
    db.execute("UPDATE staff_user SET email = $1 WHERE username = $2", &[&email, &user]).await.unwrap();
    let id: i64 = db.query_one("SELECT id FROM staff_user WHERE username = $1", &[&user]).await.unwrap().get(0);
    (id, b)
}

fn feed_token(app: &TestApp, id: i64, generation: i32) -> String {
    yeyak::calendar::token::token(&app.state.secret, id, generation)
}

#[tokio::test]
async fn feeds_equal_the_bookings_and_survive_any_title() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim, kim_browser) = person(&app, &admin, "kim", "kim@example.com").await;
    let date = crate::web::tomorrow(&app);
    // One line (SPEC §20 refuses line breaks in titles).
    let odd = "분기, 계획; \"검토\": 둘째 줄 \\ 끝".to_owned() + &"가".repeat(180);
    let odd: String = odd.chars().take(200).collect();
    // Kim's bookings through the browser form: one with the odd title.
    let page = kim_browser.get(&format!("/rooms?date={date}")).await;
    let booked = kim_browser
        .post(
            "/bookings",
            &[
                ("title", &odd),
                ("date", &date),
                ("start", "10:00"),
                ("end", "11:00"),
                ("rooms", "A"),
                ("csrf_token", &page.field("csrf_token")),
                ("idempotency_key", &page.field("idempotency_key")),
            ],
        )
        .await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    let second = kim_browser.book(&date, "취소될 회의", "12:00", "13:00", &["B"]).await;
    let cancel_id =
        second.location.unwrap().split("booked=").nth(1).unwrap().split(['&', '#']).next().unwrap().to_owned();
    let confirm = kim_browser.get(&format!("/bookings/{cancel_id}/cancel")).await;
    kim_browser
        .post(
            &format!("/bookings/{cancel_id}/cancel"),
            &[("csrf_token", &confirm.field("csrf_token")), ("idempotency_key", &confirm.field("idempotency_key"))],
        )
        .await;

    let token = feed_token(&app, kim, 1);
    let res = app.http.get(app.url(&format!("/ical/me.ics?token={token}"))).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "text/calendar; charset=utf-8");
    let events = parse_ics(&res.text().await.unwrap());
    assert_eq!(events.len(), 2, "{events:#?}");
    let first = events.iter().find(|e| e["status"] == "CONFIRMED").unwrap();
    assert_eq!(first["summary"], odd, "commas, semicolons, colons, quotes, backslashes, Korean, 200 characters");
    assert_eq!(first["location"], "회의실 A");
    let cancelled = events.iter().find(|e| e["status"] == "CANCELLED").unwrap();
    assert_eq!(
        (cancelled["uid"].as_str(), cancelled["sequence"].as_i64()),
        (Some(format!("booking-{cancel_id}@yeyak.local").as_str()), Some(2))
    );

    // A room feed opens with any active person's token; wrong or rotated → 404.
    let room = app.http.get(app.url(&format!("/ical/rooms/A.ics?token={token}"))).send().await.unwrap();
    assert_eq!(room.status(), StatusCode::OK);
    assert_eq!(parse_ics(&room.text().await.unwrap()).len(), 1);
    for bad in ["/ical/me.ics?token=yc_1_00", "/ical/me.ics", "/ical/rooms/A.ics?token=nope", "/ical/rooms/ZZ.ics"] {
        assert_eq!(app.http.get(app.url(bad)).send().await.unwrap().status(), StatusCode::NOT_FOUND, "{bad}");
    }
    app.db()
        .await
        .execute("UPDATE staff_user SET calendar_generation = calendar_generation + 1 WHERE id = $1", &[&kim])
        .await
        .unwrap();
    assert_eq!(
        app.http.get(app.url(&format!("/ical/me.ics?token={token}"))).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    let rotated = feed_token(&app, kim, 2);
    assert_eq!(
        app.http.get(app.url(&format!("/ical/me.ics?token={rotated}"))).send().await.unwrap().status(),
        StatusCode::OK
    );
    // One booking as a file, for a signed-in person.
    let file = kim_browser.get(&format!("/bookings/{cancel_id}.ics")).await;
    assert_eq!(file.status, StatusCode::OK);
    assert_eq!(parse_ics(&file.html).len(), 1);
}

#[tokio::test]
async fn a_series_shows_exactly_its_live_occurrences() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim, _) = person(&app, &admin, "kim", "kim@example.com").await;
    let body = json!({"title": "주간 회의", "rooms": ["C"], "startsAt": at(1, 1, 0), "endsAt": at(1, 2, 0), "recurrence": "FREQ=WEEKLY;COUNT=4"});
    let (_, s) = post(&app, "/api/series", ADMIN, "ops", "s", body).await;
    let occ: Vec<i64> = s["created"].as_array().unwrap().iter().map(|b| b["id"].as_i64().unwrap()).collect();
    app.cancel_booking(ADMIN, "ops", occ[1], None, &json!({})).await;
    app.move_booking(ADMIN, "ops", occ[2], None, &json!({"startsAt": at(15, 5, 0), "endsAt": at(15, 6, 0)})).await;
    let room =
        app.http.get(app.url(&format!("/ical/rooms/C.ics?token={}", feed_token(&app, kim, 1)))).send().await.unwrap();
    let events = parse_ics(&room.text().await.unwrap());
    let live: Vec<(DateTime<Utc>, DateTime<Utc>)> =
        events.iter().filter(|e| e["status"] != "CANCELLED").map(|e| (when(&e["start"]), when(&e["end"]))).collect();
    let at_utc = |d: i64, h: u32| when(&json!(at(d, h, 0)));
    assert_eq!(
        live,
        vec![(at_utc(1, 1), at_utc(1, 2)), (at_utc(15, 5), at_utc(15, 6)), (at_utc(22, 1), at_utc(22, 2))]
    );
}

pub async fn deliver(app: &TestApp, smtp: &str) -> yeyak::outbox::worker::DeliverySummary {
    let mailer =
        yeyak::mail::smtp::Mailer::new(smtp, "yeyak <rooms@example.com>", app.state.policy().timezone, "yeyak.local")
            .unwrap()
            .with_room_domain(&app.state.room_mail_domain);
    let worker = yeyak::outbox::worker::DeliveryWorker::new(
        app.state.pool.clone(),
        app.state.clock.clone(),
        yeyak::outbox::provider::Provider::Log,
    )
    .with_mail(yeyak::outbox::provider::Provider::Smtp(std::sync::Arc::new(mailer)));
    worker.run_once(100).await.unwrap()
}

#[tokio::test]
async fn create_move_and_cancel_by_anyone_reach_the_organizer_once_each() {
    let (sink, smtp) = Sink::start().await;
    let app = TestApp::spawn_with(|c| c.smtp_url = Some(smtp.clone())).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, kim) = person(&app, &admin, "kim", "kim@example.com").await;
    let date = crate::web::tomorrow(&app);
    let booked = kim.book(&date, "기획 회의", "10:00", "11:00", &["A"]).await;
    let id = booked.location.unwrap().split("booked=").nth(1).unwrap().split(['&', '#']).next().unwrap().to_owned();
    deliver(&app, &smtp).await;
    // The admin moves it, then cancels it: the organizer hears of both.
    let detail = admin.get(&format!("/bookings/{id}")).await;
    admin
        .post(
            &format!("/bookings/{id}/move"),
            &[
                ("date", &date),
                ("start", "14:00"),
                ("end", "15:00"),
                ("csrf_token", &detail.field("csrf_token")),
                ("idempotency_key", &detail.field("idempotency_key")),
            ],
        )
        .await;
    deliver(&app, &smtp).await;
    let confirm = admin.get(&format!("/bookings/{id}/cancel")).await;
    admin
        .post(
            &format!("/bookings/{id}/cancel"),
            &[("csrf_token", &confirm.field("csrf_token")), ("idempotency_key", &confirm.field("idempotency_key"))],
        )
        .await;
    deliver(&app, &smtp).await;
    deliver(&app, &smtp).await; // nothing left: nothing sent twice
    let mails = sink.received();
    assert_eq!(mails.len(), 3, "{mails:#?}");
    assert!(mails.iter().all(|m| m.to == ["<kim@example.com>"]), "to the organizer only");
    let parsed: Vec<Value> = mails.iter().map(|m| parse_mail(&m.data)).collect();
    let subjects: Vec<&str> = parsed.iter().map(|p| p["subject"].as_str().unwrap()).collect();
    assert!(
        subjects[0].starts_with("[예약 확정] 기획 회의")
            && subjects[1].starts_with("[예약 변경]")
            && subjects[2].starts_with("[예약 취소]"),
        "{subjects:?}"
    );
    let mut uids = Vec::new();
    for (p, (method, sequence)) in parsed.iter().zip([("REQUEST", 1), ("REQUEST", 2), ("CANCEL", 3)]) {
        assert!(p["to"].as_str().unwrap().contains("kim@example.com"));
        let text = p["parts"].as_array().unwrap().iter().find(|x| x["type"] == "text/plain").unwrap()["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(text.contains("kim님") && text.contains("회의실: A"), "{text}");
        let cal = p["parts"].as_array().unwrap().iter().find(|x| x["type"] == "text/calendar").unwrap();
        assert_eq!(cal["method"], method);
        let events = parse_ics(cal["text"].as_str().unwrap());
        assert_eq!((events[0]["method"].as_str(), events[0]["sequence"].as_i64()), (Some(method), Some(sequence)));
        uids.push(events[0]["uid"].as_str().unwrap().to_owned());
    }
    assert!(uids.iter().all(|u| *u == format!("booking-{id}@yeyak.local")), "one UID: {uids:?}");
    assert_eq!(parsed[0]["messageId"], format!("<booking-{id}-v1-changed@yeyak.local>"));
}

#[tokio::test]
async fn a_reminder_goes_once_per_version_and_never_after_a_cancel() {
    let (sink, smtp) = Sink::start().await;
    let app = TestApp::spawn_with(|c| c.smtp_url = Some(smtp.clone())).await;
    let second = app.another_process().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, kim) = person(&app, &admin, "kim", "kim@example.com").await;
    // A booking an hour ahead (local date and time of the app's zone).
    let tz = app.state.policy().timezone;
    let start = (app.clock.now() + Duration::hours(1)).duration_trunc(Duration::minutes(30)).unwrap();
    let local = start.with_timezone(&tz);
    let end = (start + Duration::minutes(30)).with_timezone(&tz);
    let booked = kim
        .book(
            &local.format("%Y-%m-%d").to_string(),
            "곧 시작할 회의",
            &local.format("%H:%M").to_string(),
            &end.format("%H:%M").to_string(),
            &["C"],
        )
        .await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    let id: i64 =
        booked.location.unwrap().split("booked=").nth(1).unwrap().split(['&', '#']).next().unwrap().parse().unwrap();
    let reminders = || app.count("SELECT count(*) FROM notification_outbox WHERE kind = 'booking.reminder'");
    // Too early: nothing.
    app.state.sweeper.sweep_now(32).await.unwrap();
    assert_eq!(reminders().await, 0);
    // Within 15 minutes: one, whoever sweeps and however often.
    for clock in [&app.clock, &second.clock] {
        clock.set(start - Duration::minutes(10));
    }
    app.state.sweeper.sweep_now(32).await.unwrap();
    second.state.sweeper.sweep_now(32).await.unwrap();
    app.state.sweeper.sweep_now(32).await.unwrap();
    assert_eq!(reminders().await, 1);
    assert_eq!(app.count(&format!("SELECT count(*) FROM notification_outbox WHERE delivery_id = 'booking-{id}-v1-reminder' AND channel = 'mail'")).await, 1);
    deliver(&app, &smtp).await;
    let sent = sink
        .received()
        .iter()
        .filter(|m| parse_mail(&m.data)["subject"].as_str().unwrap().starts_with("[곧 시작]"))
        .count();
    assert_eq!(sent, 1);
    // Moved (still soon): a fresh reminder for version 2, delivered once.
    let (status, moved) = body(
        app.move_booking(
            ADMIN,
            "ops",
            id,
            None,
            &json!({"startsAt": start + Duration::minutes(5), "endsAt": start + Duration::minutes(35)}),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    // At once, by the move itself: no sweep has run since.
    assert_eq!(
        app.count(&format!("SELECT count(*) FROM notification_outbox WHERE delivery_id = 'booking-{id}-v2-reminder'"))
            .await,
        1,
        "the move enqueued its reminder"
    );
    // Cancelled before it went: withdrawn, and none comes back.
    app.cancel_booking(ADMIN, "ops", id, None, &json!({})).await;
    app.state.sweeper.sweep_now(32).await.unwrap();
    assert_eq!(app.count(&format!("SELECT count(*) FROM notification_outbox WHERE delivery_id LIKE 'booking-{id}-v%-reminder' AND status = 'PENDING'")).await, 0);
    deliver(&app, &smtp).await;
    let reminders_sent = sink
        .received()
        .iter()
        .filter(|m| parse_mail(&m.data)["subject"].as_str().unwrap().starts_with("[곧 시작]"))
        .count();
    assert_eq!(reminders_sent, 1, "the v2 reminder was withdrawn by the cancel");
    // Booked with less than the reminder time left: its reminder at once too.
    let soon = kim
        .book(
            &local.format("%Y-%m-%d").to_string(),
            "막 잡은 회의",
            &local.format("%H:%M").to_string(),
            &end.format("%H:%M").to_string(),
            &["C"],
        )
        .await;
    assert_eq!(soon.status, StatusCode::SEE_OTHER, "{}", soon.html);
    let fresh: i64 =
        soon.location.unwrap().split("booked=").nth(1).unwrap().split(['&', '#']).next().unwrap().parse().unwrap();
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) FROM notification_outbox WHERE delivery_id = 'booking-{fresh}-v1-reminder' AND status = 'PENDING'"
        ))
        .await,
        1,
        "the booking enqueued its reminder"
    );
}

#[tokio::test]
async fn a_refusing_smtp_server_is_retried_then_exhausted_and_reported() {
    let (sink, smtp) = Sink::start().await;
    *sink.refuse.lock().unwrap() = Some("451 4.3.0 try again later".into());
    let app = TestApp::spawn_with(|c| c.smtp_url = Some(smtp.clone())).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, kim) = person(&app, &admin, "kim", "kim@example.com").await;
    kim.book(&crate::web::tomorrow(&app), "거절될 메일", "09:00", "10:00", &["A"]).await;
    for attempt in 1..=5 {
        let s = deliver(&app, &smtp).await;
        assert!(s.claimed >= 1, "attempt {attempt}: {s:?}");
        app.clock.advance(Duration::seconds(11));
    }
    let status =
        app.count("SELECT count(*) FROM notification_outbox WHERE channel = 'mail' AND status = 'EXHAUSTED'").await;
    assert_eq!(status, 1);
    assert_eq!(
        app.count("SELECT count(*) FROM notification_attempt WHERE channel = 'mail' AND outcome = 'RETRYABLE'").await,
        5,
        "five attempts, the last one exhausting it"
    );
    let (ok, report) = app.consistency().await;
    assert!(!ok);
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["name"] == "outbox_exhausted").unwrap().clone();
    assert_eq!(check["count"], 1);
    // A server that is down is retried the same way.
    let down = "smtp://127.0.0.1:1";
    let before = app.count("SELECT count(*) FROM notification_attempt").await;
    kim.book(&crate::web::tomorrow(&app), "서버가 꺼짐", "11:00", "12:00", &["A"]).await;
    let s = deliver(&app, down).await;
    assert_eq!((s.retried, s.exhausted), (1, 0), "{s:?}");
    assert!(app.count("SELECT count(*) FROM notification_attempt").await > before);
    assert!(sink.received().is_empty());
}
