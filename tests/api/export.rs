//! A person's data, to take away (SPEC §26): `/account/export` (the person)
//! and `GET /api/admin/staff/{username}/export` (an admin key, recorded)
//! answer one streamed JSON document with every section, no secret, no
//! other person named by the access records and no other person's bookings.

use std::collections::BTreeSet;

use reqwest::StatusCode;
use serde_json::Value;

use crate::app_passwords::make_app_password;
use crate::helpers::*;
use crate::web::{booked_id, tomorrow, Browser, Page, ADMIN_PASSWORD, ADMIN_USER};

/// Books room `room` from the day page's form, for `for_username` when given.
async fn book(
    b: &Browser<'_>,
    date: &str,
    title: &str,
    (start, end): (&str, &str),
    room: &str,
    extra: &[(&str, &str)],
) -> i64 {
    let page = b.get(&format!("/rooms?date={date}")).await;
    let (csrf, key) = (page.field("csrf_token"), page.field("idempotency_key"));
    let mut form = vec![
        ("title", title),
        ("date", date),
        ("start", start),
        ("end", end),
        ("rooms", room),
        ("csrf_token", &csrf),
        ("idempotency_key", &key),
    ];
    form.extend_from_slice(extra);
    let booked = b.post("/bookings", &form).await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{title}: {}", booked.html);
    booked_id(&booked)
}

async fn name_delegate(person: &Browser<'_>, delegate: &str) -> Page {
    let account = person.get("/account").await;
    person.post("/account/delegates", &[("username", delegate), ("csrf_token", &account.field("csrf_token"))]).await
}

async fn cancel(b: &Browser<'_>, id: i64) {
    let page = b.get(&format!("/bookings/{id}/cancel")).await;
    let done = b
        .post(
            &format!("/bookings/{id}/cancel"),
            &[("csrf_token", &page.field("csrf_token")), ("idempotency_key", &uuid::Uuid::new_v4().to_string())],
        )
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.html);
}

/// A download's headers checked and its body parsed; the raw text too.
async fn document(res: reqwest::Response) -> (Value, String) {
    assert_eq!(res.status(), StatusCode::OK);
    let headers = res.headers().clone();
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["content-disposition"], "attachment; filename=\"yeyak-export.json\"");
    let raw = res.text().await.unwrap();
    let doc: Value = serde_json::from_str(&raw).unwrap_or_else(|e| panic!("not JSON ({e}): {raw}"));
    (doc, raw)
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap_or_else(|| panic!("an object: {v}")).keys().cloned().collect()
}

fn titles(doc: &Value) -> BTreeSet<String> {
    doc["bookings"].as_array().unwrap().iter().map(|b| b["title"].as_str().unwrap().to_owned()).collect()
}

fn booking<'a>(doc: &'a Value, title: &str) -> &'a Value {
    doc["bookings"].as_array().unwrap().iter().find(|b| b["title"] == title).unwrap_or_else(|| panic!("{title}"))
}

/// The properties the OpenAPI document gives a component.
async fn documented(app: &TestApp, component: &str) -> BTreeSet<String> {
    let doc: Value = app.http.get(app.url("/api/openapi.json")).send().await.unwrap().json().await.unwrap();
    keys(&doc["components"]["schemas"][component]["properties"])
}

