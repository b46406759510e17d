//! Areas' time zones and opening rules (SPEC §24): a JSON room carries its
//! area's zone; series repeat at the area's wall-clock time across the
//! spring-forward and fall-back days of America/New_York and Europe/Berlin
//! while the installation is in Asia/Seoul; availability's date, the day
//! page and the booking form are the area's; working hours and holidays
//! refuse what they close (admins exempt) and change nothing.

use chrono::{Datelike, TimeZone, Timelike, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

const NY: chrono_tz::Tz = chrono_tz::America::New_York;
const BERLIN: chrono_tz::Tz = chrono_tz::Europe::Berlin;

async fn area(app: &TestApp, body: Value) -> Value {
    let idem = format!("area-{}", uuid::Uuid::new_v4());
    let (status, area) = send(app, Method::POST, "/api/areas", ADMIN, Some(&idem), body).await;
    assert_eq!(status, StatusCode::CREATED, "{area}");
    area
}

fn local(tz: chrono_tz::Tz, y: i32, m: u32, d: u32, h: u32, min: u32) -> String {
    tz.with_ymd_and_hms(y, m, d, h, min, 0).unwrap().to_rfc3339()
}

async fn series(
    app: &TestApp,
    key: &str,
    idem: &str,
    room: &str,
    starts: &str,
    ends: &str,
    rule: &str,
) -> (StatusCode, Value) {
    let body = json!({ "title": "주간", "rooms": [room], "startsAt": starts, "endsAt": ends, "recurrence": rule });
    post(app, "/api/series", key, "alice", idem, body).await
}

/// Each created occurrence's local start and end in `tz`, and its offset.
fn local_times(body: &Value, tz: chrono_tz::Tz) -> Vec<(String, i32)> {
    use chrono::Offset;
    body["created"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let (s, e) = (utc(&b["startsAt"]).with_timezone(&tz), utc(&b["endsAt"]).with_timezone(&tz));
            (
                format!("{} {:02}:{:02}-{:02}:{:02}", s.date_naive(), s.hour(), s.minute(), e.hour(), e.minute()),
                s.offset().fix().local_minus_utc(),
            )
        })
        .collect()
}

#[tokio::test]
async fn series_keep_the_areas_wall_clock_across_both_dst_changes() {
    let app = TestApp::spawn().await;
    area(&app, json!({ "code": "NY", "timeZone": "America/New_York" })).await;
    area(&app, json!({ "code": "BER", "timeZone": "Europe/Berlin" })).await;
    let ny = add_room(&app, json!({ "code": "NY1", "name": "Hudson", "area": "NY" })).await;
    assert_eq!(ny["timeZone"], "America/New_York", "a JSON room carries its area's zone: {ny}");
    add_room(&app, json!({ "code": "BE1", "name": "Spree", "area": "BER" })).await;
    let (_, seoul) = app.get_json("/api/rooms/A", TENANT_ONE).await;
    assert_eq!(seoul["timeZone"], "Asia/Seoul", "{seoul}");

    // New York springs forward on Sunday 2027-03-14: a weekly Monday 10:00 stays 10:00.
    let (status, body) = series(
        &app,
        TENANT_ONE,
        "ny",
        "NY1",
        &local(NY, 2027, 3, 8, 10, 0),
        &local(NY, 2027, 3, 8, 11, 0),
        "FREQ=WEEKLY;COUNT=3",
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        local_times(&body, NY),
        [
            ("2027-03-08 10:00-11:00".to_owned(), -5 * 3600),
            ("2027-03-15 10:00-11:00".to_owned(), -4 * 3600),
            ("2027-03-22 10:00-11:00".to_owned(), -4 * 3600)
        ]
    );
    // Berlin falls back on Sunday 2027-10-31.
    let (status, body) = series(
        &app,
        TENANT_ONE,
        "be",
        "BE1",
        &local(BERLIN, 2027, 10, 25, 10, 0),
        &local(BERLIN, 2027, 10, 25, 11, 30),
        "FREQ=WEEKLY;COUNT=2",
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        local_times(&body, BERLIN),
        [("2027-10-25 10:00-11:30".to_owned(), 2 * 3600), ("2027-11-01 10:00-11:30".to_owned(), 3600)]
    );
    // A date-only UNTIL is the end of the area's day: a 20:00 New York
    // meeting on the UNTIL date (01:00 the next day in Seoul) is in.
    let (status, body) = series(
        &app,
        TENANT_ONE,
        "until",
        "NY1",
        &local(NY, 2027, 4, 5, 20, 0),
        &local(NY, 2027, 4, 5, 21, 0),
        "FREQ=DAILY;UNTIL=20270407",
    )
    .await;
    assert_eq!((status, body["created"].as_array().map(Vec::len)), (StatusCode::CREATED, Some(3)), "{body}");

    // Availability's date is the room's area's day.
    let (status, free) = app.get_json("/api/rooms/NY1/availability?date=2027-03-15", TENANT_ONE).await;
    assert_eq!(status, StatusCode::OK, "{free}");
    let intervals = free["free"].as_array().unwrap();
    assert_eq!(
        utc(&intervals[0]["startsAt"]),
        Utc.with_ymd_and_hms(2027, 3, 15, 4, 0, 0).unwrap(),
        "midnight EDT: {free}"
    );
    assert_eq!(utc(&intervals[0]["endsAt"]), Utc.with_ymd_and_hms(2027, 3, 15, 14, 0, 0).unwrap(), "10:00 EDT: {free}");

    // The day page of the area shows its local times and names both zones
    // for a viewer in Seoul.
    let b = Browser::new(&app);
    b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let page = b.get("/rooms?date=2027-03-15&area=NY").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.html.contains("10:00–11:00"), "the grid shows New York time");
    assert!(page.html.contains("America/New_York") && page.html.contains("Asia/Seoul"), "both zones named");
    let seoul_page = b.get("/rooms?date=2027-03-15&area=%EB%B3%B8%EA%B4%80").await;
    assert!(!seoul_page.html.contains("zone-note"), "no note where the zones agree");

    // The booking form reads typed times in the area's zone.
    let form = b.get("/rooms?date=2027-03-16&area=NY").await;
    let booked = b
        .post(
            "/bookings",
            &[
                ("title", "form"),
                ("date", "2027-03-16"),
                ("start", "09:00"),
                ("end", "09:30"),
                ("rooms", "NY1"),
                ("area", "NY"),
                ("csrf_token", &form.field("csrf_token")),
                ("idempotency_key", &form.field("idempotency_key")),
            ],
        )
        .await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    let db = app.db().await;
    let starts: chrono::DateTime<Utc> =
        db.query_one("SELECT starts_at FROM reservation WHERE title = 'form'", &[]).await.unwrap().get(0);
    assert_eq!(starts, Utc.with_ymd_and_hms(2027, 3, 16, 13, 0, 0).unwrap(), "09:00 EDT");
    assert_eq!(starts.with_timezone(&NY).weekday(), chrono::Weekday::Tue);
    // Its page shows New York time, the zone named, and the reader's Seoul time.
    let detail = b.get(&format!("/bookings/{}", crate::web::booked_id(&booked))).await;
    assert!(detail.html.contains("09:00–09:30") && detail.html.contains("America/New_York"), "{}", detail.html);
    assert!(detail.html.contains("22:00–22:30"), "the reader's own time beside it");
    app.assert_consistent().await;
}

