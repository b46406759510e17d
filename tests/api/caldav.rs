//! The CalDAV door through raw HTTP (SPEC §17): what a client library
//! hides — discovery, `OPTIONS`, the 401 challenge and the throttle, the
//! RFC's preconditions, yeyak's refusals inside `DAV:error`, 403/409/412/413,
//! ETags and sync tokens. `caldav_client.rs` drives the same through a real
//! client.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::app_passwords::{make_app_password, person};
use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

/// A signed-in calendar app of one person.
pub struct Dav<'a> {
    pub app: &'a TestApp,
    pub user: String,
    pub password: String,
}

pub struct Answer {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl<'a> Dav<'a> {
    /// `username` with a fresh app password.
    pub async fn person(app: &'a TestApp, username: &str) -> Dav<'a> {
        let b = person(app, username).await;
        let (_, secret) = make_app_password(&b, "캘린더 앱").await;
        Dav { app, user: username.to_owned(), password: secret }
    }

    pub async fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut req = self
            .app
            .http
            .request(Method::from_bytes(method.as_bytes()).unwrap(), self.app.url(path))
            .basic_auth(&self.user, Some(&self.password))
            .body(body.to_owned());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let res = req.send().await.unwrap();
        Answer { status: res.status(), headers: res.headers().clone(), body: res.text().await.unwrap() }
    }

    pub async fn put(&self, name: &str, ics: &str, headers: &[(&str, &str)]) -> Answer {
        let path = format!("/dav/calendars/{}/bookings/{name}", self.user);
        let mut all = vec![("Content-Type", "text/calendar; charset=utf-8")];
        all.extend_from_slice(headers);
        self.send("PUT", &path, &all, ics).await
    }

    pub async fn report(&self, path: &str, body: &str) -> Answer {
        self.send("REPORT", path, &[("Depth", "1"), ("Content-Type", "application/xml")], body).await
    }
}

/// An invitation of `rooms` on test day `day` from `start` to `end` (UTC hours).
pub fn invite(uid: &str, title: &str, rooms: &[&str], day: i64, start: u32, end: u32) -> String {
    let at = |h: u32| at(day, h, 0).replace(['-', ':'], "").replace("+0000", "Z")[..15].to_owned() + "Z";
    let attendees: String = rooms
        .iter()
        .map(|r| format!("ATTENDEE;CUTYPE=ROOM:mailto:room-{}@yeyak.local\r\n", r.to_lowercase()))
        .collect();
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//raw//EN\r\nBEGIN:VEVENT\r\nUID:{uid}\r\n\
         DTSTAMP:20300101T000000Z\r\nDTSTART:{}\r\nDTEND:{}\r\nSUMMARY:{title}\r\n\
         ORGANIZER:mailto:kim@example.com\r\n{attendees}END:VEVENT\r\nEND:VCALENDAR\r\n",
        at(start),
        at(end)
    )
}

async fn bookings(app: &TestApp) -> Vec<Value> {
    let q = |t: String| t.replace('+', "%2B");
    let (status, body) =
        app.get_json(&format!("/api/bookings?from={}&to={}", q(at(-1, 0, 0)), q(at(30, 0, 0))), ADMIN).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["bookings"].as_array().unwrap().clone()
}

