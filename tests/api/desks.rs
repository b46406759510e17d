//! Desks and floor plans (SPEC §28): desks are rooms of kind `desk`, booked
//! by day or half day in their area's working hours; the database alone
//! keeps one desk per person per half day and one person per desk-day; an
//! assigned desk is lent only on its holder's away days; an area's plan is
//! a checked image, served with its type, and drawn with its places.

use std::sync::Arc;

use chrono::{Datelike, Duration, NaiveDate, Weekday};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::sync::Barrier;

use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

/// A working weekday (Monday to Friday) at least two days after the test day, in Seoul.
fn weekday() -> NaiveDate {
    let mut d = (test_now() + Duration::days(2)).with_timezone(&chrono_tz::Asia::Seoul).date_naive();
    while matches!(d.weekday(), Weekday::Sat | Weekday::Sun) {
        d = d.succ_opt().unwrap();
    }
    d
}

async fn add_desk(app: &TestApp, code: &str, extra: Value) -> Value {
    let mut body = json!({ "code": code, "name": format!("Desk {code}"), "area": "3F", "kind": "desk" });
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    add_room(app, body).await
}

async fn book_desk(app: &TestApp, owner: &str, desk: &str, date: NaiveDate, unit: &str) -> (StatusCode, Value) {
    let idem = format!("desk-{}", uuid::Uuid::new_v4());
    let body = json!({ "rooms": [desk], "date": date.to_string(), "unit": unit });
    post(app, "/api/bookings", TENANT_ONE, owner, &idem, body).await
}

fn code(v: &Value) -> &str {
    v["code"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_desk_is_a_room_of_kind_desk_and_refuses_a_rooms_extras() {
    let app = TestApp::spawn().await;
    let desk = add_desk(&app, "D1", json!({ "x": 0.25, "y": 0.5 })).await;
    assert_eq!((desk["kind"].as_str(), desk["x"].as_f64(), desk["y"].as_f64()), (Some("desk"), Some(0.25), Some(0.5)));
    assert!(desk["assignedTo"].is_null(), "{desk}");
    let (_, a) = app.get_json("/api/rooms/A", TENANT_ONE).await;
    assert_eq!(a["kind"], "room", "rooms are rooms by default: {a}");

    let before = fingerprint(&app, &["room", "area"]).await;
    for (field, body) in [
        ("bufferBeforeMinutes", json!({ "code": "D2", "name": "D2", "kind": "desk", "bufferBeforeMinutes": 10 })),
        ("bufferAfterMinutes", json!({ "code": "D2", "name": "D2", "kind": "desk", "bufferAfterMinutes": 5 })),
        ("suite", json!({ "code": "D2", "name": "D2", "kind": "desk", "suite": "ABC" })),
        ("x", json!({ "code": "D2", "name": "D2", "kind": "desk", "x": 1.5, "y": 0.5 })),
        ("y", json!({ "code": "D2", "name": "D2", "x": 0.5 })),
        ("kind", json!({ "code": "D2", "name": "D2", "kind": "sofa" })),
        ("assignedTo", json!({ "code": "D2", "name": "D2", "assignedTo": "admin" })),
        ("assignedTo", json!({ "code": "D2", "name": "D2", "kind": "desk", "assignedTo": "nobody-here" })),
    ] {
        let idem = format!("bad-{}", uuid::Uuid::new_v4());
        let (status, err) = send(&app, Method::POST, "/api/rooms", ADMIN, Some(&idem), body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{field}: {err}");
        assert_eq!(err["details"]["field"], field, "{err}");
    }
    for (field, body) in
        [("bufferAfterMinutes", json!({ "bufferAfterMinutes": 15 })), ("y", json!({ "y": -0.1, "x": 0.2 }))]
    {
        let (status, err) = send(&app, Method::PATCH, "/api/rooms/D1", ADMIN, None, body).await;
        assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some(field)), "{err}");
    }
    let (status, err) = send(&app, Method::PATCH, "/api/rooms/A", ADMIN, None, json!({ "kind": "desk" })).await;
    assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("suite")), "{err}");
    assert_eq!(fingerprint(&app, &["room", "area"]).await, before, "refusals change nothing");
}

