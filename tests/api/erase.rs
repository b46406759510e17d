//! Erase and retention (SPEC §26): a person erased in one transaction —
//! anonymous account, future bookings cancelled, past ones nameless, history
//! and mail without them — with reports of the time before identical; bad
//! erases refused changing nothing; the sweeper's retention doing the same
//! anonymisation to bookings that ended long ago.

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::helpers::*;
use crate::people::{book_for, name_delegate};
use crate::web::{booked_id, tomorrow, Browser, ADMIN_PASSWORD, ADMIN_USER};

/// `date` at `hh:00` in Seoul.
fn seoul(date: &str, hh: u32) -> DateTime<Utc> {
    let day: NaiveDate = date.parse().unwrap();
    chrono_tz::Asia::Seoul.from_local_datetime(&day.and_hms_opt(hh, 0, 0).unwrap()).unwrap().with_timezone(&Utc)
}

fn plus_days(date: &str, n: i64) -> String {
    (date.parse::<NaiveDate>().unwrap() + chrono::Duration::days(n)).to_string()
}

async fn report(app: &TestApp, name: &str, from: &str, to: &str) -> String {
    let res = app
        .request(Method::GET, &format!("/api/admin/reports/{name}?from={from}&to={to}"), ADMIN, None)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    res.text().await.unwrap()
}

async fn erase(app: &TestApp, username: &str, key: &str, idem: Option<&str>) -> (StatusCode, Value) {
    let mut req = app.request(Method::POST, &format!("/api/admin/staff/{username}/erase"), key, None);
    if let Some(idem) = idem {
        req = req.header("Idempotency-Key", idem);
    }
    body(req.send().await.unwrap()).await
}

/// Rows anywhere that still hold `text`.
async fn traces(app: &TestApp, text: &str) -> i64 {
    let like = format!("%{text}%");
    let db = app.db().await;
    let mut n = 0;
    for sql in [
        "SELECT count(*) FROM reservation WHERE title LIKE $1 OR organizer_name LIKE $1",
        "SELECT count(*) FROM booking_series WHERE title LIKE $1 OR organizer_name LIKE $1",
        "SELECT count(*) FROM booking_event WHERE changes::text LIKE $1 OR actor LIKE $1 OR actor_for LIKE $1",
        "SELECT count(*) FROM notification_outbox WHERE payload::text LIKE $1",
        "SELECT count(*) FROM staff_user WHERE display_name LIKE $1 OR username LIKE $1 OR email LIKE $1",
        "SELECT count(*) FROM dav_event WHERE body LIKE $1 OR name LIKE $1",
    ] {
        n += db.query_one(sql, &[&like]).await.unwrap().get::<_, i64>(0);
    }
    n
}

