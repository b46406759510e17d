//! Sync tokens that wait on nothing but their own collection (SPEC §23): a
//! committed change appears in the next `sync-collection` and only once,
//! whatever other transactions are open on the database server.

use reqwest::StatusCode;
use serde_json::json;

use crate::caldav::Dav;
use crate::helpers::*;

fn sync(token: &str) -> String {
    format!(
        r#"<d:sync-collection xmlns:d="DAV:"><d:sync-token>{token}</d:sync-token><d:sync-level>1</d:sync-level>
           <d:prop><d:getetag/></d:prop></d:sync-collection>"#
    )
}

fn token_of(body: &str) -> String {
    body.split("<D:sync-token>").last().unwrap().split("</D:sync-token>").next().unwrap().to_owned()
}

#[tokio::test]
async fn a_long_transaction_elsewhere_on_the_server_holds_no_sync_back() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    // A long transaction with a transaction id, in another database of the
    // same server (a report, a backup, another application).
    let other = connect("postgres").await;
    other.batch_execute("BEGIN; SELECT pg_current_xact_id()").await.unwrap();

    let first = dav.report("/dav/calendars/rooms/A/", &sync("")).await;
    assert_eq!(first.status, StatusCode::MULTI_STATUS, "{}", first.body);
    let t0 = token_of(&first.body);
    let (_, made) =
        post(&app, "/api/bookings", TENANT_ONE, "o", "k1", booking("api", &["A"], &at(1, 1, 0), &at(1, 2, 0))).await;
    let id = made["id"].as_i64().unwrap();
    let name = format!("booking-{id}.ics");
    let changed = dav.report("/dav/calendars/rooms/A/", &sync(&t0)).await;
    assert!(changed.body.contains(&name), "the new booking: {}", changed.body);
    let t1 = token_of(&changed.body);
    // Reported once: the next sync has nothing new (with tokens made from
    // the server's oldest open transaction it came again at every sync).
    for _ in 0..4 {
        let again = dav.report("/dav/calendars/rooms/A/", &sync(&t1)).await;
        assert!(!again.body.contains("<D:response>"), "reported again: {}", again.body);
        assert_eq!(token_of(&again.body), t1);
    }
    // And the next change is seen while the other transaction still runs.
    let cancelled = app.cancel_booking(TENANT_ONE, "o", id, None, &json!({})).await;
    assert_eq!(cancelled.status(), StatusCode::OK);
    let removed = dav.report("/dav/calendars/rooms/A/", &sync(&t1)).await;
    assert!(removed.body.contains(&name) && removed.body.contains("404 Not Found"), "{}", removed.body);
    other.batch_execute("ROLLBACK").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_changes_of_one_collection_are_each_reported_once() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let t0 = token_of(&dav.report("/dav/calendars/rooms/A/", &sync("")).await.body);
    // Twenty bookings of room A at once, each its own hour.
    let made = futures_util::future::join_all((0..20).map(|h| {
        let app = &app;
        async move {
            let body = booking("burst", &["A"], &at(2, h, 0), &at(2, h + 1, 0));
            post(app, "/api/bookings", TENANT_ONE, "o", &format!("burst-{h}"), body).await.1["id"].as_i64().unwrap()
        }
    }))
    .await;
    // Synced in small steps while nothing else changes: every booking
    // arrives, none twice, and the last token is stable.
    let changed = dav.report("/dav/calendars/rooms/A/", &sync(&t0)).await;
    let t1 = token_of(&changed.body);
    for id in &made {
        let name = format!("booking-{id}.ics");
        assert_eq!(changed.body.matches(&name).count(), 1, "{name}: {}", changed.body);
    }
    let again = dav.report("/dav/calendars/rooms/A/", &sync(&t1)).await;
    assert!(!again.body.contains("<D:response>"), "{}", again.body);
}

#[tokio::test]
async fn a_persons_sync_names_their_objects_as_they_named_them_and_reports_deletions() {
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let home = "/dav/calendars/kim/bookings/";
    let t0 = token_of(&dav.report(home, &sync("")).await.body);
    let meet = crate::caldav::invite("meet-1", "주간 회의", &["A"], 1, 1, 2);
    assert_eq!(dav.put("meet.ics", &meet, &[]).await.status, StatusCode::CREATED);
    let todo = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VTODO\r\nUID:todo-1\r\n\
                DTSTAMP:20300101T000000Z\r\nSUMMARY:보고서\r\nEND:VTODO\r\nEND:VCALENDAR\r\n";
    assert_eq!(dav.put("todo.ics", todo, &[]).await.status, StatusCode::CREATED);

    let changed = dav.report(home, &sync(&t0)).await;
    assert_eq!(changed.status, StatusCode::MULTI_STATUS, "{}", changed.body);
    assert!(changed.body.contains(&format!("{home}meet.ics")) && changed.body.contains(&format!("{home}todo.ics")));
    assert!(!changed.body.contains("booking-"), "the booking is the object, not a member of its own: {}", changed.body);
    assert_eq!(changed.body.matches("<D:getetag>").count(), 2, "{}", changed.body);
    let t1 = token_of(&changed.body);

    // Its booking cancelled through another door: the object is reported
    // (still there), under the person's name for it.
    let id: i64 = app
        .db()
        .await
        .query_one("SELECT reservation_id FROM dav_event WHERE uid = 'meet-1'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(app.cancel_booking(ADMIN, "ops", id, None, &json!({})).await.status(), StatusCode::OK);
    let after_cancel = dav.report(home, &sync(&t1)).await;
    let response = after_cancel.body.split("<D:response>").nth(1).expect("one response");
    assert!(response.contains("meet.ics") && response.contains("<D:getetag>"), "{}", after_cancel.body);
    assert!(!after_cancel.body.contains(&format!("booking-{id}.ics")), "{}", after_cancel.body);
    let t2 = token_of(&after_cancel.body);

    // Deleted: reported gone, by its name.
    assert_eq!(dav.send("DELETE", &format!("{home}todo.ics"), &[], "").await.status, StatusCode::NO_CONTENT);
    let gone = dav.report(home, &sync(&t2)).await;
    let response = gone.body.split("<D:response>").nth(1).expect("one response");
    assert!(response.contains("todo.ics") && response.contains("404 Not Found"), "{}", gone.body);
    assert_eq!(gone.body.matches("<D:response>").count(), 1, "{}", gone.body);
    let all = dav.report(home, &sync("")).await;
    assert!(all.body.contains("meet.ics") && !all.body.contains("todo.ics"), "{}", all.body);
}