#[tokio::test]
async fn discovery_options_and_the_basic_challenge() {
    let app = TestApp::spawn().await;
    let no_redirect = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let res = no_redirect.get(app.url("/.well-known/caldav")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::MOVED_PERMANENTLY);
    assert_eq!(res.headers()["location"], "/dav/");
    let res = app.http.request(Method::OPTIONS, app.url("/dav/calendars/kim/bookings/")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["dav"], "1, 3, calendar-access, calendar-auto-schedule");
    assert!(res.headers()["allow"].to_str().unwrap().contains("REPORT"));

    let dav = Dav::person(&app, "kim").await;
    let propfind = Method::from_bytes(b"PROPFIND").unwrap();
    let bare = app.http.request(propfind.clone(), app.url("/dav/")).send().await.unwrap();
    assert_eq!(bare.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(bare.headers()["www-authenticate"], "Basic realm=\"yeyak\"");
    assert_eq!(app.count("SELECT count(*) FROM address_login_throttle").await, 0, "no credentials is no failure");
    let wrong =
        app.http.request(propfind.clone(), app.url("/dav/")).basic_auth("kim", Some("yp_wrong")).send().await.unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(app.count("SELECT coalesce(sum(failures), 0)::int8 FROM address_login_throttle").await, 1);
    let local = app
        .http
        .request(propfind.clone(), app.url("/dav/"))
        .basic_auth("kim", Some("correct-horse-1"))
        .header("Depth", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(local.status(), StatusCode::MULTI_STATUS, "a local account may use its own password");

    let body =
        r#"<d:propfind xmlns:d="DAV:"><d:prop><d:current-user-principal/><d:unknown-thing/></d:prop></d:propfind>"#;
    let root = dav.send("PROPFIND", "/dav/", &[("Depth", "0")], body).await;
    assert_eq!(root.status, StatusCode::MULTI_STATUS);
    assert!(root.body.contains("<D:current-user-principal><D:href>/dav/principals/kim/</D:href>"), "{}", root.body);
    assert!(root.body.contains("404 Not Found") && root.body.contains("unknown-thing"), "{}", root.body);
    assert_eq!(root.headers["dav"], "1, 3, calendar-access, calendar-auto-schedule");
}

/// SPEC §16: `YEYAK_PASSWORD_LOGIN=admin-only` narrows local passwords in
/// calendar apps as on `/login`: only the break-glass admin's still opens
/// the CalDAV door.
#[tokio::test]
async fn admin_only_password_sign_in_holds_in_the_calendar_door_too() {
    let app = TestApp::spawn_with(|c| c.password_login = "admin-only".parse().unwrap()).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    crate::accounts::add_person(&admin, "kim", "kim@example.com").await;
    let propfind = Method::from_bytes(b"PROPFIND").unwrap();
    let with = |user: &str, password: &str| {
        app.http
            .request(propfind.clone(), app.url("/dav/"))
            .basic_auth(user, Some(password))
            .header("Depth", "0")
            .send()
    };
    let kim = with("kim", "correct-horse-1").await.unwrap();
    assert_eq!(kim.status(), StatusCode::UNAUTHORIZED, "a local staff password is not a way in");
    let break_glass = with(ADMIN_USER, ADMIN_PASSWORD).await.unwrap();
    assert_eq!(break_glass.status(), StatusCode::MULTI_STATUS, "the break-glass admin still signs in");
}

#[tokio::test]
async fn principals_of_people_and_rooms_and_their_search() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let ask = r#"<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop>
        <d:displayname/><c:calendar-home-set/><c:calendar-user-address-set/><c:schedule-inbox-URL/>
        <c:schedule-outbox-URL/><c:calendar-user-type/><d:current-user-principal/></d:prop></d:propfind>"#;
    let me = dav.send("PROPFIND", "/dav/principals/kim/", &[("Depth", "0")], ask).await;
    assert_eq!(me.status, StatusCode::MULTI_STATUS, "{}", me.body);
    for want in [
        "<C:calendar-home-set><D:href>/dav/calendars/kim/</D:href>",
        "<C:calendar-user-address-set><D:href>mailto:kim@example.com</D:href><D:href>/dav/principals/kim/</D:href>",
        "<C:schedule-outbox-URL><D:href>/dav/calendars/kim/outbox/</D:href>",
        "<C:calendar-user-type>INDIVIDUAL</C:calendar-user-type>",
    ] {
        assert!(me.body.contains(want), "{want}: {}", me.body);
    }
    let room = dav.send("PROPFIND", "/dav/principals/rooms/A/", &[("Depth", "0")], ask).await;
    assert!(room.body.contains("<C:calendar-user-type>ROOM</C:calendar-user-type>"), "{}", room.body);
    assert!(room.body.contains("<D:href>mailto:room-a@yeyak.local</D:href>"), "{}", room.body);
    let (_, rooms) = app.get_json("/api/rooms", TENANT_ONE).await;
    assert_eq!(rooms["rooms"][0]["calendarAddress"], "mailto:room-a@yeyak.local", "{rooms}");

    let search = r#"<d:principal-property-search xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
        <d:property-search><d:prop><c:calendar-user-address-set/></d:prop><d:match>ROOM-B@</d:match></d:property-search>
        <d:prop><d:displayname/><c:calendar-user-type/></d:prop></d:principal-property-search>"#;
    let found = dav.report("/dav/principals/", search).await;
    assert_eq!(found.status, StatusCode::MULTI_STATUS, "{}", found.body);
    assert_eq!(found.body.matches("<D:response>").count(), 1, "{}", found.body);
    assert!(found.body.contains("/dav/principals/rooms/B/"));
    let by_name = search.replace("<c:calendar-user-address-set/>", "<d:displayname/>").replace("ROOM-B@", "KIM");
    let people = dav.report("/dav/principals/", &by_name).await;
    assert!(people.body.contains("/dav/principals/kim/"), "{}", people.body);
}

#[tokio::test]
async fn inviting_a_room_books_it_through_the_booking_command() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let res = dav.put("weekly-1.ics", &invite("weekly-1@client", "주간 회의", &["A", "B"], 1, 1, 2), &[]).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    assert!(res.headers.get("etag").is_none(), "the stored event differs from what was sent");
    let listed = bookings(&app).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["rooms"], json!(["A", "B"]));
    assert_eq!(listed[0]["organizer"], "kim");
    assert_eq!(listed[0]["title"], "주간 회의");
    let history = app.count("SELECT count(*) FROM booking_event WHERE action = 'created'").await;
    assert_eq!(history, 1, "history written by the same command");
    assert_eq!(app.count("SELECT count(*) FROM notification_outbox WHERE kind = 'booking.created'").await, 1);

    let got = dav.send("GET", "/dav/calendars/kim/bookings/weekly-1.ics", &[], "").await;
    assert_eq!(got.status, StatusCode::OK);
    let etag = got.headers["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"') && !etag.starts_with("W/"), "strong: {etag}");
    let unfolded = got.body.replace("\r\n ", "");
    assert!(unfolded.contains("UID:weekly-1@client"), "{unfolded}");
    let room_a = unfolded.lines().find(|l| l.ends_with(":mailto:room-a@yeyak.local")).expect("room A attends");
    assert!(
        room_a.starts_with("ATTENDEE;") && room_a.contains(";CUTYPE=ROOM") && room_a.contains(";PARTSTAT=ACCEPTED")
    );
    assert!(unfolded.contains("ORGANIZER;CN=kim:mailto:kim@example.com"), "{unfolded}");
    let unchanged = dav.send("GET", "/dav/calendars/kim/bookings/weekly-1.ics", &[("If-None-Match", &etag)], "").await;
    assert_eq!(unchanged.status, StatusCode::NOT_MODIFIED);
    assert!(unchanged.body.is_empty());
    // Last-Modified too (SPEC §18): a copy of that instant still holds, an
    // older one does not; If-None-Match decides when both are sent.
    let stamp = got.headers["last-modified"].to_str().unwrap().to_owned();
    let member = "/dav/calendars/kim/bookings/weekly-1.ics";
    let since = dav.send("GET", member, &[("If-Modified-Since", &stamp)], "").await;
    assert_eq!((since.status, since.body.as_str()), (StatusCode::NOT_MODIFIED, ""));
    let old = dav.send("GET", member, &[("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")], "").await;
    assert_eq!(old.status, StatusCode::OK);
    let other = dav.send("GET", member, &[("If-None-Match", "\"b1-99\""), ("If-Modified-Since", &stamp)], "").await;
    assert_eq!(other.status, StatusCode::OK, "If-None-Match decides");

    // The same PUT again books once.
    let again = dav.put("weekly-1.ics", &invite("weekly-1@client", "주간 회의", &["A", "B"], 1, 1, 2), &[]).await;
    assert_eq!(again.status, StatusCode::NO_CONTENT, "{}", again.body);
    assert_eq!(bookings(&app).await.len(), 1);

    // Moved and rehoused like PATCH; a stale If-Match is 412 and changes nothing.
    let moved = invite("weekly-1@client", "주간 회의", &["B", "C"], 1, 3, 4);
    let stale = dav.put("weekly-1.ics", &moved, &[("If-Match", "\"b1-99\"")]).await;
    assert_eq!(stale.status, StatusCode::PRECONDITION_FAILED);
    let ok = dav.put("weekly-1.ics", &moved, &[("If-Match", &etag)]).await;
    assert_eq!(ok.status, StatusCode::NO_CONTENT, "{}", ok.body);
    let listed = bookings(&app).await;
    assert_eq!(
        (listed[0]["rooms"].clone(), listed[0]["startsAt"].clone()),
        (json!(["B", "C"]), json!(at(1, 3, 0).replace("+00:00", "Z")))
    );
    let newer = dav.send("GET", "/dav/calendars/kim/bookings/weekly-1.ics", &[], "").await;
    assert_ne!(newer.headers["etag"].to_str().unwrap(), etag, "a new version, a new ETag");
    app.assert_consistent().await;

    // DELETE cancels.
    let gone = dav.send("DELETE", "/dav/calendars/kim/bookings/weekly-1.ics", &[], "").await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT);
    let (_, all) =
        app.get_json(&format!("/api/bookings?date={}&includeCancelled=true", &at(1, 0, 0)[..10]), ADMIN).await;
    assert_eq!(all["bookings"][0]["status"], "CANCELLED", "{all}");
    let missing = dav.send("GET", "/dav/calendars/kim/bookings/weekly-1.ics", &[], "").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    // Put again after the delete: a new booking, not the first one replayed.
    let rebooked = dav.put("weekly-1.ics", &moved, &[]).await;
    assert_eq!(rebooked.status, StatusCode::CREATED, "{}", rebooked.body);
    let live: Vec<Value> = bookings(&app).await.into_iter().filter(|b| b["status"] == "CONFIRMED").collect();
    assert_eq!(live.len(), 1, "{live:?}");
    assert_eq!(dav.send("GET", "/dav/calendars/kim/bookings/weekly-1.ics", &[], "").await.status, StatusCode::OK);
}

