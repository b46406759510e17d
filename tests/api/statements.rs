//! Round trips per request: hot statements are prepared once per connection,
//! and a checkout sends nothing.

use diesel::prelude::*;
use diesel::sql_types::BigInt;
use diesel_async::RunQueryDsl;
use serde_json::json;
use yeyak::db::cached::CacheExt;
use yeyak::db::schema::room;

use crate::helpers::{post, TestApp, TENANT_ONE};

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Prepared statements on this connection whose text starts with `prefix`.
async fn prepared(conn: &mut yeyak::db::Conn, prefix: &str) -> i64 {
    diesel::sql_query("SELECT count(*) AS n FROM pg_prepared_statements WHERE statement LIKE $1 || '%'")
        .bind::<diesel::sql_types::Text, _>(prefix)
        .get_result::<Count>(conn)
        .await
        .unwrap()
        .n
}

#[tokio::test]
async fn a_cached_update_is_prepared_once_and_reused() {
    let app = TestApp::spawn().await;
    let mut conn = yeyak::db::establish(&app.database_url()).await.unwrap();
    for name in ["first", "second", "third"] {
        let n = diesel::update(room::table.filter(room::code.eq("A")))
            .set(room::name.eq(name))
            .cached()
            .execute(&mut conn)
            .await
            .unwrap();
        assert_eq!(n, 1);
    }
    assert_eq!(prepared(&mut conn, "UPDATE \"room\"").await, 1, "one prepared statement serves all three");

    // diesel alone prepares such an UPDATE again on every call (a Parse and
    // its round trip each time) and never keeps it.
    for name in ["fourth", "fifth"] {
        diesel::update(room::table.filter(room::code.eq("B")))
            .set(room::name.eq(name))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    assert_eq!(prepared(&mut conn, "UPDATE \"room\"").await, 1, "the uncached statements were not kept");
    let name: String = room::table.find("A").select(room::name).first(&mut conn).await.unwrap();
    assert_eq!(name, "third", "the cached statement ran with each call's binds");
}

#[tokio::test]
async fn a_hold_sends_eight_statements_and_no_checkout_probe() {
    let app = TestApp::spawn().await;
    let admin = crate::helpers::ADMIN;
    let (status, resource) =
        post(&app, "/api/resources", admin, "ops", "r1", json!({"code": "stmt", "name": "s", "capacity": 10})).await;
    assert_eq!(status, 201, "{resource}");
    let path = format!("/api/resources/{}/holds", resource["id"]);
    let before = app.state.db_stats.statements();
    for i in 0..5 {
        let (status, body) = post(&app, &path, TENANT_ONE, "owner", &format!("h{i}"), json!({})).await;
        assert_eq!(status, 201, "{body}");
    }
    let sent = app.state.db_stats.statements() - before;
    // BEGIN, claim (advisory try-lock + INSERT in one statement), SAVEPOINT,
    // conditional UPDATE, hold INSERT, RELEASE, finalize, COMMIT; no
    // `SELECT 1` on checkout.
    assert_eq!(sent, 5 * 8, "statements for five holds");
}

/// Statements one request of each write kind sends, measured by the
/// server's own counter over three requests each (after one to warm the
/// prepared statements). The report's pgbench ceilings must send the same
/// number (`benches/report` refuses a ceiling whose script differs from the
/// count it measures); a change of any path shows here first.
#[tokio::test]
async fn every_write_kind_sends_a_pinned_number_of_statements() {
    use crate::helpers::{at, booking, ADMIN};
    let app = TestApp::spawn().await;
    let stats = || app.state.db_stats.statements();
    let mut measured: Vec<(&str, u64)> = Vec::new();
    let hour = |i: i64| (at(2, (i % 20) as u32 + 2, 0), at(2, (i % 20) as u32 + 3, 0));

    // Bookings: one room, two linked rooms; a move; a cancel.
    let mut ids = Vec::new();
    for (kind, rooms, day) in [("booking.create (one room)", vec!["C"], 3), ("booking.create (A+B)", vec!["A", "B"], 4)]
    {
        let mut per = Vec::new();
        for i in 0..4 {
            let (s, e) = (at(day, 2 + i, 0), at(day, 2 + i, 30));
            let before = stats();
            let (status, b) =
                post(&app, "/api/bookings", TENANT_ONE, "o", &format!("b{day}-{i}"), booking("t", &rooms, &s, &e))
                    .await;
            assert_eq!(status, 201, "{b}");
            per.push(stats() - before);
            ids.push(b["id"].as_i64().unwrap());
        }
        measured.push((kind, per[1..].iter().sum::<u64>() / 3));
        assert!(per[1..].iter().all(|n| *n == per[1]), "{kind}: {per:?}");
    }
    let mut per = Vec::new();
    for (n, id) in ids[..4].iter().enumerate() {
        let (s, e) = hour(n as i64 + 10);
        let before = stats();
        let res = app
            .request(reqwest::Method::PATCH, &format!("/api/bookings/{id}"), TENANT_ONE, Some("o"))
            .header("Idempotency-Key", format!("m{n}"))
            .json(&json!({"startsAt": s, "endsAt": e}))
            .send()
            .await
            .unwrap();
        let (status, b) = crate::helpers::body(res).await;
        assert_eq!(status, 200, "{b}");
        per.push(stats() - before);
    }
    measured.push(("booking.move", per[1]));
    let mut per = Vec::new();
    for (n, id) in ids[..4].iter().enumerate() {
        let before = stats();
        let (status, b) =
            post(&app, &format!("/api/bookings/{id}/cancel"), TENANT_ONE, "o", &format!("x{n}"), json!({})).await;
        assert_eq!(status, 200, "{b}");
        per.push(stats() - before);
    }
    measured.push(("booking.cancel", per[1]));

    // A series of four weekly occurrences.
    let mut per = Vec::new();
    for i in 0..3 {
        let before = stats();
        let (status, b) = post(
            &app,
            "/api/series",
            TENANT_ONE,
            "o",
            &format!("s{i}"),
            json!({"title": "s", "rooms": ["C"], "startsAt": at(5, 2 + i, 0), "endsAt": at(5, 2 + i, 30), "recurrence": "FREQ=WEEKLY;COUNT=4"}),
        )
        .await;
        assert_eq!(status, 201, "{b}");
        per.push(stats() - before);
    }
    measured.push(("series.create (4 weekly)", per[1]));

    // Holds, their confirmation, and a hand-off: a cancel with a waiter
    // offers the unit, and the waiter accepts.
    let (status, resource) =
        post(&app, "/api/resources", ADMIN, "ops", "r1", json!({"code": "pin", "name": "p", "capacity": 1})).await;
    assert_eq!(status, 201, "{resource}");
    let rid = resource["id"].as_i64().unwrap();
    let (mut confirm, mut handoff, mut accept, mut join) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..3 {
        let (status, h) =
            post(&app, &format!("/api/resources/{rid}/holds"), TENANT_ONE, "a", &format!("h{i}"), json!({})).await;
        assert_eq!(status, 201, "{h}");
        let before = stats();
        let (status, w) =
            post(&app, &format!("/api/resources/{rid}/waitlist"), TENANT_ONE, "b", &format!("w{i}"), json!({})).await;
        assert_eq!(status, 201, "{w}");
        join.push(stats() - before);
        let before = stats();
        let (status, c) =
            post(&app, &format!("/api/holds/{}/cancel", h["id"]), TENANT_ONE, "a", &format!("c{i}"), json!({})).await;
        assert_eq!(status, 200, "{c}");
        handoff.push(stats() - before);
        let res = app
            .request(reqwest::Method::GET, &format!("/api/waitlist/{}", w["id"]), TENANT_ONE, Some("b"))
            .send()
            .await
            .unwrap();
        let (_, entry) = crate::helpers::body(res).await;
        let before = stats();
        let (status, o) = post(
            &app,
            &format!("/api/offers/{}/accept", entry["offerId"]),
            TENANT_ONE,
            "b",
            &format!("o{i}"),
            json!({}),
        )
        .await;
        assert_eq!(status, 200, "{o}");
        accept.push(stats() - before);
        // The accepted hold is CONFIRMED; cancel it to free the unit for the next round.
        let (status, _) =
            post(&app, &format!("/api/holds/{}/cancel", o["holdId"]), TENANT_ONE, "b", &format!("f{i}"), json!({}))
                .await;
        assert_eq!(status, 200);
        let (status, h2) =
            post(&app, &format!("/api/resources/{rid}/holds"), TENANT_ONE, "a", &format!("k{i}"), json!({})).await;
        assert_eq!(status, 201, "{h2}");
        let before = stats();
        let (status, c) =
            post(&app, &format!("/api/holds/{}/confirm", h2["id"]), TENANT_ONE, "a", &format!("q{i}"), json!({})).await;
        assert_eq!(status, 200, "{c}");
        confirm.push(stats() - before);
        let (status, _) =
            post(&app, &format!("/api/holds/{}/cancel", h2["id"]), TENANT_ONE, "a", &format!("z{i}"), json!({})).await;
        assert_eq!(status, 200);
    }
    measured.push(("waitlist.join", join[1]));
    measured.push(("hold.cancel with a waiter (hand-off)", handoff[1]));
    measured.push(("offer.accept", accept[1]));
    measured.push(("hold.confirm", confirm[1]));
    // A booking: BEGIN, the claim, SAVEPOINT, the rooms' key-share lock, the
    // reservation INSERT, its rooms, the re-read, history, outbox, RELEASE,
    // finalize, COMMIT = 12 (A+B: one statement more).
    let pinned = [
        ("booking.create (one room)", 12),
        ("booking.create (A+B)", 13),
        ("booking.move", 17),
        ("booking.cancel", 14),
        ("series.create (4 weekly)", 14),
        ("waitlist.join", 9),
        ("hold.cancel with a waiter (hand-off)", 15),
        ("offer.accept", 12),
        ("hold.confirm", 8),
    ];
    assert_eq!(measured, pinned);
}
