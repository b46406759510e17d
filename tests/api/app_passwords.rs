//! App passwords (SPEC §17, §21): made on `/account` with a label and shown
//! once in a `<code>` element, listed with their last use, revocable; a
//! revoked one, or one of a disabled person, never signs in again (and
//! enabling the person revives none).

use reqwest::StatusCode;

use crate::accounts::add_person;
use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

/// Makes an app password on `/account`; returns the page and the secret.
pub async fn make_app_password(b: &Browser<'_>, label: &str) -> (crate::web::Page, String) {
    let account = b.get("/account").await;
    let page =
        b.post("/account/app-passwords", &[("label", label), ("csrf_token", &account.field("csrf_token"))]).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.html);
    let secret = page
        .html
        .split("<code class=\"secret\">")
        .nth(1)
        .expect("the new secret in a <code> element")
        .split("</code>")
        .next()
        .unwrap()
        .to_owned();
    (page, secret)
}

/// A signed-in person `kim` (password `correct-horse-1`) and their browser.
pub async fn person<'a>(app: &'a TestApp, username: &str) -> Browser<'a> {
    let admin = Browser::new(app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    add_person(&admin, username, &format!("{username}@example.com")).await;
    let b = Browser::new(app);
    assert_eq!(b.sign_in(username, "correct-horse-1").await.status, StatusCode::SEE_OTHER);
    b
}

#[tokio::test]
async fn an_app_password_is_shown_once_stored_as_a_keyed_digest_and_listed() {
    let app = TestApp::spawn().await;
    let kim = person(&app, "kim").await;
    let (page, secret) = make_app_password(&kim, "내 iPhone").await;
    assert!(secret.starts_with("yp_") && secret.len() == 51, "{secret}");
    assert!(page.html.contains("내 iPhone") && page.html.contains("쓴 적 없음"));
    let again = kim.get("/account").await;
    assert!(again.html.contains("내 iPhone"), "listed");
    assert!(!again.html.contains(&secret), "shown once, never again");
    let db = app.db().await;
    let row = db.query_one("SELECT digest, label FROM app_password", &[]).await.unwrap();
    let digest: String = row.get(0);
    assert_eq!(digest.len(), 64);
    assert!(!digest.contains(&secret[3..]), "only a digest is stored");
    let stored = db.query_one("SELECT count(*) FROM app_password WHERE digest LIKE '%' || $1 || '%'", &[&secret]).await;
    assert_eq!(stored.unwrap().get::<_, i64>(0), 0);
    // Nothing replayable holds the secret either.
    assert_eq!(app.count("SELECT count(*) FROM idempotency_record WHERE operation LIKE 'app_password%'").await, 0);
}

#[tokio::test]
async fn labels_are_checked_and_other_peoples_passwords_cannot_be_revoked() {
    let app = TestApp::spawn().await;
    let kim = person(&app, "kim").await;
    let account = kim.get("/account").await;
    let csrf = account.field("csrf_token");
    for bad in ["", "   ", "a\nb", &"가".repeat(101)] {
        let page = kim.post("/account/app-passwords", &[("label", bad), ("csrf_token", &csrf)]).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{bad:?}");
    }
    assert_eq!(app.count("SELECT count(*) FROM app_password").await, 0, "nothing stored on bad input");
    make_app_password(&kim, "노트북").await;
    let id: i64 = app.db().await.query_one("SELECT id FROM app_password", &[]).await.unwrap().get(0);
    let lee = person(&app, "lee").await;
    let lee_csrf = lee.get("/account").await.field("csrf_token");
    let refused = lee.post(&format!("/account/app-passwords/{id}/revoke"), &[("csrf_token", &lee_csrf)]).await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
    assert_eq!(app.count("SELECT count(*) FROM app_password WHERE revoked_at IS NULL").await, 1);
    let revoked = kim.post(&format!("/account/app-passwords/{id}/revoke"), &[("csrf_token", &csrf)]).await;
    assert_eq!(revoked.status, StatusCode::OK);
    assert!(revoked.html.contains("폐기됨"));
    assert_eq!(app.count("SELECT count(*) FROM app_password WHERE revoked_at IS NOT NULL").await, 1);
}

#[tokio::test]
async fn disabling_a_person_ends_their_app_passwords_and_enabling_revives_none() {
    let app = TestApp::spawn().await;
    let kim = person(&app, "kim").await;
    make_app_password(&kim, "a").await;
    make_app_password(&kim, "b").await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let id: i64 =
        app.db().await.query_one("SELECT id FROM staff_user WHERE username = 'kim'", &[]).await.unwrap().get(0);
    let csrf = admin.get("/admin/staff").await.field("csrf_token");
    admin.post(&format!("/admin/staff/{id}/disable"), &[("csrf_token", &csrf)]).await;
    assert_eq!(app.count("SELECT count(*) FROM app_password WHERE revoked_at IS NULL").await, 0);
    admin.post(&format!("/admin/staff/{id}/enable"), &[("csrf_token", &csrf)]).await;
    assert_eq!(app.count("SELECT count(*) FROM app_password WHERE revoked_at IS NULL").await, 0, "none revived");
}
