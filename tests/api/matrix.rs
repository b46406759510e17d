//! Role × route and owner × route matrices (issue 18). The admin routes are
//! read from the served OpenAPI document, so a new admin route is tried here
//! without editing this file; the form routes come from `web::FORM_ROUTES`.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::body as body_of;
use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

/// The tables a refused request could touch.
const TABLES: &[&str] = &[
    "reservation",
    "booking_series",
    "staff_user",
    "api_key",
    "room",
    "room_display_token",
    "capacity_resource",
    "capacity_hold",
    "waitlist_entry",
    "capacity_offer",
    "notification_outbox",
];

#[tokio::test]
async fn every_admin_route_of_the_document_refuses_integration_keys_and_anonymous_callers() {
    let app = TestApp::spawn().await;
    let (_, doc) = app.get_json("/api/openapi.json", TENANT_ONE).await;
    let mut tried = 0;
    let before = fingerprint(&app, TABLES).await;
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            if op["description"] != "needs an API key with the admin role" {
                continue;
            }
            let concrete = path
                .split('/')
                .map(|seg| match seg {
                    "{code}" => "A",
                    s if s.starts_with('{') => "1",
                    s => s,
                })
                .collect::<Vec<_>>()
                .join("/");
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            for (key, expected, code) in [
                (Some(TENANT_ONE), StatusCode::FORBIDDEN, "FORBIDDEN"),
                (None, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED"),
            ] {
                let mut req = app
                    .http
                    .request(method.clone(), app.url(&concrete))
                    .header("X-Reservation-Owner", "mallory")
                    .header("Idempotency-Key", format!("m-{tried}"))
                    .json(&json!({"code": "Z1", "name": "x", "capacity": 1, "tenant": "x", "role": "admin"}));
                if let Some(key) = key {
                    req = req.bearer_auth(key);
                }
                let (status, body) = body_of(req.send().await.unwrap()).await;
                assert_eq!((status, body["code"].as_str()), (expected, Some(code)), "{method} {concrete}: {body}");
            }
            tried += 1;
        }
    }
    assert!(tried >= 12, "the document marks the admin routes ({tried} found)");
    assert_eq!(fingerprint(&app, TABLES).await, before, "refused calls change nothing");
}

#[tokio::test]
async fn holds_and_offers_refuse_other_owners_and_other_tenants() {
    let app = TestApp::spawn().await;
    let (_, hold) = post(&app, "/api/resources/1/holds", TENANT_ONE, "alice", "h1", json!({})).await;
    let hold_id = hold["id"].as_i64().unwrap();
    let (_, entry) = post(&app, "/api/resources/1/waitlist", TENANT_ONE, "bob", "w1", json!({})).await;
    let before = fingerprint(&app, TABLES).await;
    for (key, owner) in [(TENANT_ONE, "mallory"), (TENANT_TWO, "alice")] {
        for action in ["cancel", "extend", "confirm"] {
            let (status, body) = post(
                &app,
                &format!("/api/holds/{hold_id}/{action}"),
                key,
                owner,
                &format!("{key}{owner}{action}"),
                if action == "extend" { json!({"extendBySeconds": 10}) } else { json!({}) },
            )
            .await;
            assert_eq!(
                (status, body["code"].as_str()),
                (StatusCode::FORBIDDEN, Some("OWNER_MISMATCH")),
                "{action} by {owner} of {key}"
            );
        }
        let (status, _) =
            post(&app, &format!("/api/waitlist/{}/cancel", entry["id"]), key, owner, "wc", json!({})).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
    assert_eq!(fingerprint(&app, TABLES).await, before);
    // Alice lets go; Bob is offered the unit. Nobody else may decline or accept it.
    post(&app, &format!("/api/holds/{hold_id}/cancel"), TENANT_ONE, "alice", "c", json!({})).await;
    let res = app.request(Method::GET, &format!("/api/waitlist/{}", entry["id"]), TENANT_ONE, Some("bob")).send().await;
    let offer: Value = body_of(res.unwrap()).await.1;
    let offer_id = offer["offerId"].as_i64().unwrap();
    let before = fingerprint(&app, TABLES).await;
    for (key, owner) in [(TENANT_ONE, "mallory"), (TENANT_TWO, "bob")] {
        for action in ["decline", "accept"] {
            let (status, body) = post(
                &app,
                &format!("/api/offers/{offer_id}/{action}"),
                key,
                owner,
                &format!("o{key}{owner}{action}"),
                json!({}),
            )
            .await;
            assert_eq!((status, body["code"].as_str()), (StatusCode::FORBIDDEN, Some("OWNER_MISMATCH")), "{action}");
        }
    }
    assert_eq!(fingerprint(&app, TABLES).await, before);
    app.assert_consistent().await;
}

#[tokio::test]
async fn staff_who_are_not_admins_are_refused_every_admin_page_and_form() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    crate::accounts::add_person(&admin, "kim", "").await;
    let kim = Browser::new(&app);
    kim.sign_in("kim", "correct-horse-1").await;
    let token = kim.get("/account").await.field("csrf_token");
    for page in ["/admin/staff", "/admin/rooms", "/admin/rooms/A", "/admin/approvals", "/admin/consistency"] {
        assert_eq!(kim.get(page).await.status, StatusCode::FORBIDDEN, "{page}");
    }
    let before = fingerprint(&app, TABLES).await;
    let fields = [
        ("csrf_token", token.as_str()),
        ("username", "kim2"),
        ("display_name", "x"),
        ("password", "correct-horse-1"),
        ("is_admin", "1"),
        ("tenant", "x"),
        ("role", "admin"),
        ("code", "Z1"),
        ("name", "x"),
        ("area", "본관"),
        ("capacity", "4"),
        ("reason", "x"),
        ("idempotency_key", "k"),
        ("cancel_future_bookings", "1"),
    ];
    let mut tried = 0;
    for route in yeyak::web::FORM_ROUTES.iter().filter(|r| r.starts_with("/admin/")) {
        let path = route.replace("{code}", "A").replace("{id}", "1");
        let out = kim.post(&path, &fields).await;
        assert_eq!(out.status, StatusCode::FORBIDDEN, "{path}");
        tried += 1;
    }
    assert!(tried >= 12);
    assert_eq!(fingerprint(&app, TABLES).await, before, "refused forms change nothing");
}