#[tokio::test]
async fn a_desk_is_booked_for_its_areas_working_day_or_a_half() {
    let app = TestApp::spawn().await;
    add_desk(&app, "D1", json!({})).await;
    add_desk(&app, "D2", json!({})).await;
    let day = weekday();

    let (status, am) = book_desk(&app, "kim", "D1", day, "am").await;
    assert_eq!(status, StatusCode::CREATED, "{am}");
    assert_eq!(seoul_date(utc(&am["startsAt"])), day.to_string());
    let local = |v: &Value| utc(v).with_timezone(&chrono_tz::Asia::Seoul).format("%H:%M").to_string();
    assert_eq!((local(&am["startsAt"]), local(&am["endsAt"])), ("09:00".into(), "13:00".into()));
    assert_eq!(am["title"], "D1", "a desk's booking may leave its title out");
    let (status, pm) = book_desk(&app, "lee", "D1", day, "pm").await;
    assert_eq!(status, StatusCode::CREATED, "{pm}");
    assert_eq!((local(&pm["startsAt"]), local(&pm["endsAt"])), ("13:00".into(), "18:00".into()));
    let (status, err) = book_desk(&app, "park", "D1", day, "day").await;
    assert_eq!((status, code(&err)), (StatusCode::CONFLICT, "ROOM_TIME_TAKEN"), "{err}");

    // One desk per person per half day, decided by the database.
    let (status, err) = book_desk(&app, "kim", "D2", day, "day").await;
    assert_eq!((status, code(&err)), (StatusCode::CONFLICT, "DESK_ALREADY_BOOKED"), "{err}");
    let (status, pm2) = book_desk(&app, "kim", "D2", day, "pm").await;
    assert_eq!(status, StatusCode::CREATED, "the other half is free for kim: {pm2}");

    let before = fingerprint(&app, &["reservation", "reservation_room"]).await;
    let (status, err) = book_desk(&app, "park", "A", day, "am").await;
    assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("unit")), "{err}");
    let (status, err) = book_desk(&app, "park", "D2", day, "night").await;
    assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("unit")), "{err}");
    let sunday = (0..7).map(|i| day + Duration::days(i)).find(|d| d.weekday() == Weekday::Sun).unwrap();
    let (status, err) = book_desk(&app, "park", "D2", sunday, "day").await;
    assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("date")), "{err}");
    let at = |h| day.and_hms_opt(h, 0, 0).unwrap().and_local_timezone(chrono_tz::Asia::Seoul).unwrap().to_rfc3339();
    let odd = json!({ "title": "t", "rooms": ["D2"], "startsAt": at(10), "endsAt": at(12) });
    let (status, err) = post(&app, "/api/bookings", TENANT_ONE, "park", "odd-hours", odd).await;
    assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("unit")), "{err}");
    let (status, err) =
        post(&app, "/api/bookings", TENANT_ONE, "park", "no-start", json!({ "title": "t", "rooms": ["A"] })).await;
    assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("startsAt")), "{err}");
    assert_eq!(fingerprint(&app, &["reservation", "reservation_room"]).await, before, "refusals change nothing");

    // Instants that are exactly a unit book it as well.
    let whole = json!({ "title": "t", "rooms": ["D2"], "startsAt": at(9), "endsAt": at(13) });
    let (status, b) = post(&app, "/api/bookings", TENANT_ONE, "park", "as-instants", whole).await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    app.assert_consistent().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_database_gives_one_person_one_desk_per_half_day_and_one_desk_day_one_person() {
    const N: usize = 12;
    let app = Arc::new(TestApp::spawn().await);
    for i in 0..N {
        add_desk(&app, &format!("R{i}"), json!({})).await;
    }
    let day = weekday();
    let race = |who: Vec<(String, String)>| {
        let app = app.clone();
        async move {
            let barrier = Arc::new(Barrier::new(who.len()));
            let tasks: Vec<_> = who
                .into_iter()
                .map(|(owner, desk)| {
                    let (app, barrier) = (app.clone(), barrier.clone());
                    tokio::spawn(async move {
                        barrier.wait().await;
                        book_desk(&app, &owner, &desk, day, "am").await
                    })
                })
                .collect();
            let mut answers = Vec::new();
            for t in tasks {
                answers.push(t.await.unwrap());
            }
            answers
        }
    };
    // One person, many desks, the same morning.
    let answers = race((0..N).map(|i| ("kim".to_owned(), format!("R{i}"))).collect()).await;
    let won = answers.iter().filter(|(s, _)| *s == StatusCode::CREATED).count();
    assert_eq!(won, 1, "{answers:?}");
    for (status, body) in answers.iter().filter(|(s, _)| *s != StatusCode::CREATED) {
        assert_eq!((*status, code(body)), (StatusCode::CONFLICT, "DESK_ALREADY_BOOKED"), "{body}");
    }
    // Many people, one desk-day (a desk kim did not get).
    let taken: String =
        app.db().await.query_one("SELECT room FROM reservation_room WHERE active", &[]).await.unwrap().get(0);
    let free = (0..N).map(|i| format!("R{i}")).find(|d| *d != taken).unwrap();
    let answers = race((0..N).map(|i| (format!("person-{i}"), free.clone())).collect()).await;
    let won = answers.iter().filter(|(s, _)| *s == StatusCode::CREATED).count();
    assert_eq!(won, 1, "{answers:?}");
    for (status, body) in answers.iter().filter(|(s, _)| *s != StatusCode::CREATED) {
        assert_eq!((*status, code(body)), (StatusCode::CONFLICT, "ROOM_TIME_TAKEN"), "{body}");
    }
    assert_eq!(app.count("SELECT count(*) FROM reservation_room WHERE active").await, 2);
    app.assert_consistent().await;
}

