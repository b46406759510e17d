//! Recurring series (SPEC §9): every occurrence through the EXCLUDE
//! constraint in one transaction; fail and skip; exceptions that survive
//! series edits; races between overlapping series.

use std::sync::Arc;

use chrono::{DateTime, Datelike, Duration, Offset, TimeZone, Timelike, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::*;

fn series(title: &str, rooms: &[&str], starts: &str, ends: &str, rule: &str) -> Value {
    json!({"title": title, "rooms": rooms, "startsAt": starts, "endsAt": ends, "recurrence": rule})
}

async fn create(app: &TestApp, owner: &str, idem: &str, body: Value) -> (StatusCode, Value) {
    post(app, "/api/series", TENANT_ONE, owner, idem, body).await
}

fn utc(v: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap().with_timezone(&Utc)
}

#[tokio::test]
async fn daily_weekly_biweekly_and_monthly_series_with_count_and_until() {
    let app = TestApp::spawn().await;
    let day = |d: i64, h: u32| at(d, h, 0);
    let cases = [
        ("FREQ=DAILY;COUNT=5", "A", 5, Duration::days(1)),
        ("FREQ=WEEKLY;COUNT=4", "B", 4, Duration::weeks(1)),
        ("FREQ=WEEKLY;INTERVAL=2;COUNT=3", "C", 3, Duration::weeks(2)),
    ];
    for (i, (rule, room, n, step)) in cases.into_iter().enumerate() {
        let (status, body) =
            create(&app, "alice", &format!("s{i}"), series("반복", &[room], &day(1, 9), &day(1, 10), rule)).await;
        assert_eq!(status, StatusCode::CREATED, "{rule}: {body}");
        let created = body["created"].as_array().unwrap();
        assert_eq!(created.len(), n, "{rule}");
        assert_eq!(body["skipped"], json!([]));
        assert_eq!(body["series"]["recurrence"], rule, "echoed as given");
        for (k, b) in created.iter().enumerate() {
            assert_eq!(utc(&b["startsAt"]) - utc(&created[0]["startsAt"]), step * k as i32, "{rule}");
            assert_eq!(b["seriesId"], body["series"]["id"]);
            assert_eq!(b["status"], "CONFIRMED");
        }
    }
    // UNTIL (a date, inclusive) and monthly on the same day of the month.
    let first = utc(&json!(day(2, 13)));
    let until = (first + Duration::days(14)).format("%Y%m%d").to_string();
    let (status, body) = create(
        &app,
        "alice",
        "u",
        series("until", &["A"], &day(2, 13), &day(2, 14), &format!("FREQ=DAILY;UNTIL={until}")),
    )
    .await;
    assert_eq!((status, body["created"].as_array().unwrap().len()), (StatusCode::CREATED, 15), "{body}");
    let (status, body) =
        create(&app, "alice", "m", series("monthly", &["A"], &day(3, 7), &day(3, 8), "FREQ=MONTHLY;COUNT=3")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let days: Vec<u32> = body["created"].as_array().unwrap().iter().map(|b| utc(&b["startsAt"]).day()).collect();
    assert_eq!(days.len(), 3);
    assert!(days.iter().all(|d| *d == days[0]), "the same day of each month: {days:?}");
    // Single bookings carry seriesId null.
    let (_, single) = body_of(
        &app,
        app.create_booking(TENANT_ONE, "a", "one", &booking("x", &["C"], &day(1, 20), &day(1, 21))).await,
    )
    .await;
    assert_eq!(single["seriesId"], Value::Null);
    app.assert_consistent().await;
}

async fn body_of(_: &TestApp, res: reqwest::Response) -> (StatusCode, Value) {
    body(res).await
}

#[tokio::test]
async fn local_time_is_kept_across_a_dst_change() {
    let app = TestApp::spawn_with(|c| c.timezone = chrono_tz::Europe::Berlin).await;
    let berlin = chrono_tz::Europe::Berlin;
    // The Monday two weeks before the next change to summer time.
    let year = (test_now() + Duration::days(60)).year();
    let last_sunday_of_march = (1..=31)
        .rev()
        .map(|d| berlin.with_ymd_and_hms(year, 3, d, 12, 0, 0).unwrap())
        .find(|t| t.weekday() == chrono::Weekday::Sun)
        .unwrap();
    let start = last_sunday_of_march.date_naive() - Duration::days(13);
    let at = |d: chrono::NaiveDate, h: u32| {
        berlin.from_local_datetime(&d.and_hms_opt(h, 0, 0).unwrap()).unwrap().to_rfc3339()
    };
    let (status, body) =
        create(&app, "alice", "dst", series("주간", &["A"], &at(start, 10), &at(start, 11), "FREQ=WEEKLY;COUNT=4"))
            .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let offsets: Vec<i32> = body["created"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let (s, e) = (utc(&b["startsAt"]).with_timezone(&berlin), utc(&b["endsAt"]).with_timezone(&berlin));
            assert_eq!((s.hour(), s.minute(), e.hour()), (10, 0, 11), "10:00-11:00 local on {s}");
            s.offset().fix().local_minus_utc()
        })
        .collect();
    assert_eq!(offsets, [3600, 3600, 7200, 7200], "two weeks in winter time, two in summer time");
}

#[tokio::test]
async fn fail_refuses_everything_and_skip_books_the_free_dates() {
    let app = TestApp::spawn().await;
    let (_, taken) =
        body(app.create_booking(TENANT_ONE, "bob", "b", &booking("밥", &["B"], &at(15, 10, 30), &at(15, 11, 0))).await)
            .await;
    let body_fail = series("주간", &["A", "B"], &at(1, 10, 0), &at(1, 11, 0), "FREQ=WEEKLY;COUNT=4");
    let (status, err) = create(&app, "alice", "f", body_fail.clone()).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("SERIES_CONFLICT")), "{err}");
    assert_eq!(
        err["details"]["conflicts"],
        json!([{"startsAt": utc(&json!(at(15, 10, 0))), "endsAt": utc(&json!(at(15, 11, 0))), "bookingId": taken["id"]}])
    );
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 1, "nothing written");
    assert_eq!(app.count("SELECT count(*) FROM booking_series").await, 0);

    let mut skip = body_fail;
    skip["onConflict"] = json!("skip");
    let (status, ok) = create(&app, "alice", "s", skip).await;
    assert_eq!(status, StatusCode::CREATED, "{ok}");
    assert_eq!(ok["created"].as_array().unwrap().len(), 3);
    assert_eq!(ok["skipped"][0]["bookingId"], taken["id"]);
    assert_eq!(ok["skipped"].as_array().unwrap().len(), 1);
    let (_, read) = app.get_json(&format!("/api/series/{}", ok["series"]["id"]), TENANT_ONE).await;
    assert_eq!(read["occurrences"].as_array().unwrap().len(), 3);
    assert_eq!(read["series"], ok["series"]);
    app.assert_consistent().await;
}

