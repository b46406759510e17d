//! The person's event is theirs, whole (SPEC §23): what a calendar app sends
//! is stored as sent and read back byte for byte but for what a scheduling
//! server owns; sending back what was read changes nothing; a changed
//! event asks its rooms again; a UID is decided by the database.

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::json;
use tokio::sync::Barrier;

use crate::caldav::{invite, Dav};
use crate::helpers::*;

/// The same instant as `at` (`2030-01-07T10:00:00+00:00`) in iCalendar form.
fn ics_time(days: i64, h: u32, m: u32) -> String {
    at(days, h, m).replace(['-', ':'], "")[..15].to_owned() + "Z"
}

/// A rich event, as calendar apps write them: a time zone, a description,
/// a colleague, an alarm, the app's own properties.
fn rich(uid: &str, rooms: &[&str], start: &str, end: &str, extra: &str) -> String {
    let rooms: String = rooms
        .iter()
        .map(|r| {
            format!(
                "ATTENDEE;CUTYPE=ROOM;CN=\"Room {r}\";PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:room-{}@yeyak.local\r\n",
                r.to_lowercase()
            )
        })
        .collect();
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Some App//EN\r\nBEGIN:VTIMEZONE\r\nTZID:Asia/Seoul\r\n\
         BEGIN:STANDARD\r\nDTSTART:19700101T000000\r\nTZOFFSETFROM:+0900\r\nTZOFFSETTO:+0900\r\nEND:STANDARD\r\n\
         END:VTIMEZONE\r\nBEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20300101T000000Z\r\nDTSTART:{start}\r\nDTEND:{end}\r\n\
         SUMMARY:분기 계획\r\nDESCRIPTION:숫자를 가져오세요\\, 꼭\r\nLOCATION:3층\r\nCLASS:PUBLIC\r\nCATEGORIES:work,plan\r\n\
         ATTENDEE;CN=\"Lee, Young\";ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;SCHEDULE-AGENT=CLIENT:mailto:lee@example.com\r\n\
         {rooms}X-APP-COLOR;VALUE=TEXT:#ff0000\r\n{extra}BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:곧 시작\r\n\
         TRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

fn unfold(ics: &str) -> String {
    ics.replace("\r\n ", "")
}

async fn version_of(app: &TestApp, title: &str) -> (i64, String) {
    let row = app
        .db()
        .await
        .query_one("SELECT version::int8, status FROM reservation WHERE title = $1 ORDER BY id DESC LIMIT 1", &[&title])
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

#[tokio::test]
async fn the_whole_event_is_kept_and_sending_back_what_was_read_changes_nothing() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let sent = rich("keep-1", &["A"], &ics_time(1, 1, 0), &ics_time(1, 2, 0), "");
    let put = dav.put("keep.ics", &sent, &[]).await;
    assert_eq!(put.status, StatusCode::CREATED, "{}", put.body);
    let got = dav.send("GET", "/dav/calendars/kim/bookings/keep.ics", &[], "").await;
    assert_eq!(got.status, StatusCode::OK);
    // Every line the app sent is there, byte for byte, but the room's.
    for line in sent.split("\r\n").filter(|l| !l.is_empty() && !l.contains("room-a@")) {
        assert!(got.body.contains(&format!("{line}\r\n")), "lost: {line}\n{}", got.body);
    }
    let room = unfold(&got.body).lines().find(|l| l.contains("room-a@")).unwrap().to_owned();
    assert!(room.contains("PARTSTAT=ACCEPTED;SCHEDULE-STATUS=2.0"), "{room}");
    assert!(room.contains("CN=\"Room A\"") && room.contains("RSVP=TRUE"), "the app's own parameters stay: {room}");
    assert!(unfold(&got.body).contains("\r\nORGANIZER;CN="), "the server's organizer: {}", got.body);
    let etag = got.headers["etag"].to_str().unwrap().to_owned();
    let again = dav.send("GET", "/dav/calendars/kim/bookings/keep.ics", &[], "").await;
    assert_eq!(
        (again.body.as_str(), &again.headers["etag"]),
        (got.body.as_str(), &got.headers["etag"]),
        "stable bytes"
    );

    // Sending back what it read: 204, the same ETag answered, nothing moves.
    let (version, _) = version_of(&app, "분기 계획").await;
    let history = app.count("SELECT count(*) FROM booking_event").await;
    let mail = app.count("SELECT count(*) FROM notification_outbox").await;
    let back = dav.put("keep.ics", &got.body, &[("If-Match", &etag)]).await;
    assert_eq!(back.status, StatusCode::NO_CONTENT, "{}", back.body);
    assert_eq!(back.headers["etag"].to_str().unwrap(), etag, "the bytes stored are those sent");
    assert_eq!(version_of(&app, "분기 계획").await.0, version, "same booking version");
    assert_eq!(app.count("SELECT count(*) FROM booking_event").await, history, "no history");
    assert_eq!(app.count("SELECT count(*) FROM notification_outbox").await, mail, "no mail");
    // A change of what rooms do not read (the description) books nothing either.
    let described = got.body.replace("숫자를 가져오세요", "표를 가져오세요");
    assert_eq!(dav.put("keep.ics", &described, &[]).await.status, StatusCode::NO_CONTENT);
    assert_eq!(version_of(&app, "분기 계획").await.0, version);
    assert!(dav.send("GET", "/dav/calendars/kim/bookings/keep.ics", &[], "").await.body.contains("표를 가져오세요"));
}

#[tokio::test]
async fn a_changed_event_asks_its_rooms_again() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let name = "plan.ics";
    let put = |rooms: &'static [&'static str], start: (u32, u32), end: (u32, u32), extra: &'static str| {
        let ics = rich("plan-1", rooms, &ics_time(1, start.0, start.1), &ics_time(1, end.0, end.1), extra);
        let dav = &dav;
        async move { dav.put(name, &ics, &[]).await }
    };
    assert_eq!(put(&["A"], (1, 0), (2, 0), "").await.status, StatusCode::CREATED);
    assert_eq!(version_of(&app, "분기 계획").await, (1, "CONFIRMED".into()));
    // Moved: the booking follows.
    assert_eq!(put(&["A"], (3, 0), (4, 0), "").await.status, StatusCode::NO_CONTENT);
    let starts: chrono::DateTime<chrono::Utc> = app
        .db()
        .await
        .query_one("SELECT starts_at FROM reservation WHERE title = '분기 계획'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(starts.to_rfc3339(), chrono::DateTime::parse_from_rfc3339(&at(1, 3, 0)).unwrap().to_rfc3339());
    // Another room added (A+B link): booked both.
    assert_eq!(put(&["A", "B"], (3, 0), (4, 0), "").await.status, StatusCode::NO_CONTENT);
    let rooms: i64 = app.count("SELECT count(*) FROM reservation_room rr JOIN reservation r ON r.id = rr.reservation_id WHERE r.title = '분기 계획' AND rr.active").await;
    assert_eq!(rooms, 2);
    // Moved onto another booking's time: the rooms decline, the old time is free again.
    let (status, _) =
        post(&app, "/api/bookings", TENANT_ONE, "o", "block", booking("막음", &["B"], &at(1, 5, 0), &at(1, 6, 0)))
            .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(put(&["A", "B"], (5, 0), (6, 0), "").await.status, StatusCode::NO_CONTENT);
    assert_eq!(version_of(&app, "분기 계획").await.1, "CANCELLED", "released");
    let got = dav.send("GET", &format!("/dav/calendars/kim/bookings/{name}"), &[], "").await;
    assert!(unfold(&got.body).contains("X-YEYAK-CODE=ROOM_TIME_TAKEN"), "{}", got.body);
    // Back to a free time: booked again; then cancelled by STATUS:CANCELLED.
    assert_eq!(put(&["A", "B"], (7, 0), (8, 0), "").await.status, StatusCode::NO_CONTENT);
    assert_eq!(version_of(&app, "분기 계획").await.1, "CONFIRMED");
    assert_eq!(put(&["A", "B"], (7, 0), (8, 0), "STATUS:CANCELLED\r\n").await.status, StatusCode::NO_CONTENT);
    assert_eq!(version_of(&app, "분기 계획").await.1, "CANCELLED");
    // Asked again, then every room removed from the attendees: released.
    assert_eq!(put(&["A"], (9, 0), (10, 0), "").await.status, StatusCode::NO_CONTENT);
    assert_eq!(version_of(&app, "분기 계획").await.1, "CONFIRMED");
    assert_eq!(put(&[], (9, 0), (10, 0), "").await.status, StatusCode::NO_CONTENT);
    assert_eq!(version_of(&app, "분기 계획").await.1, "CANCELLED");
    // Deleted: the object goes and the collection says so.
    assert_eq!(put(&["A"], (11, 0), (12, 0), "").await.status, StatusCode::NO_CONTENT);
    let deleted = dav.send("DELETE", &format!("/dav/calendars/kim/bookings/{name}"), &[], "").await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert_eq!(version_of(&app, "분기 계획").await.1, "CANCELLED");
    let gone = dav.send("GET", &format!("/dav/calendars/kim/bookings/{name}"), &[], "").await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    app.assert_consistent().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_uid_is_decided_by_the_database_under_concurrent_puts() {
    let app = TestApp::spawn().await;
    let dav = Arc::new(Dav::person(&app, "kim").await);
    // One new UID at two addresses at once: one 201, one 409 no-uid-conflict.
    for round in 0..3 {
        let uid = format!("twice-{round}");
        let barrier = Arc::new(Barrier::new(2));
        let puts = ["x", "y"].map(|n| {
            let (dav, barrier, uid) = (dav.clone(), barrier.clone(), uid.clone());
            async move {
                let ics = invite(&uid, "둘", &[], 1, 1, 2);
                barrier.wait().await;
                dav.put(&format!("{uid}-{n}.ics"), &ics, &[]).await
            }
        });
        let [a, b] = futures_util::future::join_all(puts).await.try_into().ok().unwrap();
        let mut statuses = [a.status, b.status];
        statuses.sort();
        assert_eq!(statuses, [StatusCode::CREATED, StatusCode::CONFLICT], "{} / {}", a.body, b.body);
        let conflict = if a.status == StatusCode::CONFLICT { &a } else { &b };
        assert!(conflict.body.contains("no-uid-conflict"), "{}", conflict.body);
    }
    // One new UID at one address with If-None-Match: *: one 201, one 412.
    for round in 0..3 {
        let uid = format!("once-{round}");
        let barrier = Arc::new(Barrier::new(2));
        let puts = [0, 1].map(|_| {
            let (dav, barrier, uid) = (dav.clone(), barrier.clone(), uid.clone());
            async move {
                let ics = invite(&uid, "하나", &[], 1, 1, 2);
                barrier.wait().await;
                dav.put(&format!("{uid}.ics"), &ics, &[("If-None-Match", "*")]).await
            }
        });
        let answers = futures_util::future::join_all(puts).await;
        let mut statuses: Vec<StatusCode> = answers.iter().map(|a| a.status).collect();
        statuses.sort();
        assert_eq!(statuses, [StatusCode::CREATED, StatusCode::PRECONDITION_FAILED]);
    }
    let stored = app.count("SELECT count(*) FROM dav_event WHERE body IS NOT NULL").await;
    assert_eq!(stored, 6, "one object per UID");
}

#[tokio::test]
async fn making_collections_is_refused_anywhere_under_dav() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    for method in ["MKCALENDAR", "MKCOL"] {
        for path in ["/dav/calendars/kim/new/", "/dav/calendars/kim/bookings/sub/", "/dav/x/", "/dav/"] {
            let res = dav.send(method, path, &[], "").await;
            assert_eq!(res.status, StatusCode::FORBIDDEN, "{method} {path}: {}", res.body);
        }
    }
}

