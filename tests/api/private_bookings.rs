//! Private bookings (SPEC §26): one rule on every reader. A private
//! booking's title and organizer reach its organizer, their delegates and
//! admins; every other reader — a colleague's pages, the door display, a
//! room feed, a room's CalDAV collection, another owner's API key — reads
//! "비공개 예약" / "Private booking", and its time stays busy everywhere.

use chrono::{Duration, DurationRound};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use yeyak::clock::Clock;

use crate::caldav::Dav;
use crate::helpers::*;
use crate::web::{tomorrow, Browser, ADMIN_PASSWORD, ADMIN_USER};

const SECRET: &str = "인사 면담 SECRET";
const API_SECRET: &str = "API SECRET";

fn hides(what: &str, text: &str) {
    assert!(!text.contains("SECRET") && !text.contains("김민지"), "{what} shows the private booking: {text}");
}

#[tokio::test]
async fn every_reader_hides_a_private_booking_from_everyone_but_its_people() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let lee_dav = Dav::person(&app, "lee").await;
    let lee = Browser::new(&app);
    lee.sign_in("lee", "correct-horse-1").await;
    let day = tomorrow(&app);

    // kim's private booking from the form; an API owner's from JSON, today.
    let page = kim.get(&format!("/rooms?date={day}")).await;
    let booked = kim
        .post(
            "/bookings",
            &[
                ("title", SECRET),
                ("date", &day),
                ("start", "10:00"),
                ("end", "11:00"),
                ("rooms", "A"),
                ("private", "1"),
                ("csrf_token", &page.field("csrf_token")),
                ("idempotency_key", &page.field("idempotency_key")),
            ],
        )
        .await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    let id = crate::web::booked_id(&booked);
    let soon = app.clock.now().duration_trunc(Duration::hours(1)).unwrap() + Duration::hours(1);
    let mut body = booking(API_SECRET, &["A"], &soon.to_rfc3339(), &(soon + Duration::minutes(30)).to_rfc3339());
    body["private"] = json!(true);
    let (status, api_booking) = crate::helpers::body(app.create_booking(TENANT_ONE, "alice", "p1", &body).await).await;
    assert_eq!((status, api_booking["private"].as_bool()), (StatusCode::CREATED, Some(true)), "{api_booking}");
    let api_id = api_booking["id"].as_i64().unwrap();

    // A colleague's pages: the day, the week, the booking, its download.
    for path in [
        format!("/rooms?date={day}"),
        format!("/rooms/week?date={day}"),
        format!("/bookings/{id}"),
        format!("/bookings/{id}.ics"),
    ] {
        let page = lee.get(&path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        hides(&path, &page.html);
        assert!(page.html.contains("비공개 예약"), "{path} labels it: {}", page.html);
    }
    // The room feed a colleague subscribes to.
    let token = lee.get("/account").await.feed_token();
    let feed =
        app.http.get(app.url(&format!("/ical/rooms/A.ics?token={token}"))).send().await.unwrap().text().await.unwrap();
    hides("room feed", &feed);
    assert!(feed.contains("SUMMARY:비공개 예약"), "{feed}");
    // The room's CalDAV collection.
    let report = r#"<?xml version="1.0"?><C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><C:calendar-data/></D:prop><C:filter><C:comp-filter name="VCALENDAR"/></C:filter></C:calendar-query>"#;
    let dav = lee_dav.report("/dav/calendars/rooms/A/", report).await;
    assert_eq!(dav.status.as_u16(), 207, "{}", dav.body);
    hides("room collection", &dav.body);
    assert!(dav.body.contains("비공개 예약"), "{}", dav.body);
    // The door display, today.
    let door = crate::display::display_url(&admin, "A").await;
    let path = door.split_once("/display/").map(|(_, p)| format!("/display/{p}")).unwrap();
    let kiosk = app.http.get(app.url(&path)).send().await.unwrap().text().await.unwrap();
    hides("door display", &kiosk);
    assert!(kiosk.contains("비공개 예약"), "{kiosk}");
    // Another owner's key, and a key naming no owner; in English when asked.
    let (_, list) = app.get_json(&format!("/api/bookings?date={day}"), TENANT_TWO).await;
    hides("JSON list", &list.to_string());
    let res = app
        .request(Method::GET, &format!("/api/bookings/{api_id}"), TENANT_ONE, Some("bob"))
        .header("Accept-Language", "en")
        .send()
        .await
        .unwrap();
    let (_, one): (StatusCode, Value) = crate::helpers::body(res).await;
    assert_eq!((one["title"].as_str(), one["organizer"].as_str()), (Some("Private booking"), Some("")), "{one}");
    // Busy all the same: availability and the free-room search, over the
    // booking's own hour in Seoul. (`day` is Seoul's tomorrow, which from
    // 15:00 UTC is two UTC dates ahead: the search names its offset.)
    let (_, free) = app
        .get_json(&format!("/api/rooms/free?from={day}T10:00:00%2B09:00&to={day}T11:00:00%2B09:00"), TENANT_TWO)
        .await;
    let free: Vec<&str> = free["rooms"].as_array().unwrap().iter().map(|r| r["code"].as_str().unwrap()).collect();
    assert!(!free.contains(&"A") && free.contains(&"B"), "{free:?}");
    let (_, availability) = app.get_json(&format!("/api/rooms/A/availability?date={day}"), TENANT_TWO).await;
    hides("availability", &availability.to_string());
    let retaken = lee.book(&day, "겹치기", "10:30", "11:30", &["A"]).await;
    assert_eq!(retaken.status, StatusCode::CONFLICT, "its time stays busy");

    // Its people: the organizer, an admin, the owner's own key, a delegate.
    assert!(kim.get(&format!("/rooms?date={day}")).await.html.contains(SECRET));
    assert!(admin.get(&format!("/bookings/{id}")).await.html.contains(SECRET));
    let (_, own) = crate::helpers::body(
        app.request(Method::GET, &format!("/api/bookings/{api_id}"), TENANT_ONE, Some("alice")).send().await.unwrap(),
    )
    .await;
    assert_eq!(own["title"], API_SECRET);
    let (_, as_admin) = app.get_json(&format!("/api/bookings?date={day}"), ADMIN).await;
    assert!(as_admin.to_string().contains(SECRET));
    let account = kim.get("/account").await;
    kim.post("/account/delegates", &[("username", "lee"), ("csrf_token", &account.field("csrf_token"))]).await;
    let lee_again = Browser::new(&app);
    lee_again.sign_in("lee", "correct-horse-1").await;
    assert!(lee_again.get(&format!("/bookings/{id}")).await.html.contains(SECRET), "a delegate sees it");
}

