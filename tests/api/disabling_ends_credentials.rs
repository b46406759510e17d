//! Disabling a person ends their calendar token (SPEC §20): enabling them
//! again does not revive the old feed address.

use reqwest::StatusCode;

use crate::accounts::add_person;
use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

async fn staff_id(app: &TestApp, username: &str) -> i64 {
    app.db().await.query_one("SELECT id FROM staff_user WHERE username = $1", &[&username]).await.unwrap().get(0)
}

#[tokio::test]
async fn a_disabled_persons_feed_address_stays_dead_after_they_are_enabled_again() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    add_person(&admin, "kim", "").await;
    let kim = Browser::new(&app);
    assert_eq!(kim.sign_in("kim", "correct-horse-1").await.status, StatusCode::SEE_OTHER);
    let leaked = feed_address(&kim.get("/account").await);
    let path = &leaked[leaked.find("/ical/").unwrap()..];
    let ics = |path: String| {
        let app = &app;
        async move { app.http.get(app.url(&path)).send().await.unwrap().status() }
    };
    assert_eq!(ics(path.to_owned()).await, StatusCode::OK);
    let id = staff_id(&app, "kim").await;
    let page = admin.get("/admin/staff").await;
    let off = admin.post(&format!("/admin/staff/{id}/disable"), &[("csrf_token", &page.field("csrf_token"))]).await;
    assert_eq!(off.status, StatusCode::OK);
    assert_eq!(ics(path.to_owned()).await, StatusCode::NOT_FOUND);
    let on = admin.post(&format!("/admin/staff/{id}/enable"), &[("csrf_token", &page.field("csrf_token"))]).await;
    assert_eq!(on.status, StatusCode::OK);
    // The address someone kept from before the disabling opens nothing…
    assert_eq!(ics(path.to_owned()).await, StatusCode::NOT_FOUND, "the old feed came back to life");
    // …and the person gets a new one on /account.
    assert_eq!(kim.sign_in("kim", "correct-horse-1").await.status, StatusCode::SEE_OTHER);
    let fresh = feed_address(&kim.get("/account").await);
    assert_ne!(fresh, leaked);
    assert_eq!(ics(fresh[fresh.find("/ical/").unwrap()..].to_owned()).await, StatusCode::OK);
}
