//! `YEYAK_READ_DATABASE_URL` (docs/SCALING.md §2): the booking list and the
//! plain day page read from the standby; the page right after the person's
//! own write, and a booking read by id, come from the primary. The "standby"
//! here is a second database cloned from the template that never receives the
//! primary's rows: the most lagging standby there can be. The week page, the
//! feeds and the reports read it too.

use reqwest::StatusCode;

use crate::helpers::*;
use crate::web::{tomorrow, Browser, ADMIN_PASSWORD, ADMIN_USER};

/// An app whose read pool is a fresh database that never receives a row
/// (returned by name, to drop at the end).
async fn beside_a_lagging_standby() -> (String, TestApp) {
    let standby = fresh_database().await;
    let standby_url = format!("{PG_BASE}/{standby}");
    (standby.clone(), TestApp::spawn_with(|c| c.read_database_url = Some(standby_url)).await)
}

#[tokio::test]
async fn lists_read_the_standby_and_the_page_after_ones_own_write_reads_the_primary() {
    let (standby, app) = beside_a_lagging_standby().await;
    let browser = Browser::new(&app);
    browser.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let date = tomorrow(&app);

    let booked = browser.book(&date, "복제 지연", "10:00", "11:00", &["A"]).await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    let location = booked.location.clone().unwrap();
    let id: i64 = location.split("booked=").nth(1).unwrap().split(['&', '#']).next().unwrap().parse().unwrap();
    let after_write = browser.get(&location).await;
    assert!(after_write.html.contains("복제 지연"), "the redirect after one's own booking reads the primary");

    let plain = browser.get(&format!("/rooms?date={date}")).await;
    assert_eq!(plain.status, StatusCode::OK);
    assert!(!plain.html.contains("복제 지연"), "a plain day page reads the standby");
    let (status, list) = app.get_json(&format!("/api/bookings?date={date}"), TENANT_ONE).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["bookings"], serde_json::json!([]), "the list reads the standby");
    let (status, one) = app.get_json(&format!("/api/bookings/{id}"), TENANT_ONE).await;
    assert_eq!((status, one["title"].as_str()), (StatusCode::OK, Some("복제 지연")), "by id: the primary");
    drop_database(&standby);
}

#[tokio::test]
async fn the_week_page_feeds_and_reports_read_the_standby() {
    let (standby, app) = beside_a_lagging_standby().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let date = tomorrow(&app);
    let booked = admin.book(&date, "복제 지연", "10:00", "11:00", &["A"]).await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    // The primary has it…
    assert_eq!(app.count("SELECT count(*) FROM reservation WHERE title = '복제 지연'").await, 1);
    // …and none of these show it: they read the standby, which lags for ever.
    let week = admin.get(&format!("/rooms/week?date={date}")).await;
    assert_eq!(week.status, StatusCode::OK);
    assert!(!week.html.contains("복제 지연"), "the week page reads the standby");
    let token = admin.get("/account").await.feed_token();
    for feed in [format!("/ical/me.ics?token={token}"), format!("/ical/rooms/A.ics?token={token}")] {
        let res = app.http.get(app.url(&feed)).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{feed}");
        assert!(!res.text().await.unwrap().contains("복제 지연"), "{feed} reads the standby");
    }
    let report = admin.get(&format!("/admin/reports?from={date}&to={date}")).await;
    assert_eq!(report.status, StatusCode::OK);
    let csv = app
        .http
        .get(app.url(&format!("/api/admin/reports/bookings.csv?from={date}&to={date}")))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status(), StatusCode::OK);
    assert!(!csv.text().await.unwrap().contains("복제 지연"), "the bookings report reads the standby");
    // Against the primary the same report has the booking (the check above can fail).
    let plain = TestApp::spawn().await;
    let (status, _) = body(
        plain
            .create_booking(
                ADMIN,
                "ops",
                "r",
                &booking("복제 지연", &["A"], &format!("{date}T10:00:00+09:00"), &format!("{date}T11:00:00+09:00")),
            )
            .await,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let csv = plain
        .http
        .get(plain.url(&format!("/api/admin/reports/bookings.csv?from={date}&to={date}")))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert!(csv.text().await.unwrap().contains("복제 지연"), "without a standby the report shows it");
    drop_database(&standby);
}