#[tokio::test]
async fn a_series_member_reads_the_same_bytes_every_time_with_uids_only_on_events() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let body = json!({"title": "주간 회의", "rooms": ["C"], "startsAt": at(1, 1, 0), "endsAt": at(1, 2, 0),
                      "recurrence": "FREQ=WEEKLY;COUNT=4"});
    let (status, s) = post(&app, "/api/series", ADMIN, "ops", "s", body).await;
    assert_eq!(status, StatusCode::CREATED, "{s}");
    let series = s["series"]["id"].as_i64().expect("the series' id");
    let occ: Vec<i64> = s["created"].as_array().unwrap().iter().map(|b| b["id"].as_i64().unwrap()).collect();
    app.cancel_booking(ADMIN, "ops", occ[1], None, &json!({})).await;
    app.move_booking(ADMIN, "ops", occ[2], None, &json!({"startsAt": at(15, 5, 0), "endsAt": at(15, 6, 0)})).await;

    let path = format!("/dav/calendars/rooms/C/series-{series}.ics");
    let first = dav.send("GET", &path, &[], "").await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    for _ in 0..3 {
        let again = dav.send("GET", &path, &[], "").await;
        assert_eq!(again.body, first.body, "the same version reads the same bytes");
        assert_eq!(again.headers["etag"], first.headers["etag"]);
    }
    let text = unfold(&first.body);
    let count = |what: &str| text.split("\r\n").filter(|l| l.starts_with(what)).count();
    assert_eq!(count("BEGIN:VEVENT"), 2, "the master and the moved occurrence: {text}");
    assert_eq!(count("UID:"), 2, "a UID on each VEVENT and nowhere else: {text}");
    assert_eq!(count("BEGIN:VTIMEZONE"), 1, "{text}");
    assert_eq!((count("RRULE:"), count("EXDATE"), count("RECURRENCE-ID")), (1, 1, 1), "{text}");
    assert!(text.contains("DTSTART;TZID=Asia/Seoul:"), "{text}");
}