#[tokio::test]
async fn a_persons_export_holds_every_section_and_no_secret_and_names_no_one_who_looked() {
    let app = TestApp::spawn_with(|c| c.smtp_url = Some("smtp://127.0.0.1:9".into())).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim_id, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let (_, lee) = add_person_signed_in(&app, &admin, "lee", "이서준").await;
    let (_, park) = add_person_signed_in(&app, &admin, "park", "박지훈").await;
    let day = tomorrow(&app);

    // kim's own: one cancelled (two history entries), one private; lee
    // books one for kim; kim books one for park; park has her own.
    let planning = book(&kim, &day, "kim's planning", ("09:00", "10:00"), "A", &[]).await;
    cancel(&kim, planning).await;
    book(&kim, &day, "kim's 1:1", ("10:00", "11:00"), "B", &[("private", "1")]).await;
    assert_eq!(name_delegate(&kim, "lee").await.status, StatusCode::OK);
    book(&lee, &day, "lee for kim", ("11:00", "12:00"), "A", &[("for_username", "kim")]).await;
    assert_eq!(name_delegate(&park, "kim").await.status, StatusCode::OK);
    book(&kim, &day, "kim for park", ("13:00", "14:00"), "C", &[("for_username", "park")]).await;
    let parks = book(&park, &day, "park's own", ("15:00", "16:00"), "C", &[]).await;
    let (series, _) = crate::strikes::weekly_series_by_form(&app, &kim, 2).await;

    // A company identity, an app password, an away day.
    let db = app.db().await;
    db.execute(
        "INSERT INTO staff_identity (user_id, issuer, subject, created_at)
         VALUES ($1, 'https://id.example.com', 'kim-subject-42', now())",
        &[&kim_id],
    )
    .await
    .unwrap();
    let (_, secret) = make_app_password(&kim, "kim's phone").await;
    let digest: String = db.query_one("SELECT digest FROM app_password", &[]).await.unwrap().get(0);
    let account = kim.get("/account").await;
    let away =
        kim.post("/account/away", &[("from", &day), ("to", &day), ("csrf_token", &account.field("csrf_token"))]).await;
    assert_eq!(away.status, StatusCode::OK, "{}", away.html);

    // Admins look at kim's bookings: access records about her, naming them.
    let (status, _) = app.get_json(&format!("/api/bookings/{planning}/history"), ADMIN).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(admin.get(&format!("/bookings/{planning}")).await.status, StatusCode::OK);
    assert_eq!(app.get_json(&format!("/api/bookings/{parks}/history"), ADMIN).await.0, StatusCode::OK);
    let about_kim = app.count(&format!("SELECT count(*) FROM access_record WHERE subject = {kim_id}")).await;
    assert_eq!(about_kim, 2);
    let records_before = fingerprint(&app, &["access_record"]).await;

    // The page links both downloads, in both languages.
    for lang in ["ko", "en"] {
        let page = kim.get(&format!("/account?lang={lang}")).await;
        assert!(page.html.contains("href=\"/account/export\""), "{}", page.html);
        assert!(page.html.contains("href=\"/account/export.ics\""), "{}", page.html);
    }

    let (doc, raw) = document(kim.client.get(app.url("/account/export")).send().await.unwrap()).await;
    assert_eq!(keys(&doc), documented(&app, "PersonalExport").await, "the document is what OpenAPI says");

    let profile = &doc["profile"];
    assert_eq!(keys(profile), documented(&app, "ExportProfile").await);
    assert_eq!(profile["username"], "kim");
    assert_eq!(profile["displayName"], "김민지");
    assert_eq!(profile["email"], "kim@example.com");
    assert_eq!((profile["admin"].as_bool(), profile["disabled"].as_bool()), (Some(false), Some(false)));
    assert_eq!(profile["source"], "local");
    assert!(profile["createdAt"].is_string() && profile["lastSignInAt"].is_string(), "{profile}");

    let identities = doc["identities"].as_array().unwrap();
    assert_eq!(identities.len(), 1);
    assert_eq!(identities[0]["issuer"], "https://id.example.com");
    assert_eq!(identities[0]["subject"], "kim-subject-42");

    // Her bookings, those made for her and those she made for park; not park's own.
    assert_eq!(
        titles(&doc),
        ["kim's planning", "kim's 1:1", "lee for kim", "kim for park", "주간 회의"]
            .map(str::to_owned)
            .into_iter()
            .collect()
    );
    let starts: Vec<&str> =
        doc["bookings"].as_array().unwrap().iter().map(|b| b["startsAt"].as_str().unwrap()).collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "by start: {starts:?}");
    let cancelled = booking(&doc, "kim's planning");
    assert_eq!(keys(cancelled), documented(&app, "ExportBookingEntry").await);
    assert_eq!(cancelled["id"], planning);
    assert_eq!(cancelled["status"], "CANCELLED");
    assert_eq!(cancelled["rooms"], serde_json::json!(["A"]));
    let actions: Vec<&str> =
        cancelled["history"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["created", "cancelled"]);
    assert_eq!(keys(&cancelled["history"][0]), documented(&app, "ExportHistoryEntry").await);
    assert_eq!(cancelled["history"][0]["actor"], "김민지");
    assert_eq!(booking(&doc, "kim's 1:1")["private"], true);
    assert_eq!(booking(&doc, "kim's planning")["private"], false);
    let for_kim = booking(&doc, "lee for kim");
    assert_eq!((for_kim["organized"].as_bool(), for_kim["bookedBy"].as_str()), (Some(true), Some("lee")));
    assert_eq!(for_kim["history"][0]["actor"], "이서준");
    assert!(for_kim["history"][0]["onBehalfOf"].is_string(), "{for_kim}");
    let for_park = booking(&doc, "kim for park");
    assert_eq!((for_park["organized"].as_bool(), for_park["bookedBy"].as_str()), (Some(false), Some("kim")));
    assert!(!raw.contains("park's own"), "{raw}");

    // Her series, and its occurrences among her bookings.
    let all_series = doc["series"].as_array().unwrap();
    assert_eq!(all_series.len(), 1, "{all_series:?}");
    assert_eq!(keys(&all_series[0]), documented(&app, "ExportSeriesEntry").await);
    assert_eq!((all_series[0]["id"].as_i64(), all_series[0]["title"].as_str()), (Some(series), Some("주간 회의")));
    assert_eq!(
        (all_series[0]["organized"].as_bool(), &all_series[0]["rooms"]),
        (Some(true), &serde_json::json!(["K"]))
    );
    assert!(all_series[0]["recurrence"].as_str().unwrap().contains("WEEKLY"), "{all_series:?}");
    let occurrences = doc["bookings"].as_array().unwrap().iter().filter(|b| b["seriesId"] == series).count() as i64;
    assert_eq!(occurrences, app.count(&format!("SELECT count(*) FROM reservation WHERE series_id = {series}")).await);
    assert!(occurrences >= 2);

    let names = |list: &Value| -> Vec<String> {
        list.as_array().unwrap().iter().map(|p| p["username"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(names(&doc["delegations"]["delegates"]), ["lee"]);
    assert_eq!(names(&doc["delegations"]["delegateFor"]), ["park"]);

    let passwords = doc["appPasswords"].as_array().unwrap();
    assert_eq!(passwords.len(), 1);
    assert_eq!(keys(&passwords[0]), ["createdAt", "label", "lastUsedAt", "revokedAt"].map(str::to_owned).into());
    assert_eq!(passwords[0]["label"], "kim's phone");
    assert!(!raw.contains(&digest) && !raw.contains(&secret), "never an app password's digest or secret");
    let hash: String =
        db.query_one("SELECT password_hash FROM staff_user WHERE id = $1", &[&kim_id]).await.unwrap().get(0);
    assert!(!raw.contains(&hash), "never the password hash");

    let sessions = doc["sessions"].as_array().unwrap();
    assert!(!sessions.is_empty());
    assert!(sessions.iter().all(|s| keys(s) == ["createdAt", "expiresAt"].map(str::to_owned).into()), "{sessions:?}");

    let mails = doc["mailDeliveries"].as_array().unwrap();
    let to_kim = app
        .count(
            "SELECT count(*) FROM notification_outbox WHERE channel = 'mail' AND payload ->> 'to' = 'kim@example.com'",
        )
        .await;
    assert!(to_kim >= 3, "kim's bookings were mailed to her");
    assert_eq!(mails.len() as i64, to_kim, "{mails:?}");
    assert!(mails.iter().all(|m| m["kind"].as_str().unwrap().starts_with("booking.")), "{mails:?}");
    assert!(mails.iter().all(|m| keys(m) == documented_mail()), "{mails:?}");

    // Access records about her: when, what, how many; never who or from where.
    let records = doc["accessRecords"].as_array().unwrap();
    assert_eq!(records.len(), 2, "{records:?}");
    for r in records {
        assert_eq!(keys(r), ["at", "kind", "people"].map(str::to_owned).into(), "{r}");
        assert_eq!((r["kind"].as_str(), r["people"].as_i64()), (Some("history"), Some(1)));
    }
    assert!(!raw.contains("127.0.0.1") && !raw.contains("\"ops\""), "{raw}");

    assert_eq!(doc["awayDays"][0]["from"], day.as_str());
    assert_eq!(doc["awayDays"][0]["to"], day.as_str());

    // Her own export is no access record.
    assert_eq!(fingerprint(&app, &["access_record"]).await, records_before);

    // Signed out: the sign-in page, no data.
    let anonymous = Browser::new(&app).get("/account/export").await;
    assert_eq!(anonymous.status, StatusCode::SEE_OTHER);
    assert!(anonymous.location.unwrap().starts_with("/login?next="));
}

fn documented_mail() -> BTreeSet<String> {
    ["createdAt", "deliveredAt", "deliveryId", "kind", "status"].map(str::to_owned).into()
}

#[tokio::test]
async fn the_admin_export_is_recorded_first_and_an_unknown_person_or_a_non_admin_gets_nothing() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim_id, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let (park_id, park) = add_person_signed_in(&app, &admin, "park", "박지훈").await;
    let day = tomorrow(&app);
    book(&kim, &day, "kim's review", ("09:00", "10:00"), "A", &[]).await;
    book(&park, &day, "park's review", ("10:00", "11:00"), "B", &[]).await;
    let before = fingerprint(&app, &["access_record"]).await;

    // Unknown: 404 in the usual shape, nothing recorded.
    let (status, body) = app.get_json("/api/admin/staff/nobody/export", ADMIN).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["code"], "NOT_FOUND");
    assert!(body["message"].is_string(), "{body}");
    // Not an admin key, no key, a staff or admin session: refused, nothing recorded.
    let (status, body) = app.get_json("/api/admin/staff/kim/export", TENANT_ONE).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")), "{body}");
    let bare = app.http.get(app.url("/api/admin/staff/kim/export")).send().await.unwrap();
    assert_eq!(bare.status(), StatusCode::UNAUTHORIZED);
    for b in [&kim, &admin] {
        let res = b.client.get(app.url("/api/admin/staff/kim/export")).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    }
    assert_eq!(fingerprint(&app, &["access_record"]).await, before);

    // kim's export by an admin key (any spelling of her name): hers only, recorded once each.
    let (doc, raw) =
        document(app.request(reqwest::Method::GET, "/api/admin/staff/KIM/export", ADMIN, None).send().await.unwrap())
            .await;
    assert_eq!(doc["profile"]["username"], "kim");
    assert_eq!(titles(&doc), ["kim's review".to_owned()].into());
    assert!(!raw.contains("park"), "{raw}");
    let db = app.db().await;
    let rows = db
        .query(
            "SELECT actor_name, actor_tenant, subject, people, host(address) FROM access_record WHERE kind = 'export'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.get::<_, String>(0), "ops");
    assert_eq!(row.get::<_, Option<String>>(1).as_deref(), Some("ops"));
    assert_eq!(row.get::<_, Option<i64>>(2), Some(kim_id));
    assert_eq!(row.get::<_, i32>(3), 1);
    assert_eq!(row.get::<_, Option<String>>(4).as_deref(), Some("127.0.0.1"));

    let (doc, raw) =
        document(app.request(reqwest::Method::GET, "/api/admin/staff/park/export", ADMIN, None).send().await.unwrap())
            .await;
    assert_eq!(titles(&doc), ["park's review".to_owned()].into());
    assert!(!raw.contains("kim"), "{raw}");
    let (log_status, log) = app.get_json("/api/admin/access-log", ADMIN).await;
    assert_eq!(log_status, StatusCode::OK);
    let exports: Vec<&str> = log["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "export")
        .map(|r| r["subject"].as_str().unwrap())
        .collect();
    assert_eq!(exports, ["park", "kim"], "newest first");
    // Her export's record is about her: the next export of hers lists it.
    let (doc, _) =
        document(app.request(reqwest::Method::GET, "/api/admin/staff/kim/export", ADMIN, None).send().await.unwrap())
            .await;
    let kinds: Vec<&str> =
        doc["accessRecords"].as_array().unwrap().iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["export", "export"], "the earlier one and this one, recorded before the snapshot");
    assert_eq!(app.count(&format!("SELECT count(*) FROM access_record WHERE subject = {park_id}")).await, 1);
}

#[tokio::test]
async fn pages_of_bookings_cross_their_boundaries_without_a_gap_or_a_repeat() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim_id, kim) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    let (lee_id, _) = add_person_signed_in(&app, &admin, "lee", "이서준").await;
    // 2,000 bookings, three to a start (ties broken by id across pages):
    // kim organizes the even ones, lee the odd ones kim made for him
    // (every third of those) or not; each with two history entries.
    let db = app.db().await;
    db.batch_execute(&format!(
        "INSERT INTO reservation (title, organizer_name, organizer_digest, organizer_staff_id, booked_by,
                                  starts_at, ends_at, created_at, updated_at)
         SELECT 'b' || n, CASE WHEN n % 2 = 0 THEN '김민지' ELSE '이서준' END, 'bulk',
                CASE WHEN n % 2 = 0 THEN {kim_id} ELSE {lee_id} END,
                CASE WHEN n % 2 = 1 AND n % 3 = 0 THEN {kim_id} END,
                timestamptz '2030-01-01 00:00+00' + (n / 3) * interval '1 hour',
                timestamptz '2030-01-01 00:30+00' + (n / 3) * interval '1 hour', now(), now()
           FROM generate_series(1, 2000) n;
         INSERT INTO booking_event (reservation_id, at, action, actor, changes)
         SELECT r.id, r.created_at, a, r.organizer_name, '{{}}'::jsonb
           FROM reservation r, unnest(ARRAY['created', 'moved']) a;"
    ))
    .await
    .unwrap();
    let expected: Vec<i64> = db
        .query(
            &format!(
                "SELECT id FROM reservation WHERE organizer_staff_id = {kim_id} OR booked_by = {kim_id}
                  ORDER BY starts_at, id"
            ),
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(expected.len() > 2 * 500, "more than two pages: {}", expected.len());

    let statements = app.state.db_stats.statements();
    let (doc, _) = document(kim.client.get(app.url("/account/export")).send().await.unwrap()).await;
    let sent = app.state.db_stats.statements() - statements;
    let got: Vec<i64> = doc["bookings"].as_array().unwrap().iter().map(|b| b["id"].as_i64().unwrap()).collect();
    assert_eq!(got, expected);
    assert!(doc["bookings"].as_array().unwrap().iter().all(|b| b["history"].as_array().unwrap().len() == 2));
    // Three statements a page of bookings, not one a booking.
    assert!(sent < 40, "{sent} statements for {} bookings", got.len());

    // A client that leaves after the first chunk leaves no transaction
    // open: the pool closes the connection its stream held.
    let mut res = kim.client.get(app.url("/account/export")).send().await.unwrap();
    assert!(res.chunk().await.unwrap().is_some_and(|c| c.starts_with(b"{\"exportedAt\":")));
    drop(res);
    assert_eq!(until_open(&db, 0).await, 0, "a transaction left open");
    let (again, _) = document(kim.client.get(app.url("/account/export")).send().await.unwrap()).await;
    assert_eq!(again["bookings"].as_array().unwrap().len(), expected.len());
}

