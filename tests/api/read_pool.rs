//! `YEYAK_READ_DATABASE_URL` (docs/SCALING.md §2): the booking list and the
//! plain day page read from the standby; the page right after the person's
//! own write, and a booking read by id, come from the primary. The "standby"
//! here is a second database cloned from the template that never receives the
//! primary's rows: the most lagging standby there can be.

use reqwest::StatusCode;

use crate::helpers::*;
use crate::web::{tomorrow, Browser, ADMIN_PASSWORD, ADMIN_USER};

#[tokio::test]
async fn lists_read_the_standby_and_the_page_after_ones_own_write_reads_the_primary() {
    let standby = fresh_database().await;
    let standby_url = format!("{PG_BASE}/{standby}");
    let app = TestApp::spawn_with(|c| c.read_database_url = Some(standby_url)).await;
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
