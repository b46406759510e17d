//! People (SPEC §25): delegates book, change and cancel for a person on
//! pages and CalDAV, the person is the organizer (rules, quota, history,
//! mail follow), a removed delegate changes nothing — even one in flight —
//! and staff administration over JSON.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::caldav::{invite, Dav};
use crate::helpers::*;
use crate::web::{tomorrow, Browser, Page, ADMIN_PASSWORD, ADMIN_USER};

pub(crate) async fn name_delegate(person: &Browser<'_>, delegate: &str) -> Page {
    let account = person.get("/account").await;
    person.post("/account/delegates", &[("username", delegate), ("csrf_token", &account.field("csrf_token"))]).await
}

/// Books from the day page's form for `for_username`.
pub(crate) async fn book_for(
    b: &Browser<'_>,
    date: &str,
    title: &str,
    start: &str,
    end: &str,
    for_username: &str,
) -> Page {
    let page = b.get(&format!("/rooms?date={date}")).await;
    let (csrf, key) = (page.field("csrf_token"), page.field("idempotency_key"));
    b.post(
        "/bookings",
        &[
            ("title", title),
            ("date", date),
            ("start", start),
            ("end", end),
            ("rooms", "A"),
            ("for_username", for_username),
            ("csrf_token", &csrf),
            ("idempotency_key", &key),
        ],
    )
    .await
}

async fn cancel_page(b: &Browser<'_>, id: i64) -> Page {
    let page = b.get(&format!("/bookings/{id}/cancel")).await;
    b.post(
        &format!("/bookings/{id}/cancel"),
        &[("csrf_token", &page.field("csrf_token")), ("idempotency_key", &uuid::Uuid::new_v4().to_string())],
    )
    .await
}