#[tokio::test]
async fn three_hundred_sixty_six_occurrences_are_accepted_and_three_hundred_sixty_seven_refused() {
    let app = TestApp::spawn().await;
    let (status, err) =
        create(&app, "a", "367", series("긴", &["C"], &at(1, 7, 0), &at(1, 7, 30), "FREQ=DAILY;COUNT=367")).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("SERIES_TOO_LONG")));
    let (status, err) = create(&app, "a", "inf", series("긴", &["C"], &at(1, 7, 0), &at(1, 7, 30), "FREQ=DAILY")).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("SERIES_TOO_LONG")));
    let (status, ok) =
        create(&app, "a", "366", series("긴", &["C"], &at(1, 7, 0), &at(1, 7, 30), "FREQ=DAILY;COUNT=366")).await;
    assert_eq!(status, StatusCode::CREATED, "{ok}");
    assert_eq!(ok["created"].as_array().unwrap().len(), 366);
    for (rule, code) in [("FREQ=YEARLY;COUNT=2", "INVALID_RECURRENCE"), ("FREQ=DAILY;BYHOUR=3", "INVALID_RECURRENCE")] {
        let (status, err) = create(&app, "a", rule, series("x", &["A"], &at(1, 7, 0), &at(1, 8, 0), rule)).await;
        assert_eq!(
            (status, err["code"].as_str(), err["details"]["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code), Some("recurrence"))
        );
    }
    assert_eq!(app.count("SELECT count(*) FROM idempotency_record").await, 1, "malformed series are not stored");
}

#[tokio::test]
async fn the_same_series_request_twice_creates_it_once_and_replays_the_body() {
    let app = TestApp::spawn().await;
    let b = series("재시도", &["A", "B", "C"], &at(1, 9, 0), &at(1, 10, 0), "FREQ=WEEKLY;COUNT=10");
    let send = || {
        app.request(Method::POST, "/api/series", TENANT_ONE, Some("alice"))
            .header("Idempotency-Key", "again")
            .json(&b)
            .send()
    };
    let first = send().await.unwrap();
    assert_eq!(first.headers()["Idempotency-Replayed"], "false");
    let first = first.text().await.unwrap();
    let second = send().await.unwrap();
    assert_eq!(second.headers()["Idempotency-Replayed"], "true");
    assert_eq!(second.text().await.unwrap(), first);
    assert_eq!(app.count("SELECT count(*) FROM booking_series").await, 1);
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 10);
}