/// The unfolded line of the room attendee `room` in `ics`.
fn room_line(ics: &str, room: &str) -> String {
    let unfolded = ics.replace("\r\n ", "");
    let wanted = format!("mailto:room-{}@yeyak.local", room.to_lowercase());
    unfolded.lines().find(|l| l.to_lowercase().ends_with(&wanted)).unwrap_or_default().to_owned()
}

/// SPEC §23 (replacing §17's 409s): a room that cannot take an event
/// declines inside it — the event is stored and synced, nothing is booked.
#[tokio::test]
async fn a_room_that_cannot_take_an_event_declines_inside_it_and_books_nothing() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let (status, _) =
        post(&app, "/api/bookings", TENANT_ONE, "o", "k1", booking("x", &["A"], &at(1, 1, 0), &at(1, 2, 0))).await;
    assert_eq!(status, StatusCode::CREATED);
    let booked = || app.count("SELECT count(*) FROM reservation");
    let before = booked().await;
    for (name, ics, room, code) in [
        ("t.ics", invite("t", "겹침", &["A"], 1, 1, 2), "A", "ROOM_TIME_TAKEN"),
        ("ac.ics", invite("ac", "떨어진 방", &["A", "C"], 1, 5, 6), "C", "ROOM_COMBINATION_NOT_ALLOWED"),
        ("u.ics", invite("u", "없는 방", &["ZZ"], 1, 5, 6), "ZZ", "UNKNOWN_ROOM"),
        (
            "long.ics",
            invite("long", "너무 긺", &["B"], 1, 0, 2).replace(
                &format!("DTEND:{}", &at(1, 2, 0).replace(['-', ':'], "")[..15]),
                &format!("DTEND:{}", &at(9, 2, 0).replace(['-', ':'], "")[..15]),
            ),
            "B",
            "BOOKING_TOO_LONG",
        ),
    ] {
        let put = dav.put(name, &ics, &[]).await;
        assert_eq!(put.status, StatusCode::CREATED, "{name}: {}", put.body);
        assert!(put.headers.get("etag").is_none(), "{name}: the stored event differs from what was sent");
        let got = dav.send("GET", &format!("/dav/calendars/kim/bookings/{name}"), &[], "").await;
        assert_eq!(got.status, StatusCode::OK, "{name}");
        let line = room_line(&got.body, room);
        assert!(line.contains("PARTSTAT=DECLINED") && line.contains(&format!("X-YEYAK-CODE={code}")), "{name}: {line}");
        assert!(line.contains("SCHEDULE-STATUS=2.0"), "{name}: {line}");
    }
    assert_eq!(booked().await, before, "no declined event booked anything");
    // An event without a room, and a to-do: stored, booking nothing.
    let alone = dav.put("n.ics", &invite("n", "방 없음", &[], 1, 5, 6), &[]).await;
    assert_eq!(alone.status, StatusCode::CREATED, "{}", alone.body);
    assert!(alone.headers.get("etag").is_some(), "stored exactly as sent: {}", alone.body);
    let todo = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VTODO\r\nUID:todo-1\r\nSUMMARY:x\r\nEND:VTODO\r\nEND:VCALENDAR\r\n";
    let stored = dav.put("todo.ics", todo, &[]).await;
    assert_eq!(stored.status, StatusCode::CREATED, "{}", stored.body);
    assert_eq!(dav.send("GET", "/dav/calendars/kim/bookings/todo.ics", &[], "").await.body, todo);
    assert_eq!(booked().await, before);
    app.assert_consistent().await;
}