/// `idle in transaction` backends of this test's database but the asker's.
async fn open_transactions(db: &tokio_postgres::Client) -> i64 {
    db.query_one(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
            AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()",
        &[],
    )
    .await
    .unwrap()
    .get(0)
}

/// Polls until `open_transactions` is `n` (5 s at most); the last count.
async fn until_open(db: &tokio_postgres::Client, n: i64) -> i64 {
    let mut seen = -1;
    for _ in 0..100 {
        seen = open_transactions(db).await;
        if seen == n {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    seen
}

#[tokio::test]
async fn a_client_that_stops_reading_holds_its_snapshot_and_one_that_leaves_gives_it_back() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let (kim_id, _) = add_person_signed_in(&app, &admin, "kim", "김민지").await;
    // About 16 MB of history: more than the sockets' buffers hold.
    let db = app.db().await;
    db.batch_execute(&format!(
        "INSERT INTO reservation (title, organizer_name, organizer_digest, organizer_staff_id, starts_at, ends_at,
                                  created_at, updated_at)
         SELECT 'b' || n, '김민지', 'bulk', {kim_id}, timestamptz '2030-01-01 00:00+00' + n * interval '1 hour',
                timestamptz '2030-01-01 00:30+00' + n * interval '1 hour', now(), now()
           FROM generate_series(1, 800) n;
         INSERT INTO booking_event (reservation_id, at, action, actor, changes)
         SELECT r.id, r.created_at, 'created', r.organizer_name,
                jsonb_build_object('note', jsonb_build_object('before', null, 'after', repeat('x', 20000)))
           FROM reservation r;"
    ))
    .await
    .unwrap();

    // A client with a small window that reads the headers and stops.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(app.address.trim_start_matches("http://").parse().unwrap()).await.unwrap();
    let ask =
        format!("GET /api/admin/staff/kim/export HTTP/1.1\r\nHost: yeyak\r\nAuthorization: Bearer {ADMIN}\r\n\r\n");
    stream.write_all(ask.as_bytes()).await.unwrap();
    let mut head = vec![0u8; 1024];
    let n = stream.read(&mut head).await.unwrap();
    assert!(head[..n].starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&head[..n]));
    // The writer comes to wait for the client: no statement is sent any
    // more while its snapshot stays open.
    let mut still = false;
    for _ in 0..20 {
        let statements = app.state.db_stats.statements();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        if app.state.db_stats.statements() == statements {
            still = true;
            break;
        }
    }
    assert!(still, "the export kept reading while the client read nothing");
    assert_eq!(open_transactions(&db).await, 1, "the stalled export holds its transaction");
    // It leaves: the pool closes the connection, no transaction stays open.
    drop(stream);
    assert_eq!(until_open(&db, 0).await, 0, "a transaction left open");
    let (status, _) = app.get_json("/api/admin/staff", ADMIN).await;
    assert_eq!(status, StatusCode::OK, "the pool still serves");
}
