//! Mail and feeds at the office's scale (SPEC §18): refusals by a real SMTP
//! server (`smtp_sink`), the admin's view of a booking's deliveries, feeds
//! that answer 304 while the client's copy holds (read back by Python's
//! `icalendar`), and organizer and rooms in every event.

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::calendar::{deliver, parse_ics, parse_mail, person};
use crate::helpers::*;
use crate::smtp_sink::Sink;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

fn booked_id(res: &crate::web::Page) -> i64 {
    res.location.as_ref().unwrap().split("booked=").nth(1).unwrap().split(['&', '#']).next().unwrap().parse().unwrap()
}

async fn outbox_of(app: &TestApp, id: i64) -> Vec<Value> {
    let (status, body) = app.get_json(&format!("/api/admin/outbox?bookingId={id}"), ADMIN).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["deliveries"].as_array().unwrap().clone()
}

fn mail_of(deliveries: &[Value]) -> Value {
    deliveries.iter().find(|d| d["channel"] == "mail").cloned().unwrap_or_else(|| panic!("{deliveries:#?}"))
}

#[tokio::test]
async fn a_permanent_refusal_ends_at_once_and_a_temporary_one_is_retried() {
    let (sink, smtp) = Sink::start().await;
    let permanent = "550 5.1.1 <gone@example.com>: Recipient address rejected: User unknown";
    let temporary = "451 4.7.1 <busy@example.com>: Greylisted, try again later";
    sink.refuse_recipient("gone@example.com", permanent, None);
    sink.refuse_recipient("busy@example.com", temporary, Some(2));
    let app = TestApp::spawn_with(|c| c.smtp_url = Some(smtp.clone())).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, gone) = person(&app, &admin, "gone", "gone@example.com").await;
    let (_, busy) = person(&app, &admin, "busy", "busy@example.com").await;
    let date = crate::web::tomorrow(&app);
    let gone_id = booked_id(&gone.book(&date, "없는 주소", "09:00", "10:00", &["A"]).await);
    let busy_id = booked_id(&busy.book(&date, "바쁜 서버", "11:00", "12:00", &["B"]).await);

    let s = deliver(&app, &smtp).await;
    assert_eq!((s.claimed, s.exhausted, s.retried), (4, 1, 1), "two webhook notices, two mails: {s:?}");
    let gone_mail = mail_of(&outbox_of(&app, gone_id).await);
    assert_eq!(
        (gone_mail["status"].as_str(), gone_mail["attempts"].as_i64(), gone_mail["lastError"].as_str()),
        (Some("EXHAUSTED"), Some(1), Some(permanent)),
        "a 5xx is not retried, and the reply is kept as it was"
    );
    assert_eq!(gone_mail["recipient"], "gone@example.com");
    assert_eq!(gone_mail["deliveryId"], format!("booking-{gone_id}-v1-changed"));
    let busy_mail = mail_of(&outbox_of(&app, busy_id).await);
    assert_eq!(
        (busy_mail["status"].as_str(), busy_mail["attempts"].as_i64(), busy_mail["lastError"].as_str()),
        (Some("PENDING"), Some(1), Some(temporary)),
    );
    // Not before its backoff; then refused once more; then accepted.
    assert_eq!(deliver(&app, &smtp).await.claimed, 0, "the backoff holds");
    app.clock.advance(Duration::seconds(3));
    assert_eq!(deliver(&app, &smtp).await.retried, 1);
    app.clock.advance(Duration::seconds(5));
    assert_eq!(deliver(&app, &smtp).await.delivered, 1);
    let busy_mail = mail_of(&outbox_of(&app, busy_id).await);
    assert_eq!((busy_mail["status"].as_str(), busy_mail["attempts"].as_i64()), (Some("DELIVERED"), Some(3)));
    let mails = sink.received();
    assert_eq!(mails.len(), 1, "only the temporary refusal's mail got through, once");
    assert_eq!(mails[0].to, ["<busy@example.com>"]);
    // Nothing more goes to the address that does not exist.
    app.clock.advance(Duration::minutes(5));
    assert_eq!(deliver(&app, &smtp).await.claimed, 0);
    assert_eq!(
        app.count(&format!("SELECT count(*) FROM notification_attempt WHERE delivery_id = 'booking-{gone_id}-v1-changed' AND channel = 'mail'")).await,
        1
    );
}