#[tokio::test]
async fn a_delegate_books_changes_and_cancels_for_the_person_until_removed() {
    let app = TestApp::spawn_with(|c| {
        c.smtp_url = Some("smtp://127.0.0.1:9".into());
        c.max_active_bookings = Some(2);
    })
    .await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim_id, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let (lee_id, lee) = add_person_signed_in(&app, &admin, "lee", "이서준").await;
    let day = tomorrow(&app);

    // Before kim names lee, lee may not book for kim.
    let refused = book_for(&lee, &day, "대리 예약", "09:00", "10:00", "kim").await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.html);
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 0);

    let named = name_delegate(&kim, "LEE").await;
    assert_eq!(named.status, StatusCode::OK, "{}", named.html);
    assert!(named.html.contains("이서준 (lee)"), "{}", named.html);
    let lee_day = lee.get(&format!("/rooms?date={day}")).await;
    assert!(
        lee_day.html.contains("name=\"for_username\"") && lee_day.html.contains("value=\"kim\""),
        "{}",
        lee_day.html
    );

    let booked = book_for(&lee, &day, "대리 예약", "09:00", "10:00", "kim").await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    let id = crate::web::booked_id(&booked);
    let db = app.db().await;
    let row = db
        .query_one("SELECT organizer_staff_id, booked_by, organizer_name FROM reservation WHERE id = $1", &[&id])
        .await
        .unwrap();
    assert_eq!(
        (row.get::<_, Option<i64>>(0), row.get::<_, Option<i64>>(1), row.get::<_, String>(2)),
        (Some(kim_id), Some(lee_id), "김민지".to_owned())
    );
    let (status, json) = app.get_json(&format!("/api/bookings/{id}"), ADMIN).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!((json["organizer"].as_str(), json["bookedBy"].as_str()), (Some("김민지"), Some("lee")));
    // Both get the mail.
    let to: Vec<String> = db
        .query(
            "SELECT payload ->> 'to' FROM notification_outbox WHERE channel = 'mail' AND kind = 'booking.created' ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(to, ["kim@example.com", "lee@example.com"]);
    // The history names both, in the page's language.
    let page = kim.get(&format!("/bookings/{id}")).await;
    assert!(page.html.contains("이서준 (김민지 대신)"), "{}", page.html);
    let (_, history) = app.get_json(&format!("/api/bookings/{id}/history"), ADMIN).await;
    assert_eq!(
        (history["events"][0]["actor"].as_str(), history["events"][0]["onBehalfOf"].as_str()),
        (Some("이서준"), Some("김민지"))
    );

    // kim's quota counts it: one more of kim's own, then lee's third is refused.
    assert_eq!(kim.book(&day, "내 회의", "11:00", "12:00", &["A"]).await.status, StatusCode::SEE_OTHER);
    let over = book_for(&lee, &day, "세 번째", "13:00", "14:00", "kim").await;
    assert_eq!(over.status, StatusCode::CONFLICT, "{}", over.html);
    // lee's own quota is untouched.
    assert_eq!(lee.book(&day, "이서준 회의", "15:00", "16:00", &["A"]).await.status, StatusCode::SEE_OTHER);

    // lee changes kim's booking: the page offers it, the move runs as kim.
    let detail = lee.get(&format!("/bookings/{id}")).await;
    let moved = lee
        .post(
            &format!("/bookings/{id}/move"),
            &[
                ("date", &day),
                ("start", "09:30"),
                ("end", "10:30"),
                ("csrf_token", &detail.field("csrf_token")),
                ("idempotency_key", &uuid::Uuid::new_v4().to_string()),
            ],
        )
        .await;
    assert_eq!(moved.status, StatusCode::SEE_OTHER, "{}", moved.html);

    // kim removes lee; lee can no longer cancel, and nothing changes.
    let account = kim.get("/account").await;
    let removed = kim.post("/account/delegates/lee/remove", &[("csrf_token", &account.field("csrf_token"))]).await;
    assert_eq!(removed.status, StatusCode::OK, "{}", removed.html);
    let before = fingerprint(&app, &["reservation", "reservation_room", "booking_event"]).await;
    let refused = cancel_page(&lee, id).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.html);
    let refused = book_for(&lee, &day, "또", "17:00", "18:00", "kim").await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.html);
    assert_eq!(fingerprint(&app, &["reservation", "reservation_room", "booking_event"]).await, before);
    app.assert_consistent().await;
}

#[tokio::test]
async fn bad_delegations_are_refused_and_change_nothing() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (_, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let before = fingerprint(&app, &["delegation"]).await;
    assert_eq!(name_delegate(&kim, "nobody").await.status, StatusCode::BAD_REQUEST);
    assert_eq!(name_delegate(&kim, "kim").await.status, StatusCode::BAD_REQUEST);
    assert_eq!(name_delegate(&kim, "KIM").await.status, StatusCode::BAD_REQUEST);
    let account = kim.get("/account").await;
    let not_one = kim.post("/account/delegates/admin/remove", &[("csrf_token", &account.field("csrf_token"))]).await;
    assert_eq!(not_one.status, StatusCode::NOT_FOUND);
    // Booking for someone unknown names the field.
    let unknown = book_for(&kim, &tomorrow(&app), "t", "09:00", "10:00", "nobody").await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST, "{}", unknown.html);
    assert_eq!(fingerprint(&app, &["delegation"]).await, before);
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 0);
    // Without a CSRF token: refused like every form.
    let forged = kim.post("/account/delegates", &[("username", "admin")]).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    assert_eq!(fingerprint(&app, &["delegation"]).await, before);
}