#[tokio::test]
async fn an_erased_person_leaves_no_name_and_the_reports_of_before_stay_the_same() {
    let app = TestApp::spawn_with(|c| c.smtp_url = Some("smtp://127.0.0.1:9".into())).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim_id, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let (_, lee) = add_person_signed_in(&app, &admin, "lee", "이서준").await;
    let d = tomorrow(&app);
    let (d1, d2) = (plus_days(&d, 1), plus_days(&d, 2));

    // Kim's past (day d), today's later and future bookings; lee books for
    // kim and kim for lee, so the history names kim on both sides.
    assert_eq!(name_delegate(&kim, "lee").await.status, StatusCode::OK);
    assert_eq!(name_delegate(&lee, "kim").await.status, StatusCode::OK);
    let past = booked_id(&kim.book(&d, "kim-secret-review", "10:00", "11:30", &["A"]).await);
    let by_lee = booked_id(&book_for(&lee, &d, "kim-secret-by-lee", "13:00", "14:00", "kim").await);
    let later_today = booked_id(&kim.book(&d1, "kim-secret-later", "14:00", "15:00", &["A"]).await);
    let future = booked_id(&kim.book(&d2, "kim-secret-future", "09:00", "10:00", &["B"]).await);
    let for_lee = booked_id(&book_for(&kim, &d2, "lee-own-meeting", "11:00", "12:00", "lee").await);
    let lee_own = booked_id(&lee.book(&d, "lee-own-past", "15:00", "16:00", &["A"]).await);
    // Kim's address in another spelling: the purge matches any.
    let db = app.db().await;
    db.execute("UPDATE staff_user SET email = 'Kim@Example.com' WHERE id = $1", &[&kim_id]).await.unwrap();
    assert!(app.count("SELECT count(*) FROM notification_outbox WHERE payload ->> 'to' = 'kim@example.com'").await > 0);

    // Noon the next day: d is the past, d1 14:00 and d2 the future.
    app.clock.set(seoul(&d1, 12));
    for (b, user) in [(&admin, ADMIN_USER), (&kim, "kim"), (&lee, "lee")] {
        b.sign_in(user, if user == ADMIN_USER { ADMIN_PASSWORD } else { "correct-horse-1" }).await;
    }
    assert_eq!(kim.get("/my").await.status, StatusCode::OK);
    let utilisation = report(&app, "utilisation.csv", &d, &d).await;
    assert!(utilisation.lines().count() > 1, "{utilisation}");

    let idem = uuid::Uuid::new_v4().to_string();
    let (status_erase, erased) = erase(&app, "KIM", ADMIN, Some(&idem)).await;
    assert_eq!(status_erase, StatusCode::OK, "{erased}");
    let new_name = format!("erased-{kim_id}");
    assert_eq!(erased["username"], new_name.as_str());
    assert_eq!(erased["cancelled"], 2, "d1 14:00 and d2: {erased}");
    assert_eq!(erased["anonymised"], 4, "every booking kim organizes: {erased}");
    assert!(erased["mailPurged"].as_i64().unwrap() > 0, "{erased}");

    // The account: anonymous, disabled, nothing left to sign in with.
    let row = db
        .query_one(
            "SELECT username, display_name, email, disabled_at IS NOT NULL, erased_at IS NOT NULL, is_admin
               FROM staff_user WHERE id = $1",
            &[&kim_id],
        )
        .await
        .unwrap();
    assert_eq!(
        (
            row.get::<_, String>(0),
            row.get::<_, String>(1),
            row.get::<_, Option<String>>(2),
            row.get::<_, bool>(3),
            row.get::<_, bool>(4),
            row.get::<_, bool>(5)
        ),
        (new_name.clone(), "삭제된 사용자".to_owned(), None, true, true, false)
    );
    for table in ["staff_session WHERE user_id", "staff_identity WHERE user_id", "app_password WHERE staff_id"] {
        assert_eq!(app.count(&format!("SELECT count(*) FROM {table} = {kim_id}")).await, 0, "{table}");
    }
    assert_eq!(app.count(&format!("SELECT count(*) FROM delegation WHERE {kim_id} IN (person, delegate)")).await, 0);
    assert_eq!(kim.get("/my").await.status, StatusCode::SEE_OTHER, "kim's session ended");

    // No title, name or address of kim's anywhere; lee's own bookings keep theirs.
    for text in ["kim-secret", "김민지", "kim@", "Kim@"] {
        assert_eq!(traces(&app, text).await, 0, "{text}");
    }
    let titles: Vec<(i64, String, String, Option<String>)> = db
        .query(
            "SELECT id, title, status, CASE WHEN anonymised_at IS NULL THEN NULL ELSE 'x' END FROM reservation ORDER BY id",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    let of = |id: i64| titles.iter().find(|t| t.0 == id).unwrap().clone();
    assert_eq!((of(past).1, of(past).2), ("—".to_owned(), "CONFIRMED".to_owned()), "past: kept, nameless");
    assert_eq!((of(by_lee).1, of(by_lee).2), ("—".to_owned(), "CONFIRMED".to_owned()));
    assert_eq!(of(later_today).2, "CANCELLED");
    assert_eq!(of(future).2, "CANCELLED");
    assert_eq!((of(for_lee).1, of(for_lee).2), ("lee-own-meeting".to_owned(), "CONFIRMED".to_owned()));
    assert_eq!((of(lee_own).1, of(lee_own).3), ("lee-own-past".to_owned(), None));
    // History naming kim reads the deleted user, on both sides.
    let (_, history) = app.get_json(&format!("/api/bookings/{for_lee}/history"), ADMIN).await;
    assert_eq!(history["events"][0]["actor"], "삭제된 사용자", "{history}");
    let (_, history) = app.get_json(&format!("/api/bookings/{by_lee}/history"), ADMIN).await;
    assert_eq!(
        (history["events"][0]["actor"].as_str(), history["events"][0]["onBehalfOf"].as_str()),
        (Some("이서준"), Some("삭제된 사용자")),
        "{history}"
    );
    let (_, history) = app.get_json(&format!("/api/bookings/{future}/history"), ADMIN).await;
    assert_eq!(history["events"][1]["action"], "cancelled", "{history}");
    assert_eq!(history["events"][1]["actor"], "ops", "the admin key that erased: {history}");
    // The freed room takes a booking at once.
    let again = lee.book(&d1, "lee-takes-the-slot", "14:00", "15:00", &["A"]).await;
    assert_eq!(again.status, StatusCode::SEE_OTHER, "{}", again.html);

    // Reports of the time before are the same to the minute.
    assert_eq!(report(&app, "utilisation.csv", &d, &d).await, utilisation);

    // The erase is an access record about them.
    let (_, log) = app.get_json("/api/admin/access-log", ADMIN).await;
    let erase_records: Vec<&Value> =
        log["records"].as_array().unwrap().iter().filter(|r| r["kind"] == "erase").collect();
    assert_eq!(erase_records.len(), 1, "{log}");
    assert_eq!(
        (erase_records[0]["subject"].as_str(), erase_records[0]["actor"].as_str()),
        (Some(new_name.as_str()), Some("ops"))
    );

    // The same request again is its replay; any other erase of kim changes nothing.
    let watched =
        ["staff_user", "reservation", "booking_series", "booking_event", "notification_outbox", "access_record"];
    let before = fingerprint(&app, &watched).await;
    assert_eq!(erase(&app, "KIM", ADMIN, Some(&idem)).await, (StatusCode::OK, erased.clone()));
    let (status, gone) = erase(&app, "kim", ADMIN, Some(&uuid::Uuid::new_v4().to_string())).await;
    assert_eq!((status, gone["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{gone}");
    let (status, twice) = erase(&app, &new_name, ADMIN, Some(&uuid::Uuid::new_v4().to_string())).await;
    assert_eq!((status, twice["code"].as_str()), (StatusCode::CONFLICT, Some("ALREADY_ERASED")), "{twice}");
    assert_eq!(fingerprint(&app, &watched).await, before);

    // Nor is an erased account anyone to change: not enabled, given a password or renamed.
    let before = fingerprint(&app, &["staff_user", "staff_session", "app_password"]).await;
    let patch = app
        .request(Method::PATCH, &format!("/api/admin/staff/{new_name}"), ADMIN, None)
        .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
        .json(&serde_json::json!({"disabled": false, "displayName": "김민지"}))
        .send()
        .await
        .unwrap();
    assert_eq!(patch.status(), StatusCode::NOT_FOUND);
    let page = admin.get("/admin/staff").await;
    assert!(!page.html.contains(&format!("action=\"/admin/staff/{new_name}/erase\"")), "{}", page.html);
    let csrf = page.field("csrf_token");
    let enable = admin.post(&format!("/admin/staff/{kim_id}/enable"), &[("csrf_token", &csrf)]).await;
    assert_eq!(enable.status, StatusCode::NOT_FOUND, "{}", enable.html);
    let password = admin
        .post(&format!("/admin/staff/{kim_id}/password"), &[("password", "a-new-password-1"), ("csrf_token", &csrf)])
        .await;
    assert_ne!(password.status, StatusCode::OK, "{}", password.html);
    assert_ne!(password.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", password.html);
    assert_eq!(fingerprint(&app, &["staff_user", "staff_session", "app_password"]).await, before);

    // A new kim is someone else: none of the erased kim's bookings are theirs.
    let (_, kim2) = add_person_signed_in(&app, &admin, "kim", "김민지 (새)").await;
    let export = kim2.get("/account/export.ics").await;
    assert_eq!(export.status, StatusCode::OK);
    assert!(!export.html.contains("BEGIN:VEVENT"), "{}", export.html);
    let detail = kim2.get(&format!("/bookings/{past}")).await;
    assert!(!detail.html.contains("/cancel\""), "not the new kim's to cancel: {}", detail.html);
    app.assert_consistent().await;
}

#[tokio::test]
async fn bad_erases_are_refused_and_change_nothing() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    kim.book(&tomorrow(&app), "kim-review", "10:00", "11:00", &["A"]).await;
    let watched = ["staff_user", "reservation", "booking_event", "access_record"];
    let before = fingerprint(&app, &watched).await;
    let key = || Some(uuid::Uuid::new_v4().to_string());

    let (status, body) = erase(&app, ADMIN_USER, ADMIN, key().as_deref()).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("BREAK_GLASS_ACCOUNT")), "{body}");
    let (status, body) = erase(&app, "nobody", ADMIN, key().as_deref()).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{body}");
    let (status, body) = erase(&app, "kim", ADMIN, None).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::BAD_REQUEST, Some("IDEMPOTENCY_KEY_REQUIRED")));
    let (status, body) = erase(&app, "kim", TENANT_ONE, key().as_deref()).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")));
    assert_eq!(fingerprint(&app, &watched).await, before);

    // On the staff page: the username must be typed again, exactly.
    let page = admin.get("/admin/staff").await;
    assert!(page.html.contains("action=\"/admin/staff/kim/erase\""), "{}", page.html);
    assert!(!page.html.contains(&format!("action=\"/admin/staff/{ADMIN_USER}/erase\"")), "no erase of oneself");
    let before = fingerprint(&app, &["staff_user", "reservation", "booking_event"]).await;
    let csrf = page.field("csrf_token");
    let wrong = admin.post("/admin/staff/kim/erase", &[("confirm", "lee"), ("csrf_token", &csrf)]).await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST, "{}", wrong.html);
    let forged = admin.post("/admin/staff/kim/erase", &[("confirm", "kim"), ("csrf_token", "forged")]).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.html);
    let self_erase = admin
        .post(&format!("/admin/staff/{ADMIN_USER}/erase"), &[("confirm", ADMIN_USER), ("csrf_token", &csrf)])
        .await;
    assert_eq!(self_erase.status, StatusCode::CONFLICT, "{}", self_erase.html);
    assert_eq!(fingerprint(&app, &["staff_user", "reservation", "booking_event"]).await, before);

    let page = admin.get("/admin/staff?lang=en").await;
    let done =
        admin.post("/admin/staff/kim/erase", &[("confirm", "kim"), ("csrf_token", &page.field("csrf_token"))]).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.html);
    assert!(done.html.contains("kim was erased"), "{}", done.html);
    assert_eq!(app.count("SELECT count(*) FROM staff_user WHERE erased_at IS NOT NULL").await, 1);
    assert_eq!(app.count("SELECT count(*) FROM reservation WHERE status = 'CANCELLED'").await, 1);
}