#[tokio::test]
async fn malformed_or_misplaced_calendar_data_is_refused_and_stores_nothing() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let before = fingerprint(&app, &["reservation", "reservation_room", "dav_event", "booking_event"]).await;
    let garbage = dav.put("g.ics", "BEGIN:VCALENDAR\r\nthis is not\r\n", &[]).await;
    assert_eq!(garbage.status, StatusCode::BAD_REQUEST);
    assert!(garbage.body.contains("<C:valid-calendar-data/>"), "{}", garbage.body);
    let journal =
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VJOURNAL\r\nUID:j\r\nEND:VJOURNAL\r\nEND:VCALENDAR\r\n";
    let refused = dav.put("journal.ics", journal, &[]).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(refused.body.contains("<C:supported-calendar-component/>"), "{}", refused.body);
    let mars = invite("m", "화성", &["B"], 1, 5, 6)
        .replace("DTSTART:", "DTSTART;TZID=Mars/Olympus:")
        .replace("Z\r\nDTEND", "\r\nDTEND");
    let zone = dav.put("m.ics", &mars, &[]).await;
    assert_eq!(zone.status, StatusCode::BAD_REQUEST, "{}", zone.body);
    let huge = format!("{}{}", invite("h", "큼", &["B"], 1, 5, 6), "X".repeat(300 * 1024));
    assert_eq!(dav.put("h.ics", &huge, &[]).await.status, StatusCode::PAYLOAD_TOO_LARGE);
    let room_write = dav
        .send(
            "PUT",
            "/dav/calendars/rooms/B/x.ics",
            &[("Content-Type", "text/calendar")],
            &invite("r", "r", &["B"], 1, 5, 6),
        )
        .await;
    assert_eq!(room_write.status, StatusCode::FORBIDDEN);
    assert!(room_write.body.contains("<D:need-privileges/>"), "{}", room_write.body);
    let others = dav.put("../../lee/bookings/x.ics", &invite("o", "남의 달력", &["B"], 1, 5, 6), &[]).await;
    assert_ne!(others.status, StatusCode::CREATED);
    let after = fingerprint(&app, &["reservation", "reservation_room", "dav_event", "booking_event"]).await;
    assert_eq!(before, after, "nothing malformed or misplaced stored anything");
    app.assert_consistent().await;
}