#[tokio::test]
async fn an_admin_sets_anyones_delegates_on_the_staff_page() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim_id, _) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    add_person_signed_in(&app, &admin, "lee", "이서준").await;
    add_person_signed_in(&app, &admin, "park", "박지훈").await;
    let page = admin.get("/admin/staff").await;
    let set = admin
        .post(
            &format!("/admin/staff/{kim_id}/delegates"),
            &[("delegates", "lee, PARK"), ("csrf_token", &page.field("csrf_token"))],
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.html);
    assert!(set.html.contains("value=\"lee, park\""), "{}", set.html);
    let (_, listed) = app.get_json("/api/admin/staff", ADMIN).await;
    let kim = listed["staff"].as_array().unwrap().iter().find(|s| s["username"] == "kim").unwrap().clone();
    assert_eq!(kim["delegates"], json!(["lee", "park"]));
    // An unknown name refuses the whole list; the delegates stay as they were.
    let refused = admin
        .post(
            &format!("/admin/staff/{kim_id}/delegates"),
            &[("delegates", "lee nobody"), ("csrf_token", &page.field("csrf_token"))],
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.html);
    assert_eq!(app.count("SELECT count(*) FROM delegation").await, 2);
    // Emptied, none.
    let cleared = admin
        .post(
            &format!("/admin/staff/{kim_id}/delegates"),
            &[("delegates", ""), ("csrf_token", &page.field("csrf_token"))],
        )
        .await;
    assert_eq!(cleared.status, StatusCode::OK);
    assert_eq!(app.count("SELECT count(*) FROM delegation").await, 0);
}

#[tokio::test]
async fn a_removal_waits_for_the_delegates_command_in_flight_and_then_bars_the_next() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim_id, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let (lee_id, lee) = add_person_signed_in(&app, &admin, "lee", "이서준").await;
    assert_eq!(name_delegate(&kim, "lee").await.status, StatusCode::OK);
    // A delegate's command holds the delegation FOR KEY SHARE to its commit:
    // here a transaction of ours stands in for one in flight.
    let mut holder = app.db().await;
    let tx = holder.transaction().await.unwrap();
    tx.execute("SELECT 1 FROM delegation WHERE person = $1 AND delegate = $2 FOR KEY SHARE", &[&kim_id, &lee_id])
        .await
        .unwrap();
    let account = kim.get("/account").await;
    let csrf = account.field("csrf_token");
    let form = [("csrf_token", csrf.as_str())];
    let removal = kim.post("/account/delegates/lee/remove", &form);
    let observer = app.db().await;
    let waited = async {
        until_waiting_for_locks(&observer, 1).await;
        tx.commit().await.unwrap();
    };
    let (removed, ()) = tokio::join!(removal, waited);
    assert_eq!(removed.status, StatusCode::OK, "{}", removed.html);
    assert_eq!(app.count("SELECT count(*) FROM delegation").await, 0);
    let refused = book_for(&lee, &tomorrow(&app), "늦은 대리 예약", "09:00", "10:00", "kim").await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.html);
}

