//! The consistency check reports 0 on a healthy database and names the rows
//! when a copy is broken by hand.

use reqwest::StatusCode;

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
