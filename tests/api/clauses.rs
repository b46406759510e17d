//! SPEC clauses that had no test of their own (issue 25): deciding a pending
//! booking (the admin's reject form, approve and reject racing), a series in
//! a room that needs approval, the quota on a move, the feed window's
//! bounds, and a rotated calendar token on a second process (the read pool
//! behind the week page, feeds and reports: `read_pool.rs`).

use std::sync::Arc;

use chrono::{DateTime, Duration, DurationRound, Utc};
use reqwest::{Method, StatusCode};
use serde_json::json;
use tokio::sync::Barrier;
use yeyak::clock::Clock;

use crate::helpers::*;
use crate::web::{Browser, Page, ADMIN_PASSWORD, ADMIN_USER};

async fn approval_room(app: &TestApp) {
    add_room(app, json!({"code": "P", "name": "임원 회의실", "approvalRequired": true})).await;
}

async fn pending(app: &TestApp, owner: &str, idem: &str, day: i64) -> i64 {
    let (status, b) = body(
        app.create_booking(TENANT_ONE, owner, idem, &booking("보고", &["P"], &at(day, 10, 0), &at(day, 11, 0))).await,
    )
    .await;
    assert_eq!((status, b["status"].as_str()), (StatusCode::CREATED, Some("PENDING")), "{b}");
    b["id"].as_i64().unwrap()
}

/// The value of `name` in the form posting to an action ending in `action`.
fn form_field(page: &Page, action: &str, name: &str) -> String {
    let form = page.html.split("<form").find(|f| f.contains(&format!("{action}\""))).expect("the form");
    let marker = format!("name=\"{name}\" value=\"");
    form[form.find(&marker).expect("the field") + marker.len()..].split('"').next().unwrap().to_owned()
}

#[tokio::test]
async fn the_admin_reject_form_rejects_with_its_reason_and_frees_the_time() {
    let app = TestApp::spawn().await;
    approval_room(&app).await;
    let id = pending(&app, "alice", "p1", 1).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let page = admin.get("/admin/approvals").await;
    let action = format!("/admin/approvals/{id}/reject");
    let form = [
        ("csrf_token", form_field(&page, &action, "csrf_token")),
        ("idempotency_key", form_field(&page, &action, "idempotency_key")),
        ("reason", "그 시간엔 임원 회의가 있습니다".to_owned()),
    ];
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let done = admin.post(&action, &form).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.html);
    assert!(done.html.contains("거절했습니다"), "{}", done.html);
    // The same form again (a double click) changes nothing more.
    let again = admin.post(&action, &form).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.html);
    let (_, b) = app.get_json(&format!("/api/bookings/{id}"), TENANT_ONE).await;
    assert_eq!((b["status"].as_str(), b["version"].as_i64()), (Some("REJECTED"), Some(2)), "{b}");
    let (_, history) = app.get_json(&format!("/api/bookings/{id}/history"), TENANT_ONE).await;
    let last = history["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["action"].as_str(), last["changes"]["reason"]["after"].as_str()),
        (Some("rejected"), Some("그 시간엔 임원 회의가 있습니다"))
    );
    // The time is free at once.
    let (status, _) = body(
        app.create_booking(TENANT_TWO, "bob", "after", &booking("다음", &["P"], &at(1, 10, 0), &at(1, 11, 0))).await,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    app.assert_consistent().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn approve_and_reject_racing_decide_a_booking_once() {
    let app = TestApp::spawn().await;
    approval_room(&app).await;
    let id = pending(&app, "alice", "p1", 1).await;
    let second = app.another_process().await;
    const RACERS: usize = 12;
    let barrier = Arc::new(Barrier::new(RACERS));
    let racers = (0..RACERS).map(|i| {
        let (barrier, target) = (barrier.clone(), if i % 2 == 0 { &app } else { &second });
        let verb = if i % 4 < 2 { "approve" } else { "reject" };
        async move {
            let request = target
                .request(Method::POST, &format!("/api/bookings/{id}/{verb}"), ADMIN, None)
                .header("Idempotency-Key", format!("decide-{i}"))
                .json(&json!({}));
            barrier.wait().await;
            let (status, b) = body(request.send().await.unwrap()).await;
            (verb, status, b)
        }
    });
    let results = futures_util::future::join_all(racers).await;
    let won: Vec<_> = results.iter().filter(|(_, s, _)| *s == StatusCode::OK).collect();
    assert_eq!(won.len(), 1, "{results:?}");
    for (_, status, b) in results.iter().filter(|(_, s, _)| *s != StatusCode::OK) {
        assert_eq!((*status, b["code"].as_str()), (StatusCode::CONFLICT, Some("INVALID_STATE")), "{b}");
    }
    let (verb, _, decided) = won[0];
    let expected = if *verb == "approve" { "CONFIRMED" } else { "REJECTED" };
    assert_eq!((decided["status"].as_str(), decided["version"].as_i64()), (Some(expected), Some(2)));
    let (_, b) = app.get_json(&format!("/api/bookings/{id}"), TENANT_ONE).await;
    assert_eq!(b["status"], expected);
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) FROM booking_event WHERE reservation_id = {id} AND action IN ('approved', 'rejected')"
        ))
        .await,
        1,
        "one decision recorded"
    );
    assert_eq!(
        app.count(&format!("SELECT count(*) FROM notification_outbox WHERE delivery_id = 'booking-{id}-v2-changed'"))
            .await,
        1
    );
    app.assert_consistent().await;
}