#[tokio::test]
async fn sync_tokens_report_changes_from_every_door_and_removals() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let sync = |token: &str| {
        format!(
            r#"<d:sync-collection xmlns:d="DAV:"><d:sync-token>{token}</d:sync-token><d:sync-level>1</d:sync-level>
               <d:prop><d:getetag/></d:prop></d:sync-collection>"#
        )
    };
    let token_of =
        |body: &str| body.split("<D:sync-token>").last().unwrap().split("</D:sync-token>").next().unwrap().to_owned();
    let first = dav.report("/dav/calendars/rooms/A/", &sync("")).await;
    assert_eq!(first.status, StatusCode::MULTI_STATUS, "{}", first.body);
    let t0 = token_of(&first.body);
    assert!(!first.body.contains("<D:response>"), "an empty room");

    let unchanged = dav.report("/dav/calendars/rooms/A/", &sync(&t0)).await;
    assert!(!unchanged.body.contains("<D:response>"));
    assert_eq!(token_of(&unchanged.body), t0, "nothing changed, the same token");

    // A booking through the JSON API appears within one sync.
    let (_, made) =
        post(&app, "/api/bookings", TENANT_ONE, "o", "k1", booking("api", &["A"], &at(1, 1, 0), &at(1, 2, 0))).await;
    let id = made["id"].as_i64().unwrap();
    let changed = dav.report("/dav/calendars/rooms/A/", &sync(&t0)).await;
    assert!(changed.body.contains(&format!("/dav/calendars/rooms/A/booking-{id}.ics")), "{}", changed.body);
    assert!(changed.body.contains("<D:getetag>"), "{}", changed.body);
    let t1 = token_of(&changed.body);
    assert_ne!(t1, t0);
    let ctag = dav
        .send("PROPFIND", "/dav/calendars/rooms/A/", &[("Depth", "0")], r#"<d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"><d:prop><d:sync-token/><cs:getctag/></d:prop></d:propfind>"#)
        .await;
    assert!(ctag.body.contains(&format!("<D:sync-token>{t1}</D:sync-token>")), "{} vs {t1}", ctag.body);

    // Cancelled elsewhere: reported removed.
    let cancelled = app.cancel_booking(TENANT_ONE, "o", id, None, &json!({})).await;
    assert_eq!(cancelled.status(), StatusCode::OK);
    let removed = dav.report("/dav/calendars/rooms/A/", &sync(&t1)).await;
    let response = removed.body.split("<D:response>").nth(1).expect("one response");
    assert!(response.contains(&format!("booking-{id}.ics")) && response.contains("404 Not Found"), "{}", removed.body);

    for bad in ["urn:yeyak:sync:x", "http://other/sync/1", "urn:yeyak:sync:999999999999"] {
        let refused = dav.report("/dav/calendars/rooms/A/", &sync(bad)).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{bad}");
        assert!(refused.body.contains("<D:valid-sync-token/>"), "{}", refused.body);
    }
}