#[tokio::test]
async fn an_assigned_desk_is_lent_only_on_its_holders_away_days() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let desk = add_desk(&app, "D1", json!({ "assignedTo": "kim", "x": 0.5, "y": 0.5 })).await;
    assert_eq!(desk["assignedTo"], "kim");
    let (day, next) = (weekday(), weekday() + Duration::days(7));

    let (status, err) = book_desk(&app, "lee", "D1", day, "day").await;
    assert_eq!((status, code(&err)), (StatusCode::CONFLICT, "DESK_ASSIGNED"), "{err}");

    let page = kim.get("/account").await;
    let bad = kim
        .post(
            "/account/away",
            &[("from", "2030-01-02"), ("to", "2030-01-01"), ("csrf_token", &page.field("csrf_token"))],
        )
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    let forged = kim.post("/account/away", &[("from", &day.to_string()), ("to", &day.to_string())]).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN, "no CSRF token");
    assert_eq!(app.count("SELECT count(*) FROM staff_away").await, 0);
    let away = kim
        .post(
            "/account/away",
            &[("from", &day.to_string()), ("to", &day.to_string()), ("csrf_token", &page.field("csrf_token"))],
        )
        .await;
    assert_eq!(away.status, StatusCode::OK, "{}", away.html);
    assert!(away.html.contains(&day.to_string()), "the account lists the days away");

    let (_, places) = app.get_json(&format!("/api/areas/3F/plan/places?date={day}"), TENANT_ONE).await;
    assert_eq!(places["places"][0]["state"], "away", "{places}");
    let (status, lent) = book_desk(&app, "lee", "D1", day, "day").await;
    assert_eq!(status, StatusCode::CREATED, "lent on kim's away day: {lent}");
    let (status, err) = book_desk(&app, "lee", "D1", next, "am").await;
    assert_eq!((status, code(&err)), (StatusCode::CONFLICT, "DESK_ASSIGNED"), "{err}");

    let (_, places) = app.get_json(&format!("/api/areas/3F/plan/places?date={day}"), TENANT_ONE).await;
    assert_eq!(places["places"][0]["state"], "booked", "{places}");
    let (_, places) = app.get_json(&format!("/api/areas/3F/plan/places?date={next}"), TENANT_ONE).await;
    assert_eq!(places["places"][0], json!({ "code": "D1", "kind": "desk", "x": 0.5, "y": 0.5, "state": "assigned" }));

    // The holder books their own desk through the form with a unit.
    let form = kim.get(&format!("/rooms?area=3F&date={next}&room=D1&unit=pm")).await;
    assert!(form.html.contains("name=\"unit\""), "the booking form asks for a unit");
    let booked = kim
        .post(
            "/bookings",
            &[
                ("date", &next.to_string()),
                ("unit", "pm"),
                ("rooms", "D1"),
                ("title", ""),
                ("area", "3F"),
                ("idempotency_key", &form.field("idempotency_key")),
                ("csrf_token", &form.field("csrf_token")),
            ],
        )
        .await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    let plan = kim.get(&format!("/areas/3F/plan?date={next}")).await;
    assert_eq!(plan.status, StatusCode::OK);
    assert!(plan.html.contains("#m-yours"), "kim's own booking is drawn as theirs");
    app.assert_consistent().await;
}