#[tokio::test]
async fn the_outbox_of_a_booking_is_for_admins_only() {
    let app = TestApp::spawn().await;
    let (status, b) =
        post(&app, "/api/bookings", TENANT_ONE, "o", "k1", booking("t", &["C"], &at(2, 3, 0), &at(2, 4, 0))).await;
    assert_eq!(status, 201, "{b}");
    let id = b["id"].as_i64().unwrap();
    let deliveries = outbox_of(&app, id).await;
    assert_eq!(deliveries.len(), 1, "{deliveries:#?}");
    assert_eq!(
        deliveries[0],
        json!({"deliveryId": format!("booking-{id}-v1-changed"), "channel": "webhook", "recipient": null,
               "status": "PENDING", "attempts": 0, "lastError": null})
    );
    let (status, body) = app.get_json(&format!("/api/admin/outbox?bookingId={id}"), TENANT_ONE).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")), "{body}");
    let res = app.http.get(app.url(&format!("/api/admin/outbox?bookingId={id}"))).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    for bad in ["", "?bookingId=x", "?bookingId="] {
        let (status, body) = app.get_json(&format!("/api/admin/outbox{bad}"), ADMIN).await;
        assert_eq!((status, body["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("bookingId")), "{bad}");
    }
    let (status, body) = app.get_json("/api/admin/outbox?bookingId=999999", ADMIN).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")));
}

/// A GET with optional validators: status, ETag, Last-Modified, body.
async fn get(
    app: &TestApp,
    path: &str,
    etag: Option<&str>,
    since: Option<&str>,
) -> (StatusCode, String, String, String) {
    let mut req = app.http.get(app.url(path));
    if let Some(e) = etag {
        req = req.header("If-None-Match", e);
    }
    if let Some(s) = since {
        req = req.header("If-Modified-Since", s);
    }
    let res = req.send().await.unwrap();
    let header = |n: &str| res.headers().get(n).map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    let (etag, modified) = (header("etag"), header("last-modified"));
    (res.status(), etag, modified, res.text().await.unwrap())
}

#[tokio::test]
async fn feeds_answer_304_while_the_copy_holds_from_one_statement() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim, kim_browser) = person(&app, &admin, "kim", "kim@example.com").await;
    let date = crate::web::tomorrow(&app);
    let id = booked_id(&kim_browser.book(&date, "주간 회의", "10:00", "11:00", &["A"]).await);
    let token = yeyak::calendar::token::token(&app.state.secret, kim, 1);
    for path in [format!("/ical/rooms/A.ics?token={token}"), format!("/ical/me.ics?token={token}")] {
        let (status, etag, modified, body) = get(&app, &path, None, None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(etag.starts_with('"') && etag.ends_with('"') && !etag.starts_with("W/"), "strong: {etag}");
        assert!(!modified.is_empty());
        assert_eq!(parse_ics(&body).len(), 1);
        // Still the same: 304, no body, one statement (token, room and counters).
        let before = app.state.db_stats.statements();
        let (status, again, _, body) = get(&app, &path, Some(&etag), None).await;
        assert_eq!((status, again.as_str(), body.as_str()), (StatusCode::NOT_MODIFIED, etag.as_str(), ""));
        assert_eq!(app.state.db_stats.statements() - before, 1, "{path}: one statement decides a 304");
        let (status, _, _, _) = get(&app, &path, Some(&format!("\"other\", {etag}")), None).await;
        assert_eq!(status, StatusCode::NOT_MODIFIED, "any of a list");
        let (status, _, _, body) = get(&app, &path, None, Some(&modified)).await;
        assert_eq!((status, body.as_str()), (StatusCode::NOT_MODIFIED, ""), "If-Modified-Since");
        let (status, _, _, _) = get(&app, &path, Some("\"stale\""), Some(&modified)).await;
        assert_eq!(status, StatusCode::OK, "If-None-Match decides over If-Modified-Since");
    }
    let room = format!("/ical/rooms/A.ics?token={token}");
    let (_, etag, modified, _) = get(&app, &room, None, None).await;
    let other_room = format!("/ical/rooms/B.ics?token={token}");
    let (_, b_etag, _, _) = get(&app, &other_room, None, None).await;

    // A move changes the feed: a new ETag, a later Last-Modified, the new time.
    app.clock.advance(Duration::seconds(2));
    let res = app.move_booking(ADMIN, "ops", id, None, &json!({"startsAt": at(1, 5, 0), "endsAt": at(1, 6, 0)})).await;
    assert_eq!(res.status(), StatusCode::OK);
    let (status, moved, later, body) = get(&app, &room, Some(&etag), Some(&modified)).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(moved, etag);
    assert!(httpdate(&later) > httpdate(&modified), "{later} after {modified}");
    let events = parse_ics(&body);
    assert_eq!(events[0]["sequence"], 2);
    assert!(events[0]["start"].as_str().unwrap().starts_with(&at(1, 5, 0)[..13]), "{events:#?}");
    let (status, _, _, _) = get(&app, &other_room, Some(&b_etag), None).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED, "another room's feed is untouched");
    // A renamed room changes every feed that shows it.
    app.db().await.execute("UPDATE room SET name = '대회의실' WHERE code = 'A'", &[]).await.unwrap();
    let (status, renamed, _, body) = get(&app, &room, Some(&moved), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(renamed, moved);
    assert_eq!(parse_ics(&body)[0]["location"], "대회의실");
    // The download too.
    let file = format!("/bookings/{id}.ics");
    let res = kim_browser.client.get(app.url(&file)).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let file_etag = res.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(parse_ics(&res.text().await.unwrap()).len(), 1);
    let res = kim_browser.client.get(app.url(&file)).header("If-None-Match", &file_etag).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::NOT_MODIFIED);
    assert!(res.text().await.unwrap().is_empty());
    app.cancel_booking(ADMIN, "ops", id, None, &json!({})).await;
    let res = kim_browser.client.get(app.url(&file)).header("If-None-Match", &file_etag).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(parse_ics(&res.text().await.unwrap())[0]["status"], "CANCELLED");
    // A wrong token is still 404, validators or not.
    let (status, _, _, _) = get(&app, "/ical/rooms/A.ics?token=yc_1_00", Some(&renamed), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

fn httpdate(s: &str) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc2822(s).unwrap()
}

#[tokio::test]
async fn every_event_names_its_organizer_and_rooms_escaped() {
    let (sink, smtp) = Sink::start().await;
    let app = TestApp::spawn_with(|c| {
        c.smtp_url = Some(smtp.clone());
        c.room_mail_domain = Some("rooms.example.com".into());
    })
    .await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim, kim_browser) = person(&app, &admin, "kim", "kim@example.com").await;
    let (lee, lee_browser) = person(&app, &admin, "lee", "lee@example.com").await;
    let db = app.db().await;
    db.execute("UPDATE staff_user SET display_name = '김, 민지; 팀장: 기획' WHERE username = 'kim'", &[])
        .await
        .unwrap();
    db.execute("UPDATE staff_user SET email = NULL WHERE username = 'lee'", &[]).await.unwrap();
    db.execute("UPDATE room SET name = '회의실 A, 창가; 10층' WHERE code = 'A'", &[]).await.unwrap();
    let date = crate::web::tomorrow(&app);
    let kim_id = booked_id(&kim_browser.book(&date, "연결된 방", "10:00", "11:00", &["A", "B"]).await);
    let lee_id = booked_id(&lee_browser.book(&date, "주소 없는 사람", "12:00", "13:00", &["A"]).await);
    let (status, _) =
        post(&app, "/api/bookings", TENANT_ONE, "o", "k1", booking("연동", &["A"], &at(1, 8, 0), &at(1, 9, 0))).await;
    assert_eq!(status, 201);

    let token = yeyak::calendar::token::token(&app.state.secret, kim, 1);
    let body =
        app.http.get(app.url(&format!("/ical/rooms/A.ics?token={token}"))).send().await.unwrap().text().await.unwrap();
    let events = parse_ics(&body);
    let by_uid = |id: i64| events.iter().find(|e| e["uid"] == format!("booking-{id}@yeyak.local")).unwrap().clone();
    let kim_event = by_uid(kim_id);
    assert_eq!(kim_event["organizer"], json!({"address": "mailto:kim@example.com", "cn": "김, 민지; 팀장: 기획"}));
    assert_eq!(
        kim_event["attendees"],
        json!([
            {"address": "mailto:room-a@rooms.example.com", "cn": "회의실 A, 창가; 10층", "cutype": "ROOM"},
            {"address": "mailto:room-b@rooms.example.com", "cn": "회의실 B", "cutype": "ROOM"},
        ])
    );
    // No email: the person's principal URL, under the address yeyak serves at.
    let lee_event = by_uid(lee_id);
    assert_eq!(lee_event["organizer"]["address"], format!("{}/dav/principals/lee/", app.address));
    assert_eq!(lee_event["organizer"]["cn"], "lee");
    // An integration's booking names its rooms but no person.
    let api = events.iter().find(|e| e["summary"] == "연동").unwrap();
    assert_eq!(api["organizer"], Value::Null);
    assert_eq!(api["attendees"].as_array().unwrap().len(), 1);
    let _ = lee;
    // The download and the invitation say the same.
    let file = kim_browser.get(&format!("/bookings/{kim_id}.ics")).await;
    let one = &parse_ics(&file.html)[0];
    assert_eq!((&one["organizer"], &one["attendees"]), (&kim_event["organizer"], &kim_event["attendees"]));
    deliver(&app, &smtp).await;
    let mail = sink
        .received()
        .into_iter()
        .map(|m| parse_mail(&m.data))
        .find(|p| p["to"].as_str().unwrap().contains("kim@"))
        .unwrap();
    let cal = mail["parts"].as_array().unwrap().iter().find(|x| x["type"] == "text/calendar").unwrap();
    let invited = &parse_ics(cal["text"].as_str().unwrap())[0];
    assert_eq!((&invited["organizer"], &invited["attendees"]), (&kim_event["organizer"], &kim_event["attendees"]));
}