#[tokio::test]
async fn retention_takes_names_from_bookings_that_ended_long_ago_and_reports_stay() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let d = tomorrow(&app);
    let old = booked_id(&kim.book(&d, "old-review", "10:00", "11:00", &["A"]).await);
    let recent = booked_id(&kim.book(&plus_days(&d, 3), "recent-review", "10:00", "11:00", &["A"]).await);
    let (status, _) = app.get_json(&format!("/api/bookings/{old}"), ADMIN).await;
    assert_eq!(status, StatusCode::OK);
    // Five days after d: `old` ended 5 days ago, `recent` 2.
    let now = seoul(&plus_days(&d, 5), 12);
    app.clock.set(now);
    let utilisation = report(&app, "utilisation.csv", &d, &plus_days(&d, 3)).await;

    let mut conn = app.state.pool.get().await.unwrap();
    let purge =
        yeyak::sweeper::purge::Purge { personal_data: Some(chrono::Duration::days(4)), batch: 1, ..Default::default() };
    let first = yeyak::sweeper::purge::run(&mut conn, purge, now).await.unwrap();
    assert_eq!(first.anonymised, 1);
    let again = yeyak::sweeper::purge::run(&mut conn, purge, now).await.unwrap();
    assert_eq!(again.anonymised, 0, "done once");
    let off = yeyak::sweeper::purge::Purge::default();
    assert_eq!(yeyak::sweeper::purge::run(&mut conn, off, now).await.unwrap().anonymised, 0, "0 keeps names");
    drop(conn);

    let db = app.db().await;
    let title = |id: i64| {
        let db = &db;
        async move {
            db.query_one("SELECT title, organizer_name FROM reservation WHERE id = $1", &[&id])
                .await
                .unwrap()
                .get::<_, String>(0)
        }
    };
    assert_eq!(title(old).await, "—");
    assert_eq!(title(recent).await, "recent-review");
    assert_eq!(traces(&app, "old-review").await, 0, "history keeps no title either");
    assert_eq!(report(&app, "utilisation.csv", &d, &plus_days(&d, 3)).await, utilisation);
    let (status, json) = app.get_json(&format!("/api/bookings/{old}"), ADMIN).await;
    assert_eq!((status, json["title"].as_str(), json["organizer"].as_str()), (StatusCode::OK, Some("—"), Some("—")));
}
