//! Privacy (SPEC §26): access records of every view by an admin of other
//! people's personal data, kept append-only by the database and purged by
//! the sweeper only after their retention.

use reqwest::StatusCode;
use serde_json::Value;

use crate::helpers::*;
use crate::web::{booked_id, tomorrow, Browser, ADMIN_PASSWORD, ADMIN_USER};

/// The kinds of the records listed by `GET /api/admin/access-log`, oldest first.
async fn kinds(app: &TestApp) -> Vec<(String, String, Option<String>, Value)> {
    let (status, log) = app.get_json("/api/admin/access-log", ADMIN).await;
    assert_eq!(status, StatusCode::OK, "{log}");
    let mut out: Vec<_> = log["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap().to_owned(),
                r["actor"].as_str().unwrap().to_owned(),
                r["subject"].as_str().map(str::to_owned),
                r.clone(),
            )
        })
        .collect();
    out.reverse();
    out
}

#[tokio::test]
async fn every_admin_view_of_other_peoples_data_is_an_access_record() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim_id, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let day = tomorrow(&app);
    let booked = kim.book(&day, "kim's review", "10:00", "11:00", &["A"]).await;
    let id = booked_id(&booked);
    let before = kinds(&app).await.len();
    assert!(before >= 2, "adding kim showed the staff page twice");

    // The staff page, the JSON directory, the bookings download, kim's
    // booking page and its JSON history.
    assert_eq!(admin.get("/admin/staff").await.status, StatusCode::OK);
    let (status, _) = app.get_json("/api/admin/staff", ADMIN).await;
    assert_eq!(status, StatusCode::OK);
    let csv = app
        .request(reqwest::Method::GET, &format!("/api/admin/reports/bookings.csv?from={day}&to={day}"), ADMIN, None)
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status(), StatusCode::OK);
    assert_eq!(admin.get(&format!("/bookings/{id}")).await.status, StatusCode::OK);
    let (status, _) = app.get_json(&format!("/api/bookings/{id}/history"), ADMIN).await;
    assert_eq!(status, StatusCode::OK);
    // Kim reading her own booking is no access record; nor is an integration key.
    assert_eq!(kim.get(&format!("/bookings/{id}")).await.status, StatusCode::OK);
    let (status, _) = app.get_json(&format!("/api/bookings/{id}/history"), TENANT_ONE).await;
    assert_eq!(status, StatusCode::OK);

    let all = kinds(&app).await;
    let new: Vec<_> = all[before..].iter().map(|(k, a, s, _)| (k.as_str(), a.as_str(), s.as_deref())).collect();
    assert_eq!(
        new,
        vec![
            ("staff_list", "admin", None),
            ("staff_api_list", "ops", None),
            ("bookings_csv", "ops", None),
            ("history", "admin", Some("kim")),
            ("history", "ops", Some("kim")),
        ]
    );
    let staff_list = &all[before].3;
    let people = app.count("SELECT count(*) FROM staff_user").await;
    assert_eq!(staff_list["people"], people, "admin and kim: {staff_list}");
    assert_eq!(staff_list["actorKind"], "staff");
    assert_eq!(staff_list["address"], "127.0.0.1");
    assert_eq!(all[before + 1].3["actorKind"], "key");
    assert_eq!(all[before + 2].3["people"], 1, "one organizer in the download");
    let db = app.db().await;
    let subject: i64 = db
        .query_one("SELECT subject FROM access_record WHERE kind = 'history' ORDER BY id LIMIT 1", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(subject, kim_id);

    // The page lists them, in both languages; only admins see it.
    for lang in ["ko", "en"] {
        let page = admin.get(&format!("/admin/access-log?lang={lang}")).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.html);
        assert!(page.html.contains(">kim<"), "{}", page.html);
        assert!(page.html.contains("(ops)"), "{}", page.html);
    }
    assert_eq!(kim.get("/admin/access-log").await.status, StatusCode::FORBIDDEN);
    let (status, _) = app.get_json("/api/admin/access-log", TENANT_ONE).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn the_access_log_range_is_checked_and_a_bad_one_changes_nothing() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let before = fingerprint(&app, &["access_record"]).await;
    for query in ["from=2026-13-01", "from=2026-12-01&to=2026-11-01", "from=2020-01-01&to=2026-01-01"] {
        let (status, body) = app.get_json(&format!("/api/admin/access-log?{query}"), ADMIN).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert_eq!(body["code"], "MALFORMED_REQUEST");
        let page = admin.get(&format!("/admin/access-log?{query}")).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{query}");
    }
    assert_eq!(fingerprint(&app, &["access_record"]).await, before);
    // A range of long ago lists nothing.
    let (status, body) = app.get_json("/api/admin/access-log?from=2020-01-01&to=2020-01-31", ADMIN).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["records"].as_array().unwrap().len(), 0);
    assert_eq!(body["from"], "2020-01-01");
    assert_eq!(body["truncated"], false);
}

