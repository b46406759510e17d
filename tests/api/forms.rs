//! Every state-changing form route, table-driven (issue 18): the list the
//! server checks CSRF against equals the POST routes registered in the
//! source, and each of them refuses a missing token and a token of another
//! session (with that session's nonce planted) — changing nothing.

use std::collections::BTreeSet;

use reqwest::StatusCode;

use crate::helpers::*;
use crate::web::{tomorrow, Browser, ADMIN_PASSWORD, ADMIN_USER};

/// Every `.route("…", web::post()…)` path in the crate's source.
fn registered_post_routes() -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut stack = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let mut in_file = 0;
            for piece in flat.split(".route(\"").skip(1) {
                let Some((route, rest)) = piece.split_once('"') else { continue };
                if rest.trim_start_matches(',').trim_start().starts_with("web::post()") {
                    found.insert(route.to_owned());
                    in_file += 1;
                }
            }
            // A POST registered some other way would escape the list.
            assert_eq!(
                flat.matches("web::post()").count(),
                in_file,
                "{}: register POST routes as .route(\"path\", web::post()…)",
                path.display()
            );
        }
    }
    found
}

#[test]
fn the_form_list_is_exactly_the_registered_post_routes() {
    let listed: BTreeSet<String> =
        yeyak::web::FORM_ROUTES.iter().chain(yeyak::web::OTHER_POST_ROUTES).map(|s| (*s).to_owned()).collect();
    assert_eq!(registered_post_routes(), listed, "a POST route must be listed in yeyak::web::FORM_ROUTES");
}

/// The tables a refused request could touch.
const TABLES: &[&str] = &[
    "reservation",
    "booking_series",
    "booking_event",
    "staff_user",
    "staff_session",
    "api_key",
    "room",
    "room_display_token",
    "app_password",
    "area",
    "holiday_calendar",
    "holiday",
];

#[tokio::test]
async fn every_form_refuses_a_missing_token_and_another_sessions_token() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    let signed = admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let session = signed.cookie_value("yeyak_session").unwrap();
    let nonce = signed.cookie_value("yeyak_csrf").unwrap();
    // Something for each `{id}` and `{code}` to point at.
    let date = tomorrow(&app);
    let booked = admin.book(&date, "표적", "10:00", "11:00", &["A"]).await;
    let booking = crate::web::booked_id(&booked);
    let staff_page = admin.get("/admin/staff").await;
    admin
        .post(
            "/admin/staff",
            &[
                ("username", "other"),
                ("display_name", "other"),
                ("password", "correct-horse-1"),
                ("csrf_token", &staff_page.field("csrf_token")),
            ],
        )
        .await;
    let person: i64 =
        app.db().await.query_one("SELECT id FROM staff_user WHERE username = 'other'", &[]).await.unwrap().get(0);
    let (_, key) =
        post(&app, "/api/admin/keys", ADMIN, "admin", "k", serde_json::json!({"tenant": "x", "role": "admin"})).await;
    let key_id = key["id"].as_i64().unwrap();
    // Another session's nonce and token (an admin too: the token is valid for them).
    let other = Browser::new(&app);
    let other_signed = other.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let other_nonce = other_signed.cookie_value("yeyak_csrf").unwrap();
    let other_token = other.get("/account").await.field("csrf_token");

    let before = fingerprint(&app, TABLES).await;
    let fields: Vec<(&str, String)> = vec![
        ("title", "위조".into()),
        ("date", date.clone()),
        ("start", "12:00".into()),
        ("end", "13:00".into()),
        ("rooms", "B".into()),
        ("idempotency_key", "forged-1".into()),
        ("scope", "series".into()),
        ("reason", "forged".into()),
        ("username", "forged".into()),
        ("display_name", "forged".into()),
        ("password", "forged-password-1".into()),
        ("current_password", ADMIN_PASSWORD.into()),
        ("new_password", "forged-password-1".into()),
        ("is_admin", "1".into()),
        ("tenant", "forged".into()),
        ("role", "admin".into()),
        ("code", "Z9".into()),
        ("name", "위조실".into()),
        ("area", "본관".into()),
        ("capacity", "4".into()),
        ("cancel_future_bookings", "1".into()),
    ];
    for route in yeyak::web::FORM_ROUTES {
        let path = route
            .replace("{code}", "A")
            .replace("/staff/{id}", &format!("/staff/{person}"))
            .replace("/keys/{id}", &format!("/keys/{key_id}"))
            .replace("{id}", &booking.to_string());
        for (case, cookie, token) in [
            ("no token", format!("yeyak_session={session}; yeyak_csrf={nonce}"), None),
            (
                "another session's token",
                format!("yeyak_session={session}; yeyak_csrf={other_nonce}"),
                Some(other_token.clone()),
            ),
        ] {
            let mut form = fields.clone();
            if let Some(t) = token {
                form.push(("csrf_token", t));
            }
            let res = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap()
                .post(app.url(&path))
                .header("Cookie", cookie)
                .form(&form)
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), StatusCode::FORBIDDEN, "{path} with {case}");
        }
    }
    assert_eq!(fingerprint(&app, TABLES).await, before, "nothing changed");
    assert_eq!(admin.get("/my").await.status, StatusCode::OK, "the session survived a forged sign-out");
}
