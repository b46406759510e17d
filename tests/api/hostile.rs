//! Hostile input and isolation between tenants and owners (part of the
//! reliability drills; more in later work).

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::body as body_of;
use crate::helpers::*;

#[tokio::test]
async fn another_tenant_cannot_read_replay_cancel_or_accept() {
    let app = TestApp::spawn().await;
    // Tenant one's alice holds the unit; tenant one's bob waits and is offered it.
    let (_, hold) = post(&app, "/api/resources/1/holds", TENANT_ONE, "alice", "h", json!({})).await;
    let (_, entry) = post(&app, "/api/resources/1/waitlist", TENANT_ONE, "bob", "w", json!({})).await;
    post(&app, &format!("/api/holds/{}/cancel", hold["id"]), TENANT_ONE, "alice", "c", json!({})).await;
    let offer_id = {
        let res = app
            .request(reqwest::Method::GET, &format!("/api/waitlist/{}", entry["id"]), TENANT_ONE, Some("bob"))
            .send()
            .await
            .unwrap();
        body_of(res).await.1["offerId"].as_i64().unwrap()
    };
    // Tenant two, using the same owner names and the same keys.
    for (path, owner) in [
        (format!("/api/holds/{}", hold["id"]), "alice"),
        (format!("/api/waitlist/{}", entry["id"]), "bob"),
        (format!("/api/offers/{offer_id}"), "bob"),
    ] {
        let res = app.request(reqwest::Method::GET, &path, TENANT_TWO, Some(owner)).send().await.unwrap();
        let (status, body) = body_of(res).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::FORBIDDEN, Some("OWNER_MISMATCH")), "{path}");
    }
    let (status, _) =
        post(&app, &format!("/api/offers/{offer_id}/accept"), TENANT_TWO, "bob", "steal", json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) =
        post(&app, &format!("/api/waitlist/{}/cancel", entry["id"]), TENANT_TWO, "bob", "w2", json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // Reusing tenant one's idempotency key replays nothing of theirs: it is a new command for tenant two.
    let (status, body) = post(&app, "/api/resources/1/holds", TENANT_TWO, "alice", "h", json!({})).await;
    assert_ne!(body, hold);
    assert_eq!(status, StatusCode::CONFLICT, "the unit is offered to bob: {body}");
    // Nothing changed for tenant one's bob.
    let res = app
        .request(reqwest::Method::GET, &format!("/api/offers/{offer_id}"), TENANT_ONE, Some("bob"))
        .send()
        .await
        .unwrap();
    assert_eq!(body_of(res).await.1["state"], "ACTIVE");
    app.assert_consistent().await;
}

#[tokio::test]
async fn integration_keys_are_refused_on_admin_routes() {
    let app = TestApp::spawn().await;
    for (method, path) in [
        (reqwest::Method::GET, "/api/admin/consistency"),
        (reqwest::Method::GET, "/api/admin/reports/utilisation.csv"),
        (reqwest::Method::GET, "/api/admin/reports/bookings.csv"),
        (reqwest::Method::POST, "/api/admin/sweep"),
        (reqwest::Method::POST, "/api/admin/outbox/x/redrive"),
        (reqwest::Method::POST, "/api/resources"),
    ] {
        let res = app
            .request(method.clone(), path, TENANT_ONE, Some("ops"))
            .header("Idempotency-Key", "k")
            .json(&json!({"code": "x", "name": "x", "capacity": 1}))
            .send()
            .await
            .unwrap();
        let (status, body) = body_of(res).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")), "{method} {path}");
    }
    assert_eq!(app.count("SELECT count(*) FROM capacity_resource").await, 1);
}