#[tokio::test]
async fn working_hours_and_holidays_close_an_area_to_all_but_admins() {
    let app = TestApp::spawn().await;
    let (status, _) =
        send(&app, Method::POST, "/api/holiday-calendars", ADMIN, Some("us"), json!({ "code": "us" })).await;
    assert_eq!(status, StatusCode::CREATED);
    let days = json!({ "days": [{ "date": "2027-07-05", "name": "Independence Day (observed)" }] });
    let (status, _) = send(&app, Method::PUT, "/api/holiday-calendars/us/days", ADMIN, None, days).await;
    assert_eq!(status, StatusCode::OK);
    area(
        &app,
        json!({ "code": "NY", "timeZone": "America/New_York", "holidayCalendar": "us",
                       "restrictToWorkingHours": true, "closedOnHolidays": true,
                       "workingHours": { "mon": ["08:00", "18:00"], "tue": ["08:00", "18:00"],
                                         "wed": ["08:00", "18:00"], "thu": ["08:00", "18:00"],
                                         "fri": ["08:00", "18:00"] } }),
    )
    .await;
    add_room(&app, json!({ "code": "NY1", "name": "Hudson", "area": "NY" })).await;

    let stored = fingerprint(&app, &["reservation", "reservation_room", "booking_series"]).await;
    for (idem, starts, ends, code) in [
        ("evening", local(NY, 2027, 7, 6, 17, 30), local(NY, 2027, 7, 6, 18, 30), "OUTSIDE_WORKING_HOURS"),
        ("early", local(NY, 2027, 7, 6, 7, 0), local(NY, 2027, 7, 6, 9, 0), "OUTSIDE_WORKING_HOURS"),
        ("saturday", local(NY, 2027, 7, 10, 10, 0), local(NY, 2027, 7, 10, 11, 0), "OUTSIDE_WORKING_HOURS"),
        ("holiday", local(NY, 2027, 7, 5, 10, 0), local(NY, 2027, 7, 5, 11, 0), "AREA_CLOSED"),
    ] {
        let res = app.create_booking(TENANT_ONE, "alice", idem, &booking("x", &["NY1"], &starts, &ends)).await;
        let (status, err) = body(res).await;
        assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some(code)), "{idem}: {err}");
    }
    // A weekly series that meets the holiday is refused whole.
    let (status, err) = series(
        &app,
        TENANT_ONE,
        "weekly",
        "NY1",
        &local(NY, 2027, 6, 28, 10, 0),
        &local(NY, 2027, 6, 28, 11, 0),
        "FREQ=WEEKLY;COUNT=3",
    )
    .await;
    assert_eq!(
        (status, err["code"].as_str(), err["details"]["date"].as_str()),
        (StatusCode::BAD_REQUEST, Some("AREA_CLOSED"), Some("2027-07-05")),
        "{err}"
    );
    assert_eq!(
        fingerprint(&app, &["reservation", "reservation_room", "booking_series"]).await,
        stored,
        "refusals change nothing"
    );

    // Inside the hours on a working day: booked. An admin key is exempt.
    let inside = booking("ok", &["NY1"], &local(NY, 2027, 7, 6, 8, 0), &local(NY, 2027, 7, 6, 18, 0));
    let (status, b) = body(app.create_booking(TENANT_ONE, "alice", "inside", &inside).await).await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    let holiday = booking("admin", &["NY1"], &local(NY, 2027, 7, 5, 10, 0), &local(NY, 2027, 7, 5, 11, 0));
    let (status, b) = body(app.create_booking(ADMIN, "ops", "admin-holiday", &holiday).await).await;
    assert_eq!(status, StatusCode::CREATED, "admins are exempt: {b}");
    app.assert_consistent().await;
}