#[tokio::test]
async fn a_series_in_an_approval_room_waits_and_each_occurrence_is_decided_on_its_own() {
    let app = TestApp::spawn().await;
    approval_room(&app).await;
    let (status, made) = post(
        &app,
        "/api/series",
        TENANT_ONE,
        "alice",
        "s1",
        json!({"title": "주간 보고", "rooms": ["P"], "startsAt": at(1, 9, 0), "endsAt": at(1, 10, 0),
               "recurrence": "FREQ=WEEKLY;COUNT=3"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let ids: Vec<i64> = made["created"].as_array().unwrap().iter().map(|b| b["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), 3);
    for id in &ids {
        let (_, b) = app.get_json(&format!("/api/bookings/{id}"), TENANT_ONE).await;
        assert_eq!(b["status"], "PENDING", "every occurrence waits: {b}");
    }
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let page = admin.get("/admin/approvals").await;
    for id in &ids {
        assert!(page.html.contains(&format!("/admin/approvals/{id}/approve")), "occurrence {id} is listed");
    }
    // Approving one occurrence confirms that one only.
    let res = app
        .request(Method::POST, &format!("/api/bookings/{}/approve", ids[1]), ADMIN, None)
        .header("Idempotency-Key", "a1")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let statuses: Vec<String> = futures_util::future::join_all(ids.iter().map(|id| {
        let app = &app;
        async move {
            app.get_json(&format!("/api/bookings/{id}"), TENANT_ONE).await.1["status"].as_str().unwrap().to_owned()
        }
    }))
    .await;
    assert_eq!(statuses, ["PENDING", "CONFIRMED", "PENDING"]);
    // An admin's series in the same room is confirmed at once.
    let (status, admins) = post(
        &app,
        "/api/series",
        ADMIN,
        "ops",
        "s2",
        json!({"title": "관리자 반복", "rooms": ["P"], "startsAt": at(2, 9, 0), "endsAt": at(2, 10, 0),
               "recurrence": "FREQ=WEEKLY;COUNT=2"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{admins}");
    assert!(admins["created"].as_array().unwrap().iter().all(|b| b["status"] == "CONFIRMED"), "{admins}");
    app.assert_consistent().await;
}

#[tokio::test]
async fn a_move_at_the_quota_is_allowed_and_never_counts_the_booking_twice() {
    let app = TestApp::spawn_with(|c| c.max_active_bookings = Some(2)).await;
    let book = |idem: &'static str, day: i64| {
        let app = &app;
        async move {
            body(
                app.create_booking(
                    TENANT_ONE,
                    "alice",
                    idem,
                    &booking("할당", &["A"], &at(day, 9, 0), &at(day, 10, 0)),
                )
                .await,
            )
            .await
        }
    };
    let (_, first) = book("q1", 1).await;
    let (status, _) = book("q2", 2).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, refused) = book("q3", 3).await;
    assert_eq!((status, refused["code"].as_str()), (StatusCode::CONFLICT, Some("QUOTA_EXCEEDED")), "{refused}");
    // At the quota, moving one of the two is a move, not a third booking.
    let id = first["id"].as_i64().unwrap();
    let (status, moved) = body(
        app.move_booking(
            TENANT_ONE,
            "alice",
            id,
            Some("m1"),
            &json!({"startsAt": at(4, 9, 0), "endsAt": at(4, 10, 0)}),
        )
        .await,
    )
    .await;
    assert_eq!((status, moved["version"].as_i64()), (StatusCode::OK, Some(2)), "{moved}");
    // And after the move the quota still holds.
    let (status, refused) = book("q4", 5).await;
    assert_eq!((status, refused["code"].as_str()), (StatusCode::CONFLICT, Some("QUOTA_EXCEEDED")), "{refused}");
    // A booking that has ended no longer counts: once the first day is over,
    // alice may book again.
    let day_three: DateTime<Utc> = at(3, 0, 0).parse().unwrap();
    app.clock.set(day_three);
    let (status, third) = book("q5", 6).await;
    assert_eq!(status, StatusCode::CREATED, "{third}");
    app.assert_consistent().await;
}

fn events_of(ics: &str) -> Vec<String> {
    crate::calendar::parse_ics(ics).iter().map(|e| e["summary"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn feeds_run_from_thirty_days_back_to_three_hundred_sixty_five_ahead() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let t0 = app.clock.now().duration_trunc(Duration::hours(1)).unwrap() + Duration::hours(2);
    // Admins are exempt from the horizon; every booking is made while it is
    // still in the future, then the clock moves 40 days on.
    let later = t0 + Duration::days(40);
    let cases = [
        ("31 days back", later - Duration::days(31)),
        ("29 days back", later - Duration::days(29)),
        ("364 days ahead", later + Duration::days(364)),
        ("366 days ahead", later + Duration::days(366)),
    ];
    for (i, (title, start)) in cases.iter().enumerate() {
        let (status, b) = body(
            app.create_booking(
                ADMIN,
                "ops",
                &format!("w{i}"),
                &booking(title, &["A"], &start.to_rfc3339(), &(*start + Duration::minutes(30)).to_rfc3339()),
            )
            .await,
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{b}");
    }
    let page = admin.get("/account").await;
    let token = page.feed_token();
    app.clock.set(later);
    let room = app.http.get(app.url(&format!("/ical/rooms/A.ics?token={token}"))).send().await.unwrap();
    assert_eq!(room.status(), StatusCode::OK);
    let mut shown = events_of(&room.text().await.unwrap());
    shown.sort();
    assert_eq!(shown, ["29 days back", "364 days ahead"]);
}

#[tokio::test]
async fn a_rotated_calendar_token_is_refused_at_once_by_another_process() {
    let app = TestApp::spawn().await;
    let second = app.another_process().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let page = admin.get("/account").await;
    let feed = Page::feed_token;
    let old = feed(&page);
    let on_second = |token: String| {
        let second = &second;
        async move { second.http.get(second.url(&format!("/ical/me.ics?token={token}"))).send().await.unwrap().status() }
    };
    assert_eq!(on_second(old.clone()).await, StatusCode::OK, "the second process knows the token");
    let rotated = admin.post("/account/calendar-token", &[("csrf_token", &page.field("csrf_token"))]).await;
    assert_eq!(rotated.status, StatusCode::OK);
    let new = feed(&rotated);
    assert_eq!(on_second(old).await, StatusCode::NOT_FOUND, "the old token is dead on the other process too");
    assert_eq!(on_second(new).await, StatusCode::OK);
}