#[tokio::test]
async fn malformed_transport_is_refused_cleanly() {
    let app = TestApp::spawn().await;
    let raw = |body: Vec<u8>| {
        app.request(reqwest::Method::POST, "/api/bookings", TENANT_ONE, Some("alice"))
            .header("Idempotency-Key", "raw")
            .header("Content-Type", "application/json")
            .body(body)
            .send()
    };
    let (status, body) = body_of(raw(b"{\"title\": \"\xff\xfe\"}".to_vec()).await.unwrap()).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::BAD_REQUEST, Some("MALFORMED_REQUEST")));
    let (status, _) = body_of(raw(b"{\"quantity\": 1e400}".to_vec()).await.unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let huge = app
        .request(reqwest::Method::POST, "/api/resources/1/holds", TENANT_ONE, Some("alice"))
        .header("Idempotency-Key", "q")
        .json(&json!({"quantity": 99999999999999999999u128.to_string()}))
        .send()
        .await
        .unwrap();
    assert_eq!(huge.status(), StatusCode::BAD_REQUEST);
    let long_header = app
        .request(reqwest::Method::GET, "/api/rooms", TENANT_ONE, None)
        .header("X-Filler", "x".repeat(64 * 1024))
        .send()
        .await
        .unwrap();
    assert_eq!(long_header.status(), StatusCode::BAD_REQUEST);
    for h in ["x-request-id", "content-security-policy", "x-content-type-options", "cache-control"] {
        assert!(long_header.headers().contains_key(h), "{h} on the refusal too");
    }
    for path in ["/static/../Cargo.toml", "/static/%2e%2e/Cargo.toml", "/static/..%2fsrc/main.rs"] {
        let res = app.http.get(app.url(path)).send().await.unwrap();
        let status = res.status();
        let text = res.text().await.unwrap();
        assert!(status.is_client_error(), "{path}: {status}");
        assert!(!text.contains("[package]") && !text.contains("fn main"), "{path} leaked a file");
    }
    assert_eq!(
        app.count("SELECT count(*) FROM reservation").await + app.count("SELECT count(*) FROM capacity_hold").await,
        0
    );
}

#[tokio::test]
async fn every_command_route_refuses_broken_bodies_with_its_code_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let doc: Value = app.http.get(app.url("/api/openapi.json")).send().await.unwrap().json().await.unwrap();
    let tables = "(SELECT count(*) FROM reservation) + (SELECT count(*) FROM capacity_hold) + (SELECT count(*) FROM waitlist_entry)
                  + (SELECT count(*) FROM capacity_resource) + (SELECT count(*) FROM idempotency_record)
                  + (SELECT count(*) FROM room WHERE active) + (SELECT count(*) FROM area)
                  + (SELECT count(*) FROM holiday_calendar) + (SELECT count(*) FROM holiday) + (SELECT count(*) FROM area_plan)
                  + (SELECT count(*) FROM staff_user) + (SELECT count(*) FROM delegation)";
    let before = app.count(&format!("SELECT {tables}")).await;
    let mut checked = 0;
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for method in ops.as_object().unwrap().keys().filter(|m| ["post", "patch", "put"].contains(&m.as_str())) {
            let concrete = path
                .replace("{id}", "1")
                .replace("{code}", "A")
                .replace("{delivery_id}", "x")
                .replace("{username}", "admin");
            let send = |ct: &'static str, body: Vec<u8>| {
                app.http
                    .request(reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(), app.url(&concrete))
                    .bearer_auth(ADMIN)
                    .header("X-Reservation-Owner", "fuzzer")
                    .header("Idempotency-Key", format!("bad-{}", uuid::Uuid::new_v4()))
                    .header("Content-Type", ct)
                    .body(body)
                    .send()
            };
            let cases: [(&str, Vec<u8>, u16, &str); 5] = [
                ("application/json", b"{\"broken\": ".to_vec(), 400, "MALFORMED_REQUEST"),
                ("application/json", b"{\"surely_unknown_field\": 1}".to_vec(), 400, "MALFORMED_REQUEST"),
                ("application/json", b"[1, 2, 3]".to_vec(), 400, "MALFORMED_REQUEST"),
                ("text/plain", b"{}".to_vec(), 415, "UNSUPPORTED_MEDIA_TYPE"),
                ("application/json", vec![b' '; 1 << 20], 413, "PAYLOAD_TOO_LARGE"),
            ];
            for (ct, body, status, code) in cases {
                let res = send(ct, body).await.unwrap();
                let got = res.status().as_u16();
                let (_, answer) = body_of(res).await;
                // Routes without a body (redrive, key revocation) answer for
                // the missing delivery or key first; erase, for the
                // break-glass admin it never touches.
                if ops[method.as_str()].get("requestBody").is_none() {
                    if path.ends_with("/erase") {
                        assert_eq!((got, answer["code"].as_str()), (409, Some("BREAK_GLASS_ACCOUNT")), "{path}");
                    } else {
                        assert_eq!(got, 404, "{method} {path}");
                    }
                    continue;
                }
                // A body of raw bytes (a floor plan, SPEC §28) is an image or
                // nothing: anything else, JSON included, is INVALID_IMAGE.
                if ops[method.as_str()]["requestBody"]["content"].get("application/json").is_none() {
                    assert_eq!(
                        (got, answer["code"].as_str()),
                        (400, Some("INVALID_IMAGE")),
                        "{method} {path}: {answer}"
                    );
                    continue;
                }
                assert_eq!((got, answer["code"].as_str()), (status, Some(code)), "{method} {path} with {ct}: {answer}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 34, "every POST, PATCH and PUT route of the document");
    assert_eq!(app.count(&format!("SELECT {tables}")).await, before, "no refused request changed anything");
}