#[tokio::test]
async fn a_person_chooses_their_zone_on_the_account_page() {
    let app = TestApp::spawn().await;
    let b = Browser::new(&app);
    b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let page = b.get("/account").await;
    let bad =
        b.post("/account/time-zone", &[("time_zone", "Mars/Olympus"), ("csrf_token", &page.field("csrf_token"))]).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.html.contains("Mars/Olympus"), "the refusal names what was typed");
    let db = app.db().await;
    let zone = |db: tokio_postgres::Row| db.get::<_, Option<String>>(0);
    let row = db.query_one("SELECT time_zone FROM staff_user WHERE username = $1", &[&ADMIN_USER]).await.unwrap();
    assert_eq!(zone(row), None, "a refusal changes nothing");
    let ok = b
        .post("/account/time-zone", &[("time_zone", "America/New_York"), ("csrf_token", &page.field("csrf_token"))])
        .await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.html);
    let row = db.query_one("SELECT time_zone FROM staff_user WHERE username = $1", &[&ADMIN_USER]).await.unwrap();
    assert_eq!(zone(row).as_deref(), Some("America/New_York"));
    // The Seoul area's day page now names both zones.
    let day = b.get("/rooms").await;
    assert!(day.html.contains("America/New_York") && day.html.contains("Asia/Seoul"), "both zones named");
    let back = b.post("/account/time-zone", &[("time_zone", ""), ("csrf_token", &page.field("csrf_token"))]).await;
    assert_eq!(back.status, StatusCode::OK);
    let row = db.query_one("SELECT time_zone FROM staff_user WHERE username = $1", &[&ADMIN_USER]).await.unwrap();
    assert_eq!(zone(row), None, "empty is the installation's");
}

#[tokio::test]
async fn a_calendar_apps_floating_times_are_the_invited_rooms_areas() {
    let app = TestApp::spawn().await;
    area(&app, json!({ "code": "NY", "timeZone": "America/New_York" })).await;
    add_room(&app, json!({ "code": "NY1", "name": "Hudson", "area": "NY" })).await;
    let dav = crate::caldav::Dav::person(&app, "kim").await;
    let event = |uid: &str, room: &str| {
        format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//floating//EN\r\nBEGIN:VEVENT\r\nUID:{uid}\r\n\
             DTSTAMP:20270101T000000Z\r\nDTSTART:20270316T100000\r\nDTEND:20270316T110000\r\nSUMMARY:{uid}\r\n\
             ATTENDEE;CUTYPE=ROOM:mailto:room-{}@yeyak.local\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
            room.to_lowercase()
        )
    };
    for (uid, room) in [("ny-floating", "NY1"), ("seoul-floating", "A")] {
        let put = dav.put(&format!("{uid}.ics"), &event(uid, room), &[]).await;
        assert_eq!(put.status, StatusCode::CREATED, "{}", put.body);
    }
    let db = app.db().await;
    let start = |title: &'static str| {
        let db = &db;
        async move {
            db.query_one("SELECT starts_at FROM reservation WHERE title = $1", &[&title])
                .await
                .unwrap()
                .get::<_, chrono::DateTime<Utc>>(0)
        }
    };
    assert_eq!(start("ny-floating").await, Utc.with_ymd_and_hms(2027, 3, 16, 14, 0, 0).unwrap(), "10:00 in New York");
    assert_eq!(start("seoul-floating").await, Utc.with_ymd_and_hms(2027, 3, 16, 1, 0, 0).unwrap(), "10:00 in Seoul");
}