#[tokio::test]
async fn a_revoked_app_password_or_a_disabled_person_is_refused_at_once() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let other = app.another_process().await;
    let on_other = Dav { app: &other, user: dav.user.clone(), password: dav.password.clone() };
    assert_eq!(on_other.send("PROPFIND", "/dav/", &[("Depth", "0")], "").await.status, StatusCode::MULTI_STATUS);
    let used = app.count("SELECT count(*) FROM app_password WHERE last_used_at IS NOT NULL").await;
    assert_eq!(used, 1, "last use noted");
    app.db().await.execute("UPDATE app_password SET revoked_at = now()", &[]).await.unwrap();
    assert_eq!(on_other.send("PROPFIND", "/dav/", &[("Depth", "0")], "").await.status, StatusCode::UNAUTHORIZED);

    let lee = Dav::person(&app, "lee").await;
    assert_eq!(lee.send("PROPFIND", "/dav/", &[("Depth", "0")], "").await.status, StatusCode::MULTI_STATUS);
    app.db().await.execute("UPDATE staff_user SET disabled_at = now() WHERE username = 'lee'", &[]).await.unwrap();
    assert_eq!(lee.send("PROPFIND", "/dav/", &[("Depth", "0")], "").await.status, StatusCode::UNAUTHORIZED);
}

/// `principal-property-search` as the python `caldav` library (3.x) sends
/// it: the properties it wants beside an empty `prop`, and with no
/// `property-search` at all to list every principal.
#[tokio::test]
async fn principal_search_answers_the_caldav_librarys_own_shape() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let by_name = r#"<D:principal-property-search xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:property-search><D:prop><D:displayname/></D:prop><D:match>kim</D:match></D:property-search><D:prop/><C:calendar-home-set/><D:displayname/></D:principal-property-search>"#;
    let all = r#"<D:principal-property-search xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop/><C:calendar-home-set/><D:displayname/></D:principal-property-search>"#;
    for (what, body, expect) in [("by name", by_name, 1), ("all", all, 2)] {
        let res = dav.report("/dav/calendars/kim/bookings/", body).await;
        assert_eq!(res.status, StatusCode::MULTI_STATUS, "{what}: {}", res.body);
        let people = res.body.matches("/dav/principals/").count() - res.body.matches("/dav/principals/rooms/").count();
        assert!(people >= expect, "{what}: {}", res.body);
        assert!(res.body.contains("<D:displayname>") && res.body.contains("calendar-home-set"), "{what}: {}", res.body);
    }
}
