//! Series that keep not showing up (SPEC §25): consecutive no-show
//! releases strike a series once, across processes; a check-in in between
//! breaks the run; the restore rebooks what is still free in one
//! transaction; the report counts the time given back and reused.

use chrono::{DateTime, Duration, DurationRound, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use yeyak::clock::Clock;

use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

/// A check-in room, and a weekly series of `count` hour-long occurrences
/// in it from the next whole hour two hours ahead, made by owner `alice`.
async fn weekly_series(app: &TestApp, count: u32) -> (i64, DateTime<Utc>) {
    add_room(app, json!({"code": "K", "name": "K", "area": "체크인", "checkInRequired": true})).await;
    let t = app.clock.now().duration_trunc(Duration::hours(1)).unwrap() + Duration::hours(2);
    let (status, body) = post(
        app,
        "/api/series",
        TENANT_ONE,
        "alice",
        "series-1",
        json!({
            "title": "주간 회의", "rooms": ["K"],
            "startsAt": t.to_rfc3339(), "endsAt": (t + Duration::hours(1)).to_rfc3339(),
            "recurrence": format!("FREQ=WEEKLY;COUNT={count}"),
        }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    (body["series"]["id"].as_i64().unwrap(), t)
}

/// Adds the check-in room `K` and books a weekly hour in it through the
/// day page's form as `who`, from the next whole hour two hours ahead for
/// `weeks` more weeks; returns the series and its first start.
pub(crate) async fn weekly_series_by_form(app: &TestApp, who: &Browser<'_>, weeks: i64) -> (i64, DateTime<Utc>) {
    add_room(app, json!({"code": "K", "name": "K", "area": "체크인", "checkInRequired": true})).await;
    let t = app.clock.now().duration_trunc(Duration::hours(1)).unwrap() + Duration::hours(2);
    let local = t.with_timezone(&chrono_tz::Asia::Seoul);
    let page = who.get(&format!("/rooms?date={}", local.date_naive())).await;
    let booked = who
        .post(
            "/bookings",
            &[
                ("title", "주간 회의"),
                ("date", &local.date_naive().to_string()),
                ("start", &local.format("%H:%M").to_string()),
                ("end", &(local + Duration::hours(1)).format("%H:%M").to_string()),
                ("rooms", "K"),
                ("repeat", "weekly"),
                ("repeat_until", &(local + Duration::weeks(weeks)).date_naive().to_string()),
                ("csrf_token", &page.field("csrf_token")),
                ("idempotency_key", &page.field("idempotency_key")),
            ],
        )
        .await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    (app.count("SELECT max(id) FROM booking_series").await, t)
}

async fn sweep(app: &TestApp) {
    let res = app
        .request(Method::POST, "/api/admin/sweep", ADMIN, Some("ops"))
        .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let (status, answer) = body(res).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}

async fn statuses(app: &TestApp, series: i64) -> Vec<String> {
    let db = app.db().await;
    db.query("SELECT status FROM reservation WHERE series_id = $1 ORDER BY starts_at", &[&series])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[tokio::test]
async fn three_no_shows_in_a_row_cancel_the_future_occurrences_once() {
    let app = TestApp::spawn().await;
    let (series, t) = weekly_series(&app, 6).await;
    // The first two no-shows strike nothing yet.
    for week in 0..2 {
        app.clock.set(t + Duration::weeks(week) + Duration::minutes(20));
        sweep(&app).await;
    }
    assert_eq!(
        statuses(&app, series).await,
        ["RELEASED", "RELEASED", "CONFIRMED", "CONFIRMED", "CONFIRMED", "CONFIRMED"]
    );
    app.clock.set(t + Duration::weeks(2) + Duration::minutes(20));
    sweep(&app).await;
    assert_eq!(
        statuses(&app, series).await,
        ["RELEASED", "RELEASED", "RELEASED", "CANCELLED", "CANCELLED", "CANCELLED"]
    );
    let cancelled_by = "SELECT count(*) FROM booking_event WHERE action = 'cancelled' AND actor = 'yeyak (no-shows)'";
    assert_eq!(app.count(cancelled_by).await, 3);
    assert_eq!(
        app.count(&format!("SELECT count(*) FROM booking_series WHERE id = {series} AND struck_at IS NOT NULL")).await,
        1
    );
    // Their rooms are free at once.
    let (status, body) = body(
        app.create_booking(
            TENANT_TWO,
            "bob",
            "after-strike",
            &booking(
                "다른 회의",
                &["K"],
                &(t + Duration::weeks(3)).to_rfc3339(),
                &(t + Duration::weeks(3) + Duration::hours(1)).to_rfc3339(),
            ),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // A later sweep strikes nothing again.
    app.clock.set(t + Duration::weeks(3) + Duration::minutes(20));
    sweep(&app).await;
    assert_eq!(app.count(cancelled_by).await, 3);
    app.assert_consistent().await;
}

#[tokio::test]
async fn a_check_in_between_breaks_the_run() {
    let app = TestApp::spawn().await;
    let (series, t) = weekly_series(&app, 6).await;
    let db = app.db().await;
    let ids: Vec<i64> = db
        .query("SELECT id FROM reservation WHERE series_id = $1 ORDER BY starts_at", &[&series])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    for week in 0..4 {
        if week == 1 {
            app.clock.set(t + Duration::weeks(1) + Duration::minutes(5));
            let res = app
                .request(Method::POST, &format!("/api/bookings/{}/check-in", ids[1]), TENANT_ONE, Some("alice"))
                .json(&json!({}))
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), StatusCode::OK);
        }
        app.clock.set(t + Duration::weeks(week) + Duration::minutes(20));
        sweep(&app).await;
    }
    // released, checked in, released, released: two in a row, not three.
    assert_eq!(
        statuses(&app, series).await,
        ["RELEASED", "CONFIRMED", "RELEASED", "RELEASED", "CONFIRMED", "CONFIRMED"]
    );
    app.clock.set(t + Duration::weeks(4) + Duration::minutes(20));
    sweep(&app).await;
    assert_eq!(
        statuses(&app, series).await,
        ["RELEASED", "CONFIRMED", "RELEASED", "RELEASED", "RELEASED", "CANCELLED"]
    );
}

#[tokio::test]
async fn two_processes_strike_a_series_once() {
    let first = TestApp::spawn_with(|c| c.smtp_url = Some("smtp://127.0.0.1:9".into())).await;
    let second = first.another_process_with(|c| c.smtp_url = Some("smtp://127.0.0.1:9".into())).await;
    // Made by a signed-in person with an address, so the strike is mailed.
    let admin = Browser::new(&first);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, kim) = add_person_signed_in(&first, &admin, "kim", "김민지").await;
    let (series, t) = weekly_series_by_form(&first, &kim, 9).await;
    assert_eq!(statuses(&first, series).await.len(), 10);
    // Three weeks of no-shows fall due at once; both processes sweep together.
    let later = t + Duration::weeks(2) + Duration::minutes(20);
    first.clock.set(later);
    second.clock.set(later);
    tokio::join!(sweep(&first), sweep(&second));
    let states = statuses(&first, series).await;
    assert_eq!(states[..3], ["RELEASED", "RELEASED", "RELEASED"]);
    assert!(states[3..].iter().all(|s| s == "CANCELLED"), "{states:?}");
    let cancelled = "SELECT count(*) FROM booking_event WHERE action = 'cancelled' AND actor = 'yeyak (no-shows)'";
    assert_eq!(first.count(cancelled).await, 7, "each future occurrence cancelled once");
    let mail = format!("SELECT count(*) FROM notification_outbox WHERE delivery_id = 'series-{series}-strikes'");
    assert_eq!(first.count(&mail).await, 1, "one strike mail");
    let db = first.db().await;
    let payload: String = db
        .query_one(
            &format!("SELECT payload::text FROM notification_outbox WHERE delivery_id = 'series-{series}-strikes'"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let payload: Value = serde_json::from_str(&payload).unwrap();
    assert_eq!((payload["to"].as_str(), payload["cancelled"].as_i64()), (Some("kim@example.com"), Some(7)));
    first.assert_consistent().await;

    // The restore page lists the seven; someone takes week 5's time meanwhile.
    // (Two weeks on, kim signs in again: a sign-in lasts 12 hours.)
    let kim = Browser::new(&first);
    kim.sign_in("kim", "correct-horse-1").await;
    let page = kim.get(&format!("/series/{series}/restore")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.html);
    assert!(page.html.contains("action=\"/series/"), "{}", page.html);
    let w5 = t + Duration::weeks(5);
    let (status, taken) = body(
        first
            .create_booking(
                TENANT_TWO,
                "bob",
                "w5",
                &booking("가로챔", &["K"], &w5.to_rfc3339(), &(w5 + Duration::minutes(30)).to_rfc3339()),
            )
            .await,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{taken}");
    // A stranger may not restore it.
    let admin = Browser::new(&first);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, lee) = add_person_signed_in(&first, &admin, "lee", "이서준").await;
    let stranger = lee.get(&format!("/series/{series}/restore")).await;
    let refused = lee
        .post(
            &format!("/series/{series}/restore"),
            &[("csrf_token", &stranger.field("csrf_token")), ("idempotency_key", &stranger.field("idempotency_key"))],
        )
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.html);
    let restored = kim
        .post(
            &format!("/series/{series}/restore"),
            &[("csrf_token", &page.field("csrf_token")), ("idempotency_key", &page.field("idempotency_key"))],
        )
        .await;
    assert_eq!(restored.status, StatusCode::OK, "{}", restored.html);
    let states = statuses(&first, series).await;
    assert_eq!(
        states[3..],
        ["CONFIRMED", "CONFIRMED", "CANCELLED", "CONFIRMED", "CONFIRMED", "CONFIRMED", "CONFIRMED"]
    );
    assert_eq!(first.count("SELECT count(*) FROM booking_event WHERE action = 'restored'").await, 6);
    assert_eq!(first.count(&format!("SELECT count(*) FROM booking_series WHERE id = {series} AND struck_at IS NULL AND restored_at IS NOT NULL")).await, 1);
    // A second restore: the series is not struck any more, nothing changes.
    let again_page = kim.get(&format!("/series/{series}/restore")).await;
    let before = fingerprint(&first, &["reservation", "reservation_room", "booking_series"]).await;
    let again = kim
        .post(
            &format!("/series/{series}/restore"),
            &[("csrf_token", &again_page.field("csrf_token")), ("idempotency_key", &uuid::Uuid::new_v4().to_string())],
        )
        .await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.html);
    assert_eq!(fingerprint(&first, &["reservation", "reservation_room", "booking_series"]).await, before);
    first.assert_consistent().await;
}

#[tokio::test]
async fn the_report_counts_released_time_and_the_part_booked_again() {
    let app = TestApp::spawn().await;
    add_room(&app, json!({"code": "K", "name": "K", "area": "체크인", "checkInRequired": true})).await;
    // Ten o'clock tomorrow in Seoul, an hour, nobody comes.
    let day = app.clock.now().with_timezone(&chrono_tz::Asia::Seoul).date_naive() + Duration::days(1);
    let ten =
        day.and_hms_opt(10, 0, 0).unwrap().and_local_timezone(chrono_tz::Asia::Seoul).unwrap().with_timezone(&Utc);
    let (status, b) = body(
        app.create_booking(
            TENANT_ONE,
            "alice",
            "noshow",
            &booking("회의", &["K"], &ten.to_rfc3339(), &(ten + Duration::hours(1)).to_rfc3339()),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    app.clock.set(ten + Duration::minutes(15) + Duration::seconds(10));
    sweep(&app).await;
    // Released at 10:16 (the next minute): 44 minutes given back; then
    // 10:30–11:00 is booked again by someone else.
    let half = ten + Duration::minutes(30);
    let (status, b) = body(
        app.create_booking(
            TENANT_TWO,
            "bob",
            "reuse",
            &booking("재사용", &["K"], &half.to_rfc3339(), &(ten + Duration::hours(1)).to_rfc3339()),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    let res = app
        .request(Method::GET, &format!("/api/admin/reports/utilisation.csv?from={day}&to={day}"), ADMIN, None)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let csv = res.text().await.unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().trim_start_matches('\u{feff}').split(',').collect();
    let row: Vec<&str> = lines.find(|l| l.starts_with("K,")).unwrap().split(',').collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(col("released_hours"), "0.73", "{csv}");
    assert_eq!(col("reused_hours"), "0.50", "{csv}");
}