fn png(w: u32, h: u32) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    image::RgbImage::from_pixel(w, h, image::Rgb([240, 240, 240])).write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

async fn put_plan(app: &TestApp, area: &str, content_type: &str, bytes: Vec<u8>) -> (StatusCode, Value) {
    let res = app
        .request(Method::PUT, &format!("/api/areas/{area}/plan"), ADMIN, None)
        .header("Content-Type", content_type)
        .body(bytes)
        .send()
        .await
        .unwrap();
    body(res).await
}

#[tokio::test]
async fn a_plan_is_a_whole_image_served_with_its_type_and_drawn_with_its_places() {
    let app = TestApp::spawn().await;
    add_desk(&app, "D1", json!({ "x": 0.2, "y": 0.3 })).await;
    add_desk(&app, "D2", json!({ "x": 0.7, "y": 0.6 })).await;
    add_desk(&app, "D3", json!({})).await;
    let image = png(400, 300);

    let before = fingerprint(&app, &["area_plan"]).await;
    let cut = image[..image.len() - 30].to_vec();
    for (content_type, bytes) in [("image/png", cut), ("image/gif", image.clone()), ("image/jpeg", image.clone())] {
        let (status, err) = put_plan(&app, "3F", content_type, bytes).await;
        assert_eq!((status, code(&err)), (StatusCode::BAD_REQUEST, "INVALID_IMAGE"), "{content_type}: {err}");
    }
    let (status, err) = put_plan(&app, "3F", "image/png", vec![0; 5 * 1024 * 1024 + 1]).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{err}");
    let (status, _) = put_plan(&app, "nowhere", "image/png", image.clone()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(fingerprint(&app, &["area_plan"]).await, before, "refusals store nothing");
    let (status, plan) = put_plan(&app, "3F", "image/png", image.clone()).await;
    assert_eq!(status, StatusCode::OK, "{plan}");
    assert_eq!(
        (plan["width"].as_i64(), plan["height"].as_i64(), plan["contentType"].as_str()),
        (Some(400), Some(300), Some("image/png"))
    );

    let b = Browser::new(&app);
    b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let res = b.client.get(app.url("/areas/3F/plan.img")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let headers = res.headers().clone();
    assert_eq!(headers["content-type"], "image/png");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    let etag = headers["etag"].to_str().unwrap().to_owned();
    assert_eq!(res.bytes().await.unwrap().to_vec(), image);
    let again = b.client.get(app.url("/areas/3F/plan.img")).header("If-None-Match", &etag).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);

    let day = weekday();
    assert_eq!(book_desk(&app, "lee", "D2", day, "am").await.0, StatusCode::CREATED);
    let page = b.get(&format!("/areas/3F/plan?date={day}")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.html.contains("/areas/3F/plan.img"), "the image under the marks");
    assert_eq!(page.html.matches("class=\"mark ").count(), 2, "one link per placed desk");
    let html = page.html.replace("&#38;", "&").replace("&amp;", "&");
    let filled = format!("/rooms?area=3F&date={day}&room=D1&unit=day#book");
    assert!(html.contains(&filled), "a free desk links to the filled form");
    assert!(page.html.contains("#m-booked") && page.html.contains("#m-free"), "states drawn as shapes");
    assert!(page.html.contains("<ul class=\"places\">"), "the same places listed below");
    let (_, places) = app.get_json(&format!("/api/areas/3F/plan/places?date={day}"), TENANT_ONE).await;
    let states: Vec<&str> = places["places"].as_array().unwrap().iter().map(|p| p["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["free", "booked"], "{places}");
    let (status, err) = app.get_json("/api/areas/3F/plan/places?date=soon", TENANT_ONE).await;
    assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("date")));
}