#[tokio::test]
async fn exceptions_keep_their_own_state_when_the_series_is_edited() {
    let app = TestApp::spawn().await;
    let (_, s) =
        create(&app, "alice", "s", series("원래 제목", &["A"], &at(1, 10, 0), &at(1, 11, 0), "FREQ=WEEKLY;COUNT=4"))
            .await;
    let occ: Vec<i64> = s["created"].as_array().unwrap().iter().map(|b| b["id"].as_i64().unwrap()).collect();
    let id = s["series"]["id"].as_i64().unwrap();
    // Occurrence 2 moved to 16:00, occurrence 3 cancelled, both on their own.
    let (status, _) = body(
        app.move_booking(TENANT_ONE, "alice", occ[1], None, &json!({"startsAt": at(8, 16, 0), "endsAt": at(8, 17, 0)}))
            .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(app.cancel_booking(TENANT_ONE, "alice", occ[2], None, &json!({})).await.status(), StatusCode::OK);

    // The series moves to 14:00-15:00 local (UTC+9 by default) and is retitled.
    let (status, edited) = send(
        &app,
        Method::PATCH,
        &format!("/api/series/{id}"),
        TENANT_ONE,
        None,
        json!({"title": "새 제목", "startTime": "14:00", "endTime": "15:00"}),
    )
    .await;
    // PATCH needs the owner header: the helper sends none.
    assert_eq!(status, StatusCode::BAD_REQUEST, "{edited}");
    let (status, edited) =
        patch_series(&app, "alice", id, json!({"title": "새 제목", "startTime": "14:00", "endTime": "15:00"})).await;
    assert_eq!(status, StatusCode::OK, "{edited}");
    let get = |i: usize| {
        let app = &app;
        let occ = occ.clone();
        async move { app.get_json(&format!("/api/bookings/{}", occ[i]), TENANT_ONE).await.1 }
    };
    let seoul = chrono_tz::Asia::Seoul;
    for i in [0, 3] {
        let b = get(i).await;
        assert_eq!(b["title"], "새 제목");
        assert_eq!(utc(&b["startsAt"]).with_timezone(&seoul).hour(), 14);
        assert_eq!(b["version"], 2);
    }
    let moved = get(1).await;
    assert_eq!((moved["title"].as_str(), utc(&moved["startsAt"])), (Some("원래 제목"), utc(&json!(at(8, 16, 0)))));
    let cancelled = get(2).await;
    assert_eq!((cancelled["status"].as_str(), cancelled["title"].as_str()), (Some("CANCELLED"), Some("원래 제목")));

    // Cancel from the fourth on touches only the fourth.
    let (status, c) = post(
        &app,
        &format!("/api/series/{id}/cancel"),
        TENANT_ONE,
        "alice",
        "c",
        json!({"from": get(3).await["startsAt"]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{c}");
    assert_eq!(c["occurrences"].as_array().unwrap().len(), 1);
    assert_eq!(get(3).await["status"], "CANCELLED");
    assert_eq!(get(0).await["status"], "CONFIRMED");
    assert_eq!(get(1).await["status"], "CONFIRMED");
    // Someone else may not touch the series.
    let (status, err) = patch_series(&app, "mallory", id, json!({"title": "x"})).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::FORBIDDEN, Some("NOT_ORGANIZER")));
    let (_, read) = app.get_json(&format!("/api/series/{id}"), TENANT_ONE).await;
    assert_eq!(read["occurrences"].as_array().unwrap().len(), 4, "cancelled ones included");
    app.assert_consistent().await;
}

async fn patch_series(app: &TestApp, owner: &str, id: i64, body: Value) -> (StatusCode, Value) {
    let res = app
        .request(Method::PATCH, &format!("/api/series/{id}"), TENANT_ONE, Some(owner))
        .json(&body)
        .send()
        .await
        .unwrap();
    self::body(res).await
}

#[tokio::test]
async fn a_series_edit_is_all_or_nothing() {
    let app = TestApp::spawn().await;
    let (_, s) =
        create(&app, "alice", "s", series("주간", &["B"], &at(1, 10, 0), &at(1, 11, 0), "FREQ=WEEKLY;COUNT=3")).await;
    let id = s["series"]["id"].as_i64().unwrap();
    // Something sits at 15:00 (Seoul, UTC+9) on the third date, 19:00 there.
    let third = utc(&s["created"][2]["startsAt"]);
    let blocker_start = third - Duration::hours(4);
    let (_, blocker) = body(
        app.create_booking(
            TENANT_ONE,
            "bob",
            "blk",
            &booking("막음", &["B"], &blocker_start.to_rfc3339(), &(blocker_start + Duration::hours(1)).to_rfc3339()),
        )
        .await,
    )
    .await;
    let (status, err) = patch_series(&app, "alice", id, json!({"startTime": "15:00", "endTime": "16:00"})).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("SERIES_CONFLICT")), "{err}");
    assert_eq!(err["details"]["conflicts"][0]["bookingId"], blocker["id"]);
    let (_, read) = app.get_json(&format!("/api/series/{id}"), TENANT_ONE).await;
    for (b, before) in read["occurrences"].as_array().unwrap().iter().zip(s["created"].as_array().unwrap()) {
        assert_eq!((b["startsAt"].clone(), b["version"].clone()), (before["startsAt"].clone(), json!(1)), "unchanged");
    }
    app.assert_consistent().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn overlapping_series_created_at_the_same_instant_never_double_book() {
    let app = Arc::new(TestApp::spawn().await);
    for round in 0..8u32 {
        let skip = round % 2 == 1;
        // Each round two hours after the last: rounds never touch each other.
        let hour = 6 + 2 * round;
        let barrier = Arc::new(tokio::sync::Barrier::new(2));
        let mut tasks = Vec::new();
        for (who, rooms, offset) in [("alice", vec!["A", "B"], 0), ("bob", vec!["B", "C"], 30)] {
            let (app, barrier) = (app.clone(), barrier.clone());
            tasks.push(tokio::spawn(async move {
                let rooms: Vec<&str> = rooms.to_vec();
                let mut b =
                    series("경합", &rooms, &at(1, hour, offset), &at(1, hour + 1, offset), "FREQ=WEEKLY;COUNT=20");
                if skip {
                    b["onConflict"] = json!("skip");
                }
                barrier.wait().await;
                create(&app, who, &format!("race-{round}-{who}"), b).await
            }));
        }
        let results: Vec<(StatusCode, Value)> =
            futures_util::future::join_all(tasks).await.into_iter().map(|r| r.unwrap()).collect();
        for (status, body) in &results {
            assert!(!status.is_server_error(), "round {round}: {body}");
            assert!(!body.to_string().contains("deadlock"), "{body}");
        }
        if skip {
            assert!(results.iter().all(|(s, _)| *s == StatusCode::CREATED), "round {round}: {results:?}");
            let created: usize = results.iter().map(|(_, b)| b["created"].as_array().unwrap().len()).sum();
            let skipped: usize = results.iter().map(|(_, b)| b["skipped"].as_array().unwrap().len()).sum();
            assert_eq!((created, skipped), (20, 20), "each date won by exactly one series");
        } else {
            let mut statuses: Vec<u16> = results.iter().map(|(s, _)| s.as_u16()).collect();
            statuses.sort();
            assert_eq!(statuses, [201, 409], "round {round}: exactly one wins: {results:?}");
            let loser = results.iter().find(|(s, _)| *s == StatusCode::CONFLICT).unwrap();
            assert_eq!(loser.1["code"], "SERIES_CONFLICT");
        }
    }
    app.assert_consistent().await;
}