#[tokio::test]
async fn a_calendar_app_marks_an_event_private_with_class() {
    let app = TestApp::spawn().await;
    let kim = Dav::person(&app, "kim").await;
    let ics = crate::caldav::invite("class-1", "Salary talk SECRET", &["A"], 1, 1, 2)
        .replace("SUMMARY:", "CLASS:CONFIDENTIAL\r\nSUMMARY:");
    assert_eq!(kim.put("class.ics", &ics, &[]).await.status, StatusCode::CREATED);
    assert_eq!(app.count("SELECT count(*) FROM reservation WHERE private").await, 1);
    let (_, list) = app
        .get_json(
            &format!("/api/bookings?from={}&to={}", at(0, 0, 0).replace('+', "%2B"), at(3, 0, 0).replace('+', "%2B")),
            TENANT_TWO,
        )
        .await;
    assert!(!list.to_string().contains("SECRET"), "{list}");
}

#[tokio::test]
async fn a_booking_becomes_private_and_public_again_by_its_organizer() {
    let app = TestApp::spawn().await;
    let soon = app.clock.now().duration_trunc(Duration::hours(1)).unwrap() + Duration::hours(2);
    let (starts, ends) = (soon.to_rfc3339(), (soon + Duration::minutes(30)).to_rfc3339());
    let body = booking(API_SECRET, &["A"], &starts, &ends);
    let (status, created) = crate::helpers::body(app.create_booking(TENANT_ONE, "alice", "m1", &body).await).await;
    assert_eq!((status, created["private"].as_bool()), (StatusCode::CREATED, Some(false)), "{created}");
    let id = created["id"].as_i64().unwrap();
    let read_by_bob = || async {
        let res =
            app.request(Method::GET, &format!("/api/bookings/{id}"), TENANT_ONE, Some("bob")).send().await.unwrap();
        crate::helpers::body(res).await.1
    };
    assert_eq!(read_by_bob().await["title"], API_SECRET);

    let private = json!({"startsAt": starts, "endsAt": ends, "private": true});
    let (status, moved) = crate::helpers::body(app.move_booking(TENANT_ONE, "alice", id, None, &private).await).await;
    assert_eq!((status, moved["private"].as_bool()), (StatusCode::OK, Some(true)), "{moved}");
    hides("another owner's read", &read_by_bob().await.to_string());
    // Another owner may not change it back; its organizer may.
    let public = json!({"startsAt": starts, "endsAt": ends, "private": false});
    let (status, _) = crate::helpers::body(app.move_booking(TENANT_ONE, "bob", id, None, &public).await).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    hides("after a refused change", &read_by_bob().await.to_string());
    let (status, _) = crate::helpers::body(app.move_booking(TENANT_ONE, "alice", id, None, &public).await).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read_by_bob().await["title"], API_SECRET);
    let (_, history) = app.get_json(&format!("/api/bookings/{id}/history"), ADMIN).await;
    let changes: Vec<&Value> = history["events"].as_array().unwrap().iter().map(|e| &e["changes"]["private"]).collect();
    assert_eq!(changes[1]["after"], true, "{history}");
    assert_eq!(changes[2]["after"], false, "{history}");
}
