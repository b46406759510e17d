//! Company sign-in by OpenID Connect against a real provider (SPEC §16):
//! panva's `oidc-provider` on a free port, its own login and consent
//! pages walked over HTTP, RS256 and ES256 ID tokens, groups from
//! userinfo, key rotation, sign-out at the provider, a provider that is
//! down at start.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;
use crate::sso_support::*;
use crate::web::{ADMIN_PASSWORD, ADMIN_USER};

async fn session_count(app: &TestApp) -> i64 {
    app.count("SELECT count(*) FROM staff_session").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_signs_in_at_the_provider_gets_a_linked_account_and_signs_out_there() {
    let provider = Provider::start().await;
    let app = app_with(&provider, "yeyak", |_| {}).await;
    let login = app.http.get(app.url("/login?next=/my")).send().await.unwrap().text().await.unwrap();
    assert!(login.contains("회사 계정으로 로그인"), "{login}");
    assert!(login.contains("href=\"/auth/oidc/start?next=%2Fmy\""), "the link carries next: {login}");

    let browser = Browser::new();
    let res = browser.sign_in(&app, "alice", "/my").await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.url().path(), "/my", "next is followed after the callback");
    assert!(res.text().await.unwrap().contains("Alice Kim"), "signed in under the provider's name");
    assert_eq!(
        linked_account(&app, "alice").await,
        Some(("alice".into(), true, Some("alice@example.com".into()), "oidc".into())),
        "groups from userinfo made her admin"
    );
    let issuer: String = app.db().await.query_one("SELECT issuer FROM staff_identity", &[]).await.unwrap().get(0);
    assert_eq!(issuer, provider.issuer);

    // Sign-out ends yeyak's session and sends the browser to the provider with the ID token.
    let page = browser.follow.get(app.url("/account")).send().await.unwrap().text().await.unwrap();
    assert!(!page.contains("/account/password"), "no password to change for a company account");
    let csrf = field(&page, "csrf_token");
    let res = browser.manual.post(app.url("/logout")).form(&[("csrf_token", csrf.as_str())]).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let to = url::Url::parse(res.headers()["location"].to_str().unwrap()).unwrap();
    assert!(to.as_str().starts_with(&format!("{}/session/end", provider.issuer)), "{to}");
    let q: std::collections::HashMap<_, _> = to.query_pairs().into_owned().collect();
    assert_eq!(q["post_logout_redirect_uri"], app.url("/login"));
    assert_eq!(q["id_token_hint"].split('.').count(), 3, "the ID token of this sign-in");
    assert_eq!(session_count(&app).await, 0, "yeyak's session ended first");
    // The provider accepts the hint and, once confirmed, sends the browser back to /login.
    let confirm = browser.follow.get(to).send().await.unwrap();
    assert_eq!(confirm.status(), StatusCode::OK);
    let url = confirm.url().clone();
    let page = confirm.text().await.unwrap();
    let action = attribute(&page, "action").expect("the provider's sign-out form");
    let xsrf = field(&page, "xsrf");
    let back = browser
        .follow
        .post(url.join(&action).unwrap())
        .form(&[("xsrf", xsrf.as_str()), ("logout", "yes")])
        .send()
        .await
        .unwrap();
    assert_eq!(back.url().as_str(), app.url("/login"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn es256_id_tokens_are_verified_too() {
    let provider = Provider::start().await;
    let app = app_with(&provider, "yeyak-es", |_| {}).await;
    let res = Browser::new().sign_in(&app, "bob", "/").await;
    assert_eq!(res.status(), StatusCode::OK);
    let token: String = app.db().await.query_one("SELECT id_token FROM staff_session", &[]).await.unwrap().get(0);
    let header = token.split('.').next().unwrap();
    use base64::Engine;
    let header: serde_json::Value =
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header).unwrap()).unwrap();
    assert_eq!(header["alg"], "ES256");
    // email_verified is false for bob: the address is not taken.
    assert_eq!(linked_account(&app, "bob").await, Some(("bob".into(), false, None, "oidc".into())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_and_profile_follow_the_provider_at_every_sign_in() {
    let provider = Provider::start().await;
    let app = app_with(&provider, "yeyak", |_| {}).await;
    assert_eq!(Browser::new().sign_in(&app, "alice", "/").await.status(), StatusCode::OK);
    assert!(linked_account(&app, "alice").await.unwrap().1, "admin by group");

    let mut people = users();
    people["alice"]["groups"] = json!(["office"]);
    people["alice"]["name"] = json!("Alice Park");
    people["alice"]["email"] = json!("alice.park@example.com");
    people["alice"]["preferred_username"] = json!("apark");
    provider.set_users(&people).await;
    assert_eq!(Browser::new().sign_in(&app, "alice", "/").await.status(), StatusCode::OK);
    assert_eq!(
        linked_account(&app, "alice").await,
        Some(("alice".into(), false, Some("alice.park@example.com".into()), "oidc".into())),
        "the same account, staff now, with the new email (the username stays)"
    );
    let name: String = app
        .db()
        .await
        .query_one("SELECT display_name FROM staff_user WHERE username = 'alice'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(name, "Alice Park");
    assert_eq!(app.count("SELECT count(*) FROM staff_user WHERE source = 'oidc'").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_outside_the_allowed_groups_get_no_account() {
    let provider = Provider::start().await;
    let app = app_with(&provider, "yeyak", |c| c.oidc_allowed_groups = Some("office".into())).await;
    let before = app.count("SELECT count(*) FROM staff_user").await;
    let res = Browser::new().sign_in(&app, "mallory", "/").await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert!(res.text().await.unwrap().contains("이 서비스를 쓸 권한이 없습니다"));
    assert_eq!(app.count("SELECT count(*) FROM staff_user").await, before, "no account");
    assert_eq!(session_count(&app).await, 0, "no session");
    assert_eq!(Browser::new().sign_in(&app, "bob", "/").await.status(), StatusCode::OK, "office is allowed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_account_of_the_same_name_is_never_taken_over() {
    let provider = Provider::start().await;
    let app = app_with(&provider, "yeyak", |_| {}).await;
    let admin = "(SELECT * FROM staff_user WHERE username = 'admin')";
    let admin_before = fingerprint(&app, &[admin]).await;
    let res = Browser::new().sign_in(&app, "impostor", "/").await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        linked_account(&app, "impostor").await,
        Some(("admin-2".into(), false, Some("admin@example.com".into()), "oidc".into())),
        "a free name beside the local admin"
    );
    assert_eq!(fingerprint(&app, &[admin]).await, admin_before);
    // The provider's "admin" has no password here, and the local admin's still works.
    let status = password(&app, ADMIN_USER, ADMIN_PASSWORD).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let status = password(&app, "admin-2", "!").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_disabled_in_yeyak_stays_refused() {
    let provider = Provider::start().await;
    let app = app_with(&provider, "yeyak", |_| {}).await;
    assert_eq!(Browser::new().sign_in(&app, "bob", "/").await.status(), StatusCode::OK);
    app.db().await.execute("UPDATE staff_user SET disabled_at = now() WHERE username = 'bob'", &[]).await.unwrap();
    app.db().await.execute("DELETE FROM staff_session", &[]).await.unwrap();
    let res = Browser::new().sign_in(&app, "bob", "/").await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert!(res.text().await.unwrap().contains("이 서비스를 쓸 권한이 없습니다"));
    assert_eq!(session_count(&app).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_signing_keys_at_the_provider_are_fetched_once_and_followed() {
    let provider = Provider::start().await;
    let app = app_with(&provider, "yeyak", |_| {}).await;
    assert_eq!(Browser::new().sign_in(&app, "alice", "/").await.status(), StatusCode::OK);
    let kids = provider.rotate_keys().await;
    provider.register(&app).await;
    app.db().await.execute("DELETE FROM staff_session", &[]).await.unwrap();
    let res = Browser::new().sign_in(&app, "alice", "/").await;
    assert_eq!(res.status(), StatusCode::OK, "the new key id made yeyak fetch the keys again");
    let token: String = app.db().await.query_one("SELECT id_token FROM staff_session", &[]).await.unwrap().get(0);
    use base64::Engine;
    let header = token.split('.').next().unwrap();
    let header: serde_json::Value =
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header).unwrap()).unwrap();
    assert!(kids.contains(&header["kid"].as_str().unwrap().to_owned()), "signed with a rotated key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_down_at_start_leaves_password_sign_in_working_until_it_answers() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let issuer = format!("http://127.0.0.1:{port}");
    let app = TestApp::spawn_with(|c| oidc_settings(c, &issuer, "yeyak")).await;
    let res = app.http.get(app.url("/auth/oidc/start?next=/")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(res.text().await.unwrap().contains("회사 계정 로그인을 지금 쓸 수 없습니다"));
    let status = password(&app, ADMIN_USER, ADMIN_PASSWORD).await;
    assert_eq!(status, StatusCode::SEE_OTHER, "the break-glass admin signs in meanwhile");

    let provider = Provider::start_on(port).await;
    provider.register(&app).await;
    wait_discovered(&app).await;
    assert_eq!(Browser::new().sign_in(&app, "alice", "/").await.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn password_sign_in_can_be_left_to_the_break_glass_admin() {
    let provider = Provider::start().await;
    let app = app_with(&provider, "yeyak", |c| c.password_login = yeyak::auth::PasswordLogin::AdminOnly).await;
    let command = yeyak::people::CreateStaff {
        username: "kim".into(),
        display_name: "김".into(),
        email: None,
        password_hash: yeyak::auth::hashing::hash_password("kim-password-1"),
        is_admin: false,
        language: None,
    };
    let admin = yeyak::command::Principal::person(&app.state.secret, 1, ADMIN_USER, ADMIN_USER, true);
    app.state.pipeline.run(&admin, None, &command).await.unwrap();
    let status = password(&app, "kim", "kim-password-1").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "only the break-glass account keeps its password");
    let status = password(&app, ADMIN_USER, ADMIN_PASSWORD).await;
    assert_eq!(status, StatusCode::SEE_OTHER);

    let off = app
        .another_process_with(|c| {
            oidc_settings(c, &provider.issuer, "yeyak");
            c.password_login = yeyak::auth::PasswordLogin::Off;
        })
        .await;
    let page = off.http.get(off.url("/login")).send().await.unwrap().text().await.unwrap();
    assert!(!page.contains("name=\"password\""), "no password form at all");
    assert!(page.contains("회사 계정으로 로그인"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_callback_query_and_tokens_never_reach_the_logs() {
    let logs = crate::operations::capture_logs();
    let provider = Provider::start().await;
    let app = app_with(&provider, "yeyak", |_| {}).await;
    let browser = Browser::new();
    assert_eq!(browser.sign_in(&app, "alice", "/").await.status(), StatusCode::OK);
    let token: String = app.db().await.query_one("SELECT id_token FROM staff_session", &[]).await.unwrap().get(0);
    // A refused callback with a code of our own: its reason is logged, the code is not.
    let browser = Browser::new();
    let start = browser.manual.get(app.url("/auth/oidc/start")).send().await.unwrap();
    assert_eq!(start.status(), StatusCode::SEE_OTHER);
    let res = browser
        .manual
        .get(app.url("/auth/oidc/callback?code=code-5d1f-very-private&state=state-9b2e-not-ours"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(text.contains("company sign-in refused"), "the reason is logged");
    assert!(text.contains("/auth/oidc/callback"), "the request itself is logged");
    for secret in ["code-5d1f-very-private", "state-9b2e-not-ours", token.as_str(), CLIENT_SECRET, "code="] {
        assert!(!text.contains(secret), "logs must not contain {secret}");
    }
}
