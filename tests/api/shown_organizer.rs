//! Pages show a booking made through an integration as
//! `{organizerName} · {tenant}`, never as a staff member (SPEC §20): the
//! day grid, the booking page and the door display.

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::json;
use yeyak::clock::Clock;

use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

#[tokio::test]
async fn integration_bookings_show_their_tenant_on_every_page() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let starts = app.clock.now() + Duration::hours(1);
    let date = seoul_date(starts);
    // An integration books as "김민지", the name of a real colleague.
    let mut b = booking("임원 보고", &["A"], &starts.to_rfc3339(), &(starts + Duration::hours(1)).to_rfc3339());
    b["organizerName"] = json!("김민지");
    let (status, made) = body(app.create_booking(TENANT_ONE, "alice", "i1", &b).await).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let id = made["id"].as_i64().unwrap();
    assert!(made.get("organizerTenant").is_none_or(|t| t == "t1"), "{made}");
    // An admin key's booking, a series by an integration, and Kim's own.
    let later = starts + Duration::hours(2);
    let ops = booking("운영", &["B"], &later.to_rfc3339(), &(later + Duration::hours(1)).to_rfc3339());
    let (_, ops) = body(app.create_booking(ADMIN, "ops", "i2", &ops).await).await;
    let series = json!({"title": "반복", "rooms": ["C"], "startsAt": starts.to_rfc3339(),
                        "endsAt": (starts + Duration::hours(1)).to_rfc3339(), "recurrence": "FREQ=DAILY;COUNT=2",
                        "organizerName": "김민지"});
    let (status, s) = post(&app, "/api/series", TENANT_TWO, "bob", "i3", series).await;
    assert_eq!(status, StatusCode::CREATED, "{s}");
    let own = kim.book(&crate::web::tomorrow(&app), "내 회의", "23:00", "23:30", &["B"]).await;
    let own = crate::web::booked_id(&own);

    let shown = "김민지 · t1";
    let day = kim.get(&format!("/rooms?date={date}")).await;
    let block = &day.html[day.html.find("임원 보고</strong>").expect("the block")..];
    assert!(block[..block.find("</a>").unwrap()].contains(shown), "the day grid: {}", day.html);
    assert!(day.html.contains("김민지 · t2"), "the series on the day grid");
    let page = kim.get(&format!("/bookings/{id}")).await;
    assert!(page.html.contains(&format!("<dd>{shown}</dd>")), "the booking page: {}", page.html);
    let page = kim.get(&format!("/bookings/{own}")).await;
    assert!(page.html.contains("<dd>김민지</dd>"), "Kim's own booking: {}", page.html);
    let url = crate::display::display_url(&admin, "A").await;
    let door = app.http.get(app.url(&url)).send().await.unwrap().text().await.unwrap();
    assert!(door.contains(shown), "the door display: {door}");
    assert!(!door.contains("김민지<") && !door.contains("김민지</span>"), "never the bare name: {door}");
    let tenant = |id: i64| {
        let app = &app;
        async move {
            app.db()
                .await
                .query_one("SELECT organizer_tenant FROM reservation WHERE id = $1", &[&id])
                .await
                .unwrap()
                .get::<_, Option<String>>(0)
        }
    };
    assert_eq!(tenant(id).await.as_deref(), Some("t1"));
    assert_eq!(tenant(ops["id"].as_i64().unwrap()).await.as_deref(), Some("ops"));
    assert_eq!(tenant(s["created"][1]["id"].as_i64().unwrap()).await.as_deref(), Some("t2"));
    assert_eq!(tenant(own).await, None, "a person's booking names the person");
}