#[tokio::test]
async fn a_delegate_writes_the_persons_calendar_collection() {
    let app = TestApp::spawn().await;
    let kim = Dav::person(&app, "kim").await;
    let lee = Dav::person(&app, "lee").await;
    let path = "/dav/calendars/kim/bookings/delegated.ics";
    let ics = invite("delegated-1", "대리 일정", &["A"], 1, 1, 2);
    let headers = [("Content-Type", "text/calendar; charset=utf-8")];
    // Not yet a delegate: kim's collection is not lee's.
    assert_eq!(lee.send("PUT", path, &headers, &ics).await.status, StatusCode::FORBIDDEN);
    let kim_pages = Browser::new(&app);
    kim_pages.sign_in("kim", "correct-horse-1").await;
    assert_eq!(name_delegate(&kim_pages, "lee").await.status, StatusCode::OK);
    let put = lee.send("PUT", path, &headers, &ics).await;
    assert_eq!(put.status, StatusCode::CREATED, "{}", put.body);
    let db = app.db().await;
    let row = db
        .query_one("SELECT r.organizer_staff_id, r.booked_by FROM reservation r WHERE r.title = '대리 일정'", &[])
        .await
        .unwrap();
    let ids: Vec<i64> = db
        .query("SELECT id FROM staff_user WHERE username IN ('kim', 'lee') ORDER BY username", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!((row.get::<_, Option<i64>>(0), row.get::<_, Option<i64>>(1)), (Some(ids[0]), Some(ids[1])));
    // kim sees it in her own collection; lee's own collection does not hold it.
    let listed = kim.send("PROPFIND", "/dav/calendars/kim/bookings/", &[("Depth", "1")], "").await;
    assert!(listed.body.contains("delegated.ics"), "{}", listed.body);
    let own = lee.send("PROPFIND", "/dav/calendars/lee/bookings/", &[("Depth", "1")], "").await;
    assert!(!own.body.contains("delegated.ics"), "{}", own.body);
    // The delegate deletes it again.
    assert_eq!(lee.send("DELETE", path, &[], "").await.status, StatusCode::NO_CONTENT);
    assert_eq!(app.count("SELECT count(*) FROM reservation WHERE status = 'CANCELLED'").await, 1);
}

async fn staff_api(app: &TestApp, method: Method, path: &str, key: &str, body: Option<Value>) -> (StatusCode, Value) {
    let mut req = app.request(method, path, key, None);
    if let Some(body) = body {
        req = req.header("Idempotency-Key", uuid::Uuid::new_v4().to_string()).json(&body);
    }
    crate::helpers::body(req.send().await.unwrap()).await
}

#[tokio::test]
async fn staff_administration_over_json() {
    let app = TestApp::spawn().await;
    // Integration keys may not.
    let (status, _) = staff_api(&app, Method::GET, "/api/admin/staff", TENANT_ONE, None).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let new = json!({"username": "kim", "password": "correct-horse-1", "displayName": "김민지", "email": "kim@example.com", "language": "en"});
    let res = app
        .request(Method::POST, "/api/admin/staff", ADMIN, None)
        .header("Idempotency-Key", "kim-1")
        .json(&new)
        .send()
        .await
        .unwrap();
    let (status, kim) = body(res).await;
    assert_eq!(status, StatusCode::CREATED, "{kim}");
    assert_eq!(
        (kim["username"].as_str(), kim["displayName"].as_str(), kim["language"].as_str(), kim["source"].as_str()),
        (Some("kim"), Some("김민지"), Some("en"), Some("local"))
    );
    // The same key replays; without one it is refused.
    let res = app
        .request(Method::POST, "/api/admin/staff", ADMIN, None)
        .header("Idempotency-Key", "kim-1")
        .json(&new)
        .send()
        .await
        .unwrap();
    assert_eq!(body(res).await, (StatusCode::CREATED, kim.clone()));
    let res = app.request(Method::POST, "/api/admin/staff", ADMIN, None).json(&new).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    // Usernames compare case-insensitively.
    let (status, taken) = staff_api(
        &app,
        Method::POST,
        "/api/admin/staff",
        ADMIN,
        Some(json!({"username": "KIM", "password": "correct-horse-1"})),
    )
    .await;
    assert_eq!((status, taken["code"].as_str()), (StatusCode::CONFLICT, Some("USERNAME_TAKEN")));
    let (status, _) = staff_api(
        &app,
        Method::POST,
        "/api/admin/staff",
        ADMIN,
        Some(json!({"username": "lee", "password": "correct-horse-1"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);

    // A change: delegates and profile in one transaction; any spelling of the path.
    let (status, changed) = staff_api(
        &app,
        Method::PATCH,
        "/api/admin/staff/Kim",
        ADMIN,
        Some(json!({"displayName": "김민지 팀장", "delegates": ["LEE"], "timeZone": "Europe/Berlin"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["delegates"], json!(["lee"]));
    assert_eq!(
        (changed["displayName"].as_str(), changed["timeZone"].as_str()),
        (Some("김민지 팀장"), Some("Europe/Berlin"))
    );

    // Bad input changes nothing.
    let before = fingerprint(&app, &["staff_user", "delegation"]).await;
    for (path, patch, code) in [
        ("/api/admin/staff/kim", json!({"delegates": ["nobody"], "displayName": "x"}), StatusCode::BAD_REQUEST),
        ("/api/admin/staff/kim", json!({"delegates": ["kim"]}), StatusCode::BAD_REQUEST),
        ("/api/admin/staff/kim", json!({"timeZone": "Mars/Base"}), StatusCode::BAD_REQUEST),
        ("/api/admin/staff/kim", json!({"language": "fr"}), StatusCode::BAD_REQUEST),
        ("/api/admin/staff/kim", json!({"shoeSize": 3}), StatusCode::BAD_REQUEST),
        ("/api/admin/staff/nobody", json!({"displayName": "x"}), StatusCode::NOT_FOUND),
    ] {
        let (status, answer) = staff_api(&app, Method::PATCH, path, ADMIN, Some(patch.clone())).await;
        assert_eq!(status, code, "{patch}: {answer}");
    }
    assert_eq!(fingerprint(&app, &["staff_user", "delegation"]).await, before);

    // Disabling over JSON ends the person's sign-in like the page does.
    let lee = Browser::new(&app);
    assert_eq!(lee.sign_in("lee", "correct-horse-1").await.status, StatusCode::SEE_OTHER);
    let (status, _) =
        staff_api(&app, Method::PATCH, "/api/admin/staff/lee", ADMIN, Some(json!({"disabled": true}))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(lee.get("/my").await.status, StatusCode::SEE_OTHER);

    // Away days (SPEC §28) show in the list.
    app.db()
        .await
        .execute(
            "INSERT INTO staff_away (staff_id, from_date, to_date)
             SELECT id, current_date + 30, current_date + 32 FROM staff_user WHERE username = 'kim'",
            &[],
        )
        .await
        .unwrap();
    // Pages of 500 by username.
    app.db()
        .await
        .batch_execute(
            "INSERT INTO staff_user (username, display_name, password_hash, source)
             SELECT 'p' || lpad(n::text, 4, '0'), 'P ' || n, '!', 'oidc' FROM generate_series(1, 600) n",
        )
        .await
        .unwrap();
    let (status, first) = staff_api(&app, Method::GET, "/api/admin/staff", ADMIN, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(first["staff"].as_array().unwrap().len(), 500);
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let (_, second) = staff_api(&app, Method::GET, &format!("/api/admin/staff?cursor={cursor}"), ADMIN, None).await;
    let all: Vec<&str> = first["staff"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["staff"].as_array().unwrap())
        .map(|s| s["username"].as_str().unwrap())
        .collect();
    assert_eq!(all.len(), 603, "admin, kim, lee and 600");
    assert!(second["nextCursor"].is_null());
    let kim_row = first["staff"].as_array().unwrap().iter().find(|s| s["username"] == "kim").unwrap();
    assert_eq!(kim_row["delegates"], json!(["lee"]));
    let db = app.db().await;
    let span = db.query_one("SELECT (current_date + 30)::text, (current_date + 32)::text", &[]).await.unwrap();
    let (from, to): (String, String) = (span.get(0), span.get(1));
    assert_eq!(kim_row["away"], json!([{"from": from, "to": to}]));
    let (status, _) = staff_api(&app, Method::GET, "/api/admin/staff?cursor=%00", ADMIN, None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn local_accounts_over_json_need_password_sign_in_on() {
    let app = TestApp::spawn_with(|c| c.password_login = yeyak::auth::PasswordLogin::AdminOnly).await;
    let before = fingerprint(&app, &["staff_user"]).await;
    let (status, answer) = staff_api(
        &app,
        Method::POST,
        "/api/admin/staff",
        ADMIN,
        Some(json!({"username": "kim", "password": "correct-horse-1"})),
    )
    .await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::BAD_REQUEST, Some("PASSWORD_LOGIN_OFF")));
    assert_eq!(fingerprint(&app, &["staff_user"]).await, before);
}
