//! The pages of SPEC §26 in a real browser, in both languages, through
//! axe-core: the access log with records, the staff page's link to it and
//! the account page's download of one's bookings.

use fantoccini::Locator;
use reqwest::StatusCode;

use crate::browser::{assert_accessible, browser, chromedriver, sign_in};
use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_access_log_passes_axe_in_both_languages() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let (status, _) = app.get_json("/api/admin/staff", ADMIN).await;
    assert_eq!(status, StatusCode::OK);

    let (_driver, port) = chromedriver().await;
    let c = browser(port).await;
    let result = async {
        sign_in(&app, &c).await?;
        for lang in ["ko", "en"] {
            c.goto(&app.url(&format!("/admin/access-log?lang={lang}"))).await?;
            c.find(Locator::Css("table.list tbody tr")).await?;
            assert_accessible(&c, &format!("access log ({lang})")).await;
            c.goto(&app.url(&format!("/admin/access-log?from=2026-13-01&lang={lang}"))).await?;
            c.find(Locator::Css("p.notice")).await?;
            assert_accessible(&c, &format!("access log refusing a range ({lang})")).await;
            c.goto(&app.url(&format!("/account?lang={lang}"))).await?;
            c.find(Locator::Css("a[href='/account/export.ics']")).await?;
            c.find(Locator::Css("a[href='/account/export']")).await?;
            assert_accessible(&c, &format!("account page with the export links ({lang})")).await;
            c.goto(&app.url(&format!("/admin/staff?lang={lang}"))).await?;
            c.find(Locator::Css("a[href='/admin/access-log']")).await?;
            assert_accessible(&c, &format!("staff page with the access log link ({lang})")).await;
        }
        Ok::<_, fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.unwrap();
}
