//! The pages of SPEC §25 in a real browser, in both languages, through
//! axe-core: the account page with delegates, the day page's "for" choice,
//! the staff page's delegates form and a struck series' restore page.

use chrono::Duration;
use fantoccini::Locator;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::browser::{assert_accessible, browser, chromedriver, screenshot, sign_in};
use crate::helpers::*;
use crate::web::{tomorrow, Browser, ADMIN_PASSWORD, ADMIN_USER};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_people_pages_pass_axe_in_both_languages() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    // kim names the admin a delegate: the admin's day page offers "for".
    let account = kim.get("/account").await;
    let named =
        kim.post("/account/delegates", &[("username", ADMIN_USER), ("csrf_token", &account.field("csrf_token"))]).await;
    assert_eq!(named.status, StatusCode::OK);
    // A series struck for no-shows, organized by the admin.
    let (series, t) = crate::strikes::weekly_series_by_form(&app, &admin, 5).await;
    app.clock.set(t + Duration::weeks(2) + Duration::minutes(20));
    let res = app
        .request(Method::POST, "/api/admin/sweep", ADMIN, Some("ops"))
        .header("Idempotency-Key", "sweep")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        app.count(&format!("SELECT count(*) FROM booking_series WHERE id = {series} AND struck_at IS NOT NULL")).await,
        1
    );

    let date = tomorrow(&app);
    let (_driver, port) = chromedriver().await;
    let c = browser(port).await;
    let result = async {
        sign_in(&app, &c).await?;
        for lang in ["ko", "en"] {
            c.goto(&app.url(&format!("/account?lang={lang}"))).await?;
            c.find(Locator::Css("#delegate_username")).await?;
            assert_accessible(&c, &format!("account page with delegates ({lang})")).await;
            c.goto(&app.url(&format!("/rooms?date={date}&lang={lang}"))).await?;
            c.find(Locator::Css("select#for_username option[value=kim]")).await?;
            assert_accessible(&c, &format!("day page with the for choice ({lang})")).await;
            c.goto(&app.url(&format!("/admin/staff?lang={lang}"))).await?;
            c.find(Locator::Css("input[name=delegates]")).await?;
            c.find(Locator::Css("form[action='/admin/staff/kim/erase'] input[name=confirm]")).await?;
            assert_accessible(&c, &format!("staff page with delegates and erase ({lang})")).await;
            screenshot(&c, &format!("staff-erase-{lang}")).await;
            c.goto(&app.url(&format!("/series/{series}/restore?lang={lang}"))).await?;
            c.find(Locator::Css(&format!("form[action='/series/{series}/restore'] button"))).await?;
            assert_accessible(&c, &format!("restore page ({lang})")).await;
            if lang == "ko" {
                screenshot(&c, "series-restore").await;
            }
        }
        // The restore itself, from the page's button.
        c.find(Locator::Css(&format!("form[action='/series/{series}/restore'] button"))).await?.click().await?;
        let notice = c.wait().for_element(Locator::Css("p.notice")).await?.text().await?;
        assert!(c.find(Locator::Css("p.notice.ok")).await.is_ok(), "{notice}");
        assert_accessible(&c, "restore answer").await;
        Ok::<_, fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.unwrap();
    assert_eq!(
        app.count(&format!("SELECT count(*) FROM booking_series WHERE id = {series} AND struck_at IS NULL")).await,
        1
    );
}