#[tokio::test]
async fn the_database_keeps_access_records_append_only_and_the_sweeper_purges_only_old_ones() {
    let app = TestApp::spawn_with(|c| c.access_log_days = 10).await;
    let db = app.db().await;
    let days: i32 = db.query_one("SELECT access_log_days FROM privacy_setting", &[]).await.unwrap().get(0);
    assert_eq!(days, 10, "start-up wrote YEYAK_ACCESS_LOG_DAYS where the trigger reads it");
    db.batch_execute(
        "INSERT INTO access_record (actor_tenant, actor_name, kind, people) VALUES ('ops', 'ops', 'staff_api_list', 3);
         INSERT INTO access_record (at, actor_tenant, actor_name, kind, people)
              SELECT now() - interval '9 days', 'ops', 'ops', 'staff_api_list', 1;
         INSERT INTO access_record (at, actor_tenant, actor_name, kind, people)
              SELECT now() - make_interval(days => 11 + g), 'ops', 'ops', 'bookings_csv', g FROM generate_series(1, 25) g;",
    )
    .await
    .unwrap();

    // No UPDATE, not even of an old record; no DELETE of a young one; no TRUNCATE.
    for sql in [
        "UPDATE access_record SET people = 0",
        "UPDATE access_record SET actor_name = 'someone else' WHERE kind = 'bookings_csv'",
        "DELETE FROM access_record",
        "DELETE FROM access_record WHERE at > now() - interval '10 days'",
        "TRUNCATE access_record",
    ] {
        let err = db.batch_execute(sql).await.expect_err(sql);
        assert_eq!(err.code(), Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE), "{sql}: {err}");
    }
    assert_eq!(app.count("SELECT count(*) FROM access_record").await, 27);

    // The sweeper's purge, in batches of 10, takes the 25 older than 10 days.
    let mut conn = app.state.pool.get().await.unwrap();
    let purge =
        yeyak::sweeper::purge::Purge { access_log: chrono::Duration::days(10), batch: 10, ..Default::default() };
    let purged = yeyak::sweeper::purge::run(&mut conn, purge, chrono::Utc::now()).await.unwrap();
    assert_eq!(purged.access_records, 25);
    assert_eq!(app.count("SELECT count(*) FROM access_record").await, 2);
    // A process whose retention (or clock) says earlier still purges nothing younger.
    let early = yeyak::sweeper::purge::Purge { access_log: chrono::Duration::days(1), ..Default::default() };
    let later = chrono::Utc::now() + chrono::Duration::days(30);
    let purged = yeyak::sweeper::purge::run(&mut conn, early, later).await.unwrap();
    assert_eq!(purged.access_records, 0);
    assert_eq!(app.count("SELECT count(*) FROM access_record").await, 2);
}

#[tokio::test]
async fn a_person_downloads_their_bookings_of_any_date_as_icalendar() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim_id, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let day = tomorrow(&app);
    let booked = kim.book(&day, "kim's planning", "10:00", "11:00", &["A"]).await;
    booked_id(&booked);
    let other = admin.book(&day, "admin's own", "12:00", "13:00", &["B"]).await;
    booked_id(&other);
    // One of long ago, beyond any feed's window.
    let db = app.db().await;
    db.batch_execute(&format!(
        "UPDATE reservation SET starts_at = starts_at - interval '800 days', ends_at = ends_at - interval '800 days'
          WHERE organizer_staff_id = {kim_id};
         UPDATE reservation_room SET starts_at = starts_at - interval '800 days', ends_at = ends_at - interval '800 days'
          WHERE reservation_id IN (SELECT id FROM reservation WHERE organizer_staff_id = {kim_id})"
    ))
    .await
    .unwrap();
    let _ = kim.book(&day, "kim's retro", "14:00", "15:00", &["C"]).await;

    let account = kim.get("/account?lang=en").await;
    assert!(account.html.contains("href=\"/account/export.ics\""), "{}", account.html);
    let res = kim.client.get(app.url("/account/export.ics")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.headers()["content-type"].to_str().unwrap().starts_with("text/calendar"));
    assert!(res.headers()["content-disposition"].to_str().unwrap().contains("attachment"));
    let text = res.text().await.unwrap();
    assert!(text.starts_with("BEGIN:VCALENDAR"), "{text}");
    assert!(text.contains("kim's planning") && text.contains("kim's retro"), "{text}");
    assert!(!text.contains("admin's own"), "{text}");
    assert_eq!(text.matches("BEGIN:VEVENT").count(), 2, "{text}");

    // Without a session: the sign-in page, no calendar.
    let anonymous = Browser::new(&app).get("/account/export.ics").await;
    assert_ne!(anonymous.status, StatusCode::OK);
}
