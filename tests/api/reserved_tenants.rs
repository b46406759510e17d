//! API key tenants `staff` and `display` are reserved (SPEC §20): refused
//! with `RESERVED_TENANT` by the JSON door, the form and the configuration.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

#[tokio::test]
async fn the_tenants_staff_and_display_cannot_be_given_to_a_key() {
    let app = TestApp::spawn().await;
    // The JSON door.
    for (i, tenant) in ["staff", "display", "Staff"].into_iter().enumerate() {
        let (status, err) = post(
            &app,
            "/api/admin/keys",
            ADMIN,
            "admin",
            &format!("k{i}"),
            json!({"tenant": tenant, "role": "integration"}),
        )
        .await;
        assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("RESERVED_TENANT")), "{err}");
    }
    // The form door.
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let page = admin.get("/admin/staff").await;
    let made = admin
        .post(
            "/admin/keys",
            &[("tenant", "display"), ("role", "admin"), ("label", "x"), ("csrf_token", &page.field("csrf_token"))],
        )
        .await;
    assert_eq!(made.status, StatusCode::BAD_REQUEST, "{}", made.html);
    assert!(!made.html.contains("<code>yk_"), "no secret was shown");
    assert_eq!(app.count("SELECT count(*) FROM api_key").await, 0, "no key was stored");
    // Configuration: `YEYAK_API_KEYS` naming a reserved tenant does not parse.
    for raw in
        ["staff:admin:a-long-enough-secret-123456", "ok:integration:a-long-secret-1234567,display:admin:xyz12345678"]
    {
        use clap::Parser;
        let err = yeyak::config::Config::try_parse_from(["yeyak", "--api-keys", raw]).expect_err(raw).to_string();
        assert!(err.contains("RESERVED_TENANT") && err.contains("reserved"), "{err}");
    }
    // The error code is documented.
    let (_, doc) = app.get_json("/api/openapi.json", TENANT_ONE).await;
    let codes = doc["components"]["schemas"]["ErrorCode"]["enum"].as_array().unwrap();
    assert!(codes.contains(&json!("RESERVED_TENANT")));
}
