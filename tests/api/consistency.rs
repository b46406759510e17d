//! The consistency check reports 0 on a healthy database and names the rows
//! when a copy is broken by hand.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

#[tokio::test]
async fn broken_copies_and_orphans_are_reported_with_their_rows() {
    let app = TestApp::spawn().await;
    let b: serde_json::Value = app
        .create_booking(TENANT_ONE, "alice", "k", &booking("회의", &["B", "C"], &at(1, 10, 0), &at(1, 11, 0)))
        .await
        .json()
        .await
        .unwrap();
    let id = b["id"].as_i64().unwrap();
    app.assert_consistent().await;

    // Seed 002 §사본: cancelling only the parent by hand leaves the copies active.
    let db = app.db().await;
    db.execute("UPDATE reservation SET cancelled_at = now(), status = 'CANCELLED' WHERE id = $1", &[&id])
        .await
        .unwrap();
    db.execute(
        "INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at)
         VALUES ('orphan', 'x', 'x', now() + interval '1 day', now() + interval '1 day 1 hour', now(), now())",
        &[],
    )
    .await
    .unwrap();

    let (ok, report) = app.consistency().await;
    assert!(!ok);
    let check = |name: &str| report["checks"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap().clone();
    let copies = check("reservation_room_copy_mismatch");
    assert_eq!(copies["count"], 2);
    let rooms: Vec<&str> = copies["samples"].as_array().unwrap().iter().map(|s| s["room"].as_str().unwrap()).collect();
    assert_eq!(rooms.len(), 2);
    assert!(rooms.contains(&"B") && rooms.contains(&"C"));
    assert_eq!(copies["samples"][0]["reservation_id"], id);
    let orphans = check("reservation_without_rooms");
    assert_eq!(orphans["count"], 1);
    assert_eq!(orphans["samples"][0]["title"], "orphan");
}

#[tokio::test]
async fn the_consistency_route_is_for_admins_only() {
    let app = TestApp::spawn().await;
    let (status, err) = app.get_json("/api/admin/consistency", TENANT_ONE).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(err["code"], "FORBIDDEN");
    let res = app.http.get(app.url("/api/admin/consistency")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_api_and_the_page_list_every_check_at_zero_too() {
    let app = TestApp::spawn().await;
    let (ok, report) = app.consistency().await;
    assert!(ok, "{report:#}");
    let names: Vec<&str> = report["checks"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    let listed: Vec<&str> = yeyak::consistency::CHECKS.iter().map(|c| c.name).collect();
    assert_eq!(names, listed);
    for check in report["checks"].as_array().unwrap() {
        assert_eq!((check["count"].as_i64(), check["samples"].as_array().map(Vec::len)), (Some(0), Some(0)));
        assert!(!check["description"].as_str().unwrap().is_empty());
    }

    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let page = admin.get("/admin/consistency").await;
    assert_eq!(page.status, StatusCode::OK);
    for name in listed {
        assert!(page.html.contains(&format!("</span>{name}</th>")), "{name} on the page");
    }
    assert_eq!(page.html.matches("<tr class=\"ok\">").count(), yeyak::consistency::CHECKS.len());
}

/// States next to what the history and series checks look for, all made by
/// the API: none is a violation.
#[tokio::test]
async fn legitimate_states_next_to_the_history_and_series_rules_stay_clean() {
    let app = TestApp::spawn().await;
    // An approved booking moved in a room that needs approval waits again,
    // with its earlier decision kept; then the room stops needing approval
    // and the booking stays PENDING (the admin still decides it).
    add_room(&app, serde_json::json!({"code": "P", "name": "임원 회의실", "approvalRequired": true})).await;
    let made = app.create_booking(TENANT_ONE, "kim", "p", &booking("임원", &["P"], &at(1, 9, 0), &at(1, 10, 0))).await;
    let (status, pending) = body(made).await;
    assert_eq!((status, pending["status"].as_str()), (StatusCode::CREATED, Some("PENDING")), "{pending}");
    let id = pending["id"].as_i64().unwrap();
    let (status, approved) = post(&app, &format!("/api/bookings/{id}/approve"), ADMIN, "ops", "ap", json!({})).await;
    assert_eq!((status, approved["status"].as_str()), (StatusCode::OK, Some("CONFIRMED")), "{approved}");
    let later = json!({"startsAt": at(1, 11, 0), "endsAt": at(1, 12, 0)});
    let (status, moved) = body(app.move_booking(TENANT_ONE, "kim", id, None, &later).await).await;
    assert_eq!((status, moved["status"].as_str()), (StatusCode::OK, Some("PENDING")), "{moved}");
    let (status, room) =
        send(&app, reqwest::Method::PATCH, "/api/rooms/P", ADMIN, Some("pa"), json!({"approvalRequired": false})).await;
    assert_eq!(status, StatusCode::OK, "{room}");

    // Series edited to a later local time start after their first
    // occurrence's RECURRENCE-ID, on the same date; one ends (UNTIL) on the
    // day it starts (19:00 and 21:00 in Seoul, the series' zone).
    let first_day = (test_now() + chrono::Duration::days(1)).format("%Y%m%d");
    let series =
        [("s1", format!("FREQ=DAILY;UNTIL={first_day}"), 10, "A"), ("s2", "FREQ=DAILY;COUNT=3".into(), 12, "B")];
    for (idem, rule, hour, room) in series {
        let s = json!({"title": "정례", "rooms": [room], "startsAt": at(1, hour, 0), "endsAt": at(1, hour + 1, 0),
                       "recurrence": rule});
        let (status, made) = post(&app, "/api/series", TENANT_ONE, "kim", idem, s).await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        let sid = made["series"]["id"].as_i64().unwrap();
        let res = app
            .request(reqwest::Method::PATCH, &format!("/api/series/{sid}"), TENANT_ONE, Some("kim"))
            .json(&json!({"startTime": "23:00", "endTime": "23:30"}))
            .send()
            .await
            .unwrap();
        let (status, edited) = body(res).await;
        assert_eq!(status, StatusCode::OK, "{edited}");
        assert!(edited["series"]["startsAt"].as_str() > made["series"]["startsAt"].as_str(), "{edited}");
    }
    assert_eq!(app.count("SELECT count(*) FROM reservation WHERE series_id IS NOT NULL").await, 1 + 3);
    app.assert_consistent().await;
}
