//! Issue 18, tried as an attacker would (SPEC §13): waitlist abuse, holds
//! kept forever, `/metrics` grown by client input, tables that never shrink.
//! Each test failed on the code before the fix.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use rand::Rng;
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::sync::Barrier;
use yeyak::clock::Clock;
use yeyak::sweeper::TickOutcome;

use crate::helpers::*;

struct Answer {
    status: StatusCode,
    body: Value,
    replayed: Option<String>,
}

async fn call(app: &TestApp, path: &str, key: &str, owner: Option<&str>, idem: &str, body: Value) -> Answer {
    let res = app
        .request(reqwest::Method::POST, path, key, owner)
        .header("Idempotency-Key", idem)
        .json(&body)
        .send()
        .await
        .expect("sent");
    let replayed = res.headers().get("Idempotency-Replayed").map(|v| v.to_str().unwrap().to_owned());
    let (status, body) = crate::helpers::body(res).await;
    Answer { status, body, replayed }
}

async fn join(app: &TestApp, resource: i64, key: &str, owner: &str, idem: &str, quantity: i64) -> Answer {
    call(app, &format!("/api/resources/{resource}/waitlist"), key, Some(owner), idem, json!({"quantity": quantity}))
        .await
}

async fn hold(app: &TestApp, resource: i64, key: &str, owner: &str, idem: &str, quantity: i64) -> Answer {
    call(app, &format!("/api/resources/{resource}/holds"), key, Some(owner), idem, json!({"quantity": quantity})).await
}

/// A hold that the sweeper leaves alone (CONFIRMED).
async fn confirmed_hold(app: &TestApp, resource: i64, owner: &str, quantity: i64) -> i64 {
    let h = hold(app, resource, TENANT_ONE, owner, &format!("h-{owner}"), quantity).await;
    assert_eq!(h.status, StatusCode::CREATED, "{}", h.body);
    let id = h.body["id"].as_i64().unwrap();
    let c =
        call(app, &format!("/api/holds/{id}/confirm"), TENANT_ONE, Some(owner), &format!("c-{owner}"), json!({})).await;
    assert_eq!(c.status, StatusCode::OK, "{}", c.body);
    id
}

async fn evict(app: &TestApp, entry: i64, idem: &str) -> Answer {
    call(app, &format!("/api/admin/waitlist/{entry}/evict"), ADMIN, None, idem, json!({})).await
}

async fn entry(app: &TestApp, id: i64, key: &str, owner: &str) -> Value {
    let res = app.request(reqwest::Method::GET, &format!("/api/waitlist/{id}"), key, Some(owner)).send().await.unwrap();
    crate::helpers::body(res).await.1
}

async fn new_resource(app: &TestApp, code: &str, capacity: i64) -> i64 {
    let a = call(
        app,
        "/api/resources",
        ADMIN,
        Some("ops"),
        &format!("create-{code}"),
        json!({"code": code, "name": code, "capacity": capacity}),
    )
    .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    a.body["id"].as_i64().unwrap()
}

/// (occupied_count, waiting_count, last_sequence, revision) as stored.
async fn counters(app: &TestApp, id: i64) -> (i32, i32, i64, i64) {
    let row = app
        .db()
        .await
        .query_one(
            "SELECT occupied_count, waiting_count, last_sequence, revision FROM capacity_resource WHERE id = $1",
            &[&id],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1), row.get(2), row.get(3))
}

async fn outbox_kinds(app: &TestApp) -> Vec<(String, String)> {
    app.db()
        .await
        .query("SELECT delivery_id, kind FROM notification_outbox ORDER BY delivery_id", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

async fn elected_tick(app: &TestApp) {
    let outcome = app.state.sweeper.tick().await.expect("tick runs");
    assert!(matches!(outcome, TickOutcome::Elected(_)), "{outcome:?}");
}

// ---- Finding 1: the waitlist ------------------------------------------------

/// The old attack: one join asking for more than the capacity sat at the head
/// of the line for ever, and every later hold of every tenant was refused.
#[tokio::test]
async fn a_join_above_capacity_is_refused_and_blocks_no_other_tenant() {
    let app = TestApp::spawn().await;
    let id = new_resource(&app, "pair", 2).await;
    let before = counters(&app, id).await;

    let greedy = join(&app, id, TENANT_ONE, "greedy", "g", 3).await;
    assert_eq!(greedy.status, StatusCode::BAD_REQUEST, "{}", greedy.body);
    assert_eq!(greedy.body["code"], "QUANTITY_EXCEEDS_CAPACITY");
    assert_eq!(greedy.body["details"], json!({"requested": 3, "capacity": 2}));
    // Nothing written: no entry, no sequence handed out, no stored answer.
    assert_eq!(counters(&app, id).await, before);
    assert_eq!(app.count("SELECT count(*) FROM waitlist_entry").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM idempotency_record WHERE operation = 'waitlist.join'").await, 0);

    // Another tenant's holds go through as if nothing had happened.
    let other = hold(&app, id, TENANT_TWO, "carol", "c", 2).await;
    assert_eq!(other.status, StatusCode::CREATED, "{}", other.body);
    // Even on a full resource the refusal stands (it can never be served).
    let again = join(&app, id, TENANT_ONE, "greedy", "g2", 3).await;
    assert_eq!(again.body["code"], "QUANTITY_EXCEEDS_CAPACITY");
    app.assert_consistent().await;
}

#[tokio::test]
async fn an_owner_waits_once_per_resource_and_the_refusal_is_replayed() {
    let app = TestApp::spawn().await;
    let id = new_resource(&app, "single", 1).await;
    confirmed_hold(&app, id, "alice", 1).await;

    let first = join(&app, id, TENANT_ONE, "bob", "b1", 1).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    let entry_id = first.body["id"].as_i64().unwrap();

    let second = join(&app, id, TENANT_ONE, "bob", "b2", 1).await;
    assert_eq!((second.status, second.body["code"].as_str()), (StatusCode::CONFLICT, Some("ALREADY_WAITING")));
    assert_eq!(second.body["details"]["entryId"], entry_id);
    assert_eq!(second.replayed.as_deref(), Some("false"));
    // The refusal is stored like any other 409 and replayed byte for byte.
    let replay = join(&app, id, TENANT_ONE, "bob", "b2", 1).await;
    assert_eq!((replay.status, replay.replayed.as_deref()), (StatusCode::CONFLICT, Some("true")));
    assert_eq!(replay.body, second.body);
    assert_eq!(counters(&app, id).await.1, 1, "one waiting entry");

    // The same name under another tenant is another owner.
    let other_tenant = join(&app, id, TENANT_TWO, "bob", "b1", 1).await;
    assert_eq!(other_tenant.status, StatusCode::CREATED, "{}", other_tenant.body);

    // An OFFERED entry is still a live one.
    let alice_hold: i64 = app.db().await.query_one("SELECT id FROM capacity_hold", &[]).await.unwrap().get(0);
    let cancel =
        call(&app, &format!("/api/holds/{alice_hold}/cancel"), TENANT_ONE, Some("alice"), "a-x", json!({})).await;
    assert_eq!(cancel.status, StatusCode::OK, "{}", cancel.body);
    assert_eq!(entry(&app, entry_id, TENANT_ONE, "bob").await["state"], "OFFERED");
    let while_offered = join(&app, id, TENANT_ONE, "bob", "b4", 1).await;
    assert_eq!(while_offered.body["code"], "ALREADY_WAITING");
    assert_eq!(while_offered.body["details"]["entryId"], entry_id);
    app.assert_consistent().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_joins_by_one_owner_give_one_entry() {
    let app = Arc::new(TestApp::spawn().await);
    let id = new_resource(&app, "busy", 1).await;
    confirmed_hold(&app, id, "alice", 1).await;
    const N: usize = 16;
    let barrier = Arc::new(Barrier::new(N));
    let tasks: Vec<_> = (0..N)
        .map(|i| {
            let (app, barrier) = (app.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                let a = join(&app, id, TENANT_ONE, "mallory", &format!("m{i}"), 1).await;
                (a.status, a.body)
            })
        })
        .collect();
    let mut created = Vec::new();
    let mut refused = Vec::new();
    for t in tasks {
        let (status, body) = t.await.unwrap();
        match status {
            StatusCode::CREATED => created.push(body["id"].as_i64().unwrap()),
            StatusCode::CONFLICT if body["code"] == "ALREADY_WAITING" => {
                refused.push(body["details"]["entryId"].clone())
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(created.len(), 1, "exactly one join wins");
    assert_eq!(refused.len(), N - 1);
    assert!(refused.iter().all(|e| e.as_i64() == Some(created[0])), "every refusal names the winner: {refused:?}");
    let (_, waiting, last_sequence, _) = counters(&app, id).await;
    assert_eq!((waiting, last_sequence), (1, 1), "refused joins handed out no sequence");
    app.assert_consistent().await;
}

#[tokio::test]
async fn entries_waiting_too_long_expire_and_the_next_waiter_is_offered() {
    let app = TestApp::spawn().await;
    let id = new_resource(&app, "slow", 2).await;
    confirmed_hold(&app, id, "alice", 1).await;
    // Bob wants both units; one is free, so he waits, and Carol (one unit)
    // waits behind him: she may not pass the head.
    let bob = join(&app, id, TENANT_ONE, "bob", "b", 2).await;
    assert_eq!(bob.status, StatusCode::CREATED, "{}", bob.body);
    app.clock.advance(Duration::hours(20));
    let carol = join(&app, id, TENANT_TWO, "carol", "c", 1).await;
    assert_eq!(carol.status, StatusCode::CREATED, "{}", carol.body);
    let (bob_id, carol_id) = (bob.body["id"].as_i64().unwrap(), carol.body["id"].as_i64().unwrap());

    // 23 h 59 min: nobody has waited 24 h yet.
    app.clock.advance(Duration::hours(3) + Duration::minutes(59));
    elected_tick(&app).await;
    assert_eq!(entry(&app, bob_id, TENANT_ONE, "bob").await["state"], "WAITING");

    // Past 24 h (YEYAK_WAITLIST_MAX_WAIT_HOURS' default) Bob's entry expires
    // in the elected sweeper's tick, and the hand-off runs: Carol is offered
    // the free unit.
    app.clock.advance(Duration::minutes(2));
    elected_tick(&app).await;
    assert_eq!(entry(&app, bob_id, TENANT_ONE, "bob").await["state"], "EXPIRED");
    let carol_now = entry(&app, carol_id, TENANT_TWO, "carol").await;
    assert_eq!(carol_now["state"], "OFFERED", "{carol_now}");
    let (occupied, waiting, _, _) = counters(&app, id).await;
    assert_eq!((occupied, waiting), (2, 0));
    let kinds = outbox_kinds(&app).await;
    assert!(kinds.contains(&(format!("waitlist-{bob_id}-expired"), "waitlist.expired".into())), "{kinds:?}");
    assert!(kinds.contains(&(format!("waitlist-{carol_id}-offered"), "offer.created".into())), "{kinds:?}");

    // Only the leader sweeps: a second process is told so.
    let other = app.another_process().await;
    assert!(matches!(other.state.sweeper.tick().await.unwrap(), TickOutcome::NotLeader));
    app.assert_consistent().await;
}

#[tokio::test]
async fn an_admin_evicts_waiting_and_offered_entries_and_the_line_moves_on() {
    let app = TestApp::spawn().await;

    // A WAITING head is evicted: the one behind it fits the free unit.
    let line = new_resource(&app, "line", 2).await;
    confirmed_hold(&app, line, "alice", 1).await;
    let head = join(&app, line, TENANT_ONE, "bob", "b", 2).await.body["id"].as_i64().unwrap();
    let next = join(&app, line, TENANT_ONE, "carol", "c", 1).await.body["id"].as_i64().unwrap();
    let not_admin =
        call(&app, &format!("/api/admin/waitlist/{head}/evict"), TENANT_ONE, Some("x"), "e0", json!({})).await;
    assert_eq!(not_admin.status, StatusCode::FORBIDDEN, "{}", not_admin.body);
    let evicted = evict(&app, head, "e1").await;
    assert_eq!(
        (evicted.status, evicted.body["state"].as_str()),
        (StatusCode::OK, Some("CANCELLED")),
        "{}",
        evicted.body
    );
    assert_eq!(entry(&app, next, TENANT_ONE, "carol").await["state"], "OFFERED");
    assert_eq!(counters(&app, line).await.0, 2);

    // An OFFERED entry is evicted: its offer is withdrawn and its two units
    // go to the next waiter, then, with nobody left, back to the resource.
    let pair = new_resource(&app, "pair", 2).await;
    let alice = confirmed_hold(&app, pair, "dave", 2).await;
    let bob = join(&app, pair, TENANT_ONE, "erin", "e", 2).await.body["id"].as_i64().unwrap();
    let carol = join(&app, pair, TENANT_ONE, "frank", "f", 2).await.body["id"].as_i64().unwrap();
    call(&app, &format!("/api/holds/{alice}/cancel"), TENANT_ONE, Some("dave"), "d-x", json!({})).await;
    let offered = entry(&app, bob, TENANT_ONE, "erin").await;
    assert_eq!(offered["state"], "OFFERED");
    let offer = offered["offerId"].as_i64().unwrap();
    let (_, _, _, revision_before) = counters(&app, pair).await;

    let evicted = evict(&app, bob, "e2").await;
    assert_eq!(evicted.status, StatusCode::OK, "{}", evicted.body);
    let (_, withdrawn) = crate::helpers::body(
        app.request(reqwest::Method::GET, &format!("/api/offers/{offer}"), TENANT_ONE, Some("erin"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(withdrawn["state"], "EXPIRED");
    assert_eq!(evicted.body["state"], "EXPIRED", "the entry ends with its offer");
    let accept = call(&app, &format!("/api/offers/{offer}/accept"), TENANT_ONE, Some("erin"), "late", json!({})).await;
    assert_eq!(accept.body["code"], "INVALID_STATE", "a withdrawn offer cannot be taken");
    assert_eq!(entry(&app, carol, TENANT_ONE, "frank").await["state"], "OFFERED");
    assert_eq!(counters(&app, pair).await.0, 2, "the units changed owner, never released");
    assert_eq!(counters(&app, pair).await.3, revision_before);

    let evicted = evict(&app, carol, "e3").await;
    assert_eq!(evicted.status, StatusCode::OK, "{}", evicted.body);
    assert_eq!(counters(&app, pair).await.0, 0, "the offer's two units returned exactly");

    // Replayed with its key; refused when there is nothing to evict.
    let replay = evict(&app, carol, "e3").await;
    assert_eq!((replay.status, replay.replayed.as_deref()), (StatusCode::OK, Some("true")));
    let again = evict(&app, carol, "e4").await;
    assert_eq!((again.status, again.body["code"].as_str()), (StatusCode::CONFLICT, Some("INVALID_STATE")));
    let missing = evict(&app, 999_999, "e5").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let kinds = outbox_kinds(&app).await;
    assert!(kinds.contains(&(format!("waitlist-{bob}-evicted"), "waitlist.evicted".into())), "{kinds:?}");
    app.assert_consistent().await;
}

// ---- Finding 5: holds kept for ever ----------------------------------------

#[tokio::test]
async fn a_hold_cannot_be_extended_past_its_lifetime() {
    let app = TestApp::spawn().await;
    let id = new_resource(&app, "ten", 10).await;
    let h = hold(&app, id, TENANT_ONE, "alice", "h", 1).await;
    let hold_id = h.body["id"].as_i64().unwrap();
    let created = DateTime::parse_from_rfc3339(h.body["expiresAt"].as_str().unwrap()).unwrap() - Duration::seconds(30);
    let extend = |by: i64, idem: &'static str| {
        let app = &app;
        async move {
            call(
                app,
                &format!("/api/holds/{hold_id}/extend"),
                TENANT_ONE,
                Some("alice"),
                idem,
                json!({"extendBySeconds": by}),
            )
            .await
        }
    };
    // 30 s + 300 s: fine. Another 300 s would end 630 s after creation.
    assert_eq!(extend(300, "x1").await.status, StatusCode::OK);
    let refused = extend(300, "x2").await;
    assert_eq!((refused.status, refused.body["code"].as_str()), (StatusCode::CONFLICT, Some("HOLD_LIFETIME_EXCEEDED")));
    assert_eq!(refused.body["details"]["maxLifetimeSeconds"], 600);
    let latest = DateTime::parse_from_rfc3339(refused.body["details"]["latestExpiresAt"].as_str().unwrap()).unwrap();
    assert_eq!(latest, created + Duration::seconds(600));
    // Up to the cap exactly, then not a second more.
    let exact = extend(270, "x3").await;
    assert_eq!(exact.status, StatusCode::OK, "{}", exact.body);
    assert_eq!(DateTime::parse_from_rfc3339(exact.body["expiresAt"].as_str().unwrap()).unwrap(), latest);
    assert_eq!(extend(1, "x4").await.body["code"], "HOLD_LIFETIME_EXCEEDED");
    let (_, now) = crate::helpers::body(
        app.request(reqwest::Method::GET, &format!("/api/holds/{hold_id}"), TENANT_ONE, Some("alice"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(now["revision"], 2, "refusals changed nothing");
    // Other refusals keep their codes and order.
    let stranger = call(
        &app,
        &format!("/api/holds/{hold_id}/extend"),
        TENANT_ONE,
        Some("bob"),
        "x5",
        json!({"extendBySeconds": 1}),
    )
    .await;
    assert_eq!(stranger.status, StatusCode::FORBIDDEN);
    app.clock.advance(Duration::seconds(601));
    assert_eq!(extend(1, "x6").await.body["code"], "HOLD_EXPIRED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_extends_cannot_stack_past_the_cap() {
    let app = Arc::new(TestApp::spawn().await);
    let id = new_resource(&app, "race", 10).await;
    let hold_id = hold(&app, id, TENANT_ONE, "alice", "h", 1).await.body["id"].as_i64().unwrap();
    const N: usize = 10;
    let barrier = Arc::new(Barrier::new(N));
    let tasks: Vec<_> = (0..N)
        .map(|i| {
            let (app, barrier) = (app.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                let path = format!("/api/holds/{hold_id}/extend");
                call(&app, &path, TENANT_ONE, Some("alice"), &format!("x{i}"), json!({"extendBySeconds": 300})).await
            })
        })
        .collect();
    let mut ok = 0;
    for t in tasks {
        let a = t.await.unwrap();
        match a.status {
            StatusCode::OK => ok += 1,
            _ => assert_eq!(a.body["code"], "HOLD_LIFETIME_EXCEEDED", "{}", a.body),
        }
    }
    assert_eq!(ok, 1, "30 s + 300 s fits in 600 s once");
}

// ---- Finding 3: /metrics ----------------------------------------------------

fn random_token(rng: &mut impl Rng, len: usize) -> String {
    (0..len).map(|_| rng.gen_range(b'A'..=b'Z') as char).collect()
}

/// The series of `yeyak_http_requests_total`, without their values.
async fn request_series(app: &TestApp) -> Vec<String> {
    let text = app.http.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    text.lines()
        .filter(|l| l.starts_with("yeyak_http_requests_total{"))
        .map(|l| l.rsplit_once(' ').unwrap().0.to_owned())
        .collect()
}

/// `n` requests with random methods (6-11 letters) to random paths (8-19
/// letters under a few prefixes); returns every random token sent.
async fn random_requests(app: &TestApp, n: usize) -> Vec<String> {
    let prefixes = ["/", "/api/", "/api/holds/", "/static/", "/admin/", "/rooms/", "/metrics/"];
    let mut sent = Vec::new();
    for _ in 0..n {
        let (method, path) = {
            let mut rng = rand::thread_rng();
            let len = rng.gen_range(6..12);
            let method = random_token(&mut rng, len);
            let prefix = prefixes[rng.gen_range(0..prefixes.len())];
            let len = rng.gen_range(8..20);
            (method, format!("{prefix}{}", random_token(&mut rng, len).to_lowercase()))
        };
        let verb = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let _ = app.http.request(verb, app.url(&path)).send().await.unwrap();
        sent.push(method);
        sent.push(path.rsplit('/').next().unwrap().to_owned());
    }
    sent
}

#[tokio::test]
async fn random_methods_and_paths_do_not_grow_the_scrape() {
    let app = TestApp::spawn().await;
    // A scrape is counted once it has answered: the first makes its own series.
    request_series(&app).await;
    let mut sent = random_requests(&app, 200).await;
    let before = request_series(&app).await;
    sent.extend(random_requests(&app, 200).await);
    let after = request_series(&app).await;
    assert_eq!(after, before, "200 more random requests changed the set of series");
    for series in &after {
        let method = series.split("method=\"").nth(1).unwrap().split('"').next().unwrap();
        assert!(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"].contains(&method), "{series}");
    }
    // No random text reached any label of any metric.
    let text = app.http.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    let samples: String = text.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n");
    for token in &sent {
        assert!(!samples.contains(token.as_str()), "`{token}` leaked into the scrape");
    }
    assert!(text.contains("route=\"unmatched\""), "unmatched requests share one route label");
}

/// The EXHAUSTED count of every scrape must not read the whole outbox: with
/// 20,000 delivered rows the plan of the scrape's query touches none of them.
#[tokio::test]
async fn the_scrape_counts_exhausted_deliveries_by_an_index() {
    let app = TestApp::spawn().await;
    let db = app.db().await;
    db.batch_execute(
        "INSERT INTO notification_outbox (delivery_id, kind, payload, status, created_at, delivered_at)
         SELECT 'done-' || g, 'hold.expired', '{}', 'DELIVERED', now(), now() FROM generate_series(1, 20000) g;
         INSERT INTO notification_outbox (delivery_id, kind, payload, status, created_at, last_error)
         SELECT 'gave-up-' || g, 'hold.expired', '{}', 'EXHAUSTED', now(), 'receiver down' FROM generate_series(1, 3) g;
         ANALYZE notification_outbox;",
    )
    .await
    .unwrap();
    let now: DateTime<Utc> = app.clock.now();
    let plan: Vec<String> = db
        .query(&format!("EXPLAIN {}", yeyak::metrics::BACKLOG_SQL), &[&now])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect();
    let plan = plan.join("\n");
    println!("{plan}");
    assert!(!plan.contains("Seq Scan on notification_outbox"), "{plan}");
    assert!(plan.contains("notification_outbox_exhausted_idx"), "{plan}");
    let text = app.http.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(text.contains("yeyak_outbox_deliveries{status=\"exhausted\"} 3"), "{text}");
}

// ---- Finding 7: retention ---------------------------------------------------

#[tokio::test]
async fn the_elected_sweeper_purges_rows_past_retention_in_batches_and_nothing_else() {
    let app = TestApp::spawn_with(|c| c.purge_batch = 7).await;
    let db = app.db().await;
    let now: DateTime<Utc> = app.clock.now();
    let old = now - Duration::days(31);
    let recent = now - Duration::days(29);
    let admin: i64 = db.query_one("SELECT id FROM staff_user LIMIT 1", &[]).await.unwrap().get(0);
    // Sessions: expired long ago (purged), expired lately and live (kept).
    for (i, expires) in [(1, old), (2, recent), (3, now + Duration::days(1))] {
        db.execute(
            "INSERT INTO staff_session (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $3)",
            &[&format!("{i:064x}"), &admin, &expires],
        )
        .await
        .unwrap();
    }
    // Throttle rows: an old window (purged), an old window still locked, a recent one.
    for (name, window, locked) in
        [("old", old, None), ("locked", old, Some(now + Duration::minutes(5))), ("recent", recent, None)]
    {
        db.execute(
            "INSERT INTO staff_login_throttle (username, failures, window_start, locked_until) VALUES ($1, 1, $2, $3)",
            &[&name, &window, &locked],
        )
        .await
        .unwrap();
    }
    // The same for client addresses.
    for (addr, window, locked) in
        [("192.0.2.1", old, None), ("192.0.2.2", old, Some(now + Duration::minutes(5))), ("192.0.2.3", recent, None)]
    {
        db.execute(
            "INSERT INTO address_login_throttle (address, failures, window_start, locked_until) VALUES ($1::text::inet, 1, $2, $3)",
            &[&addr, &window, &locked],
        )
        .await
        .unwrap();
    }
    // Deliveries: delivered long ago (purged with its attempts), delivered
    // lately, and old PENDING and EXHAUSTED rows (still owed or waiting for an
    // operator: kept, though their old attempt logs go).
    let (old_at, recent_at) = (old.to_rfc3339(), recent.to_rfc3339());
    db.batch_execute(&format!(
        "INSERT INTO notification_outbox (delivery_id, kind, payload, status, created_at, delivered_at, next_attempt_at)
         VALUES ('old-done', 'hold.expired', '{{}}', 'DELIVERED', '{old_at}', '{old_at}', NULL),
                ('new-done', 'hold.expired', '{{}}', 'DELIVERED', '{old_at}', '{recent_at}', NULL),
                ('old-pending', 'hold.expired', '{{}}', 'PENDING', '{old_at}', NULL, '{old_at}'),
                ('old-exhausted', 'hold.expired', '{{}}', 'EXHAUSTED', '{old_at}', NULL, NULL);
         INSERT INTO notification_attempt (delivery_id, channel, attempt, worker, attempted_at, outcome)
         SELECT 'old-exhausted', 'webhook', g, gen_random_uuid(), '{old_at}', 'RETRYABLE' FROM generate_series(1, 100) g;
         INSERT INTO notification_attempt (delivery_id, channel, attempt, worker, attempted_at, outcome)
         VALUES ('old-done', 'webhook', 1, gen_random_uuid(), '{old_at}', 'ACCEPTED'),
                ('new-done', 'webhook', 1, gen_random_uuid(), '{recent_at}', 'ACCEPTED'),
                ('old-exhausted', 'webhook', 101, gen_random_uuid(), '{recent_at}', 'RETRYABLE');"
    ))
    .await
    .unwrap();
    let untouched = "SELECT (SELECT count(*) FROM staff_user) + (SELECT count(*) FROM room) \
                     + (SELECT count(*) FROM capacity_resource) + (SELECT count(*) FROM idempotency_record)";
    let others = app.count(untouched).await;

    // Batches of 7, at most 10 per table and tick: the 100 old attempt rows
    // of the EXHAUSTED delivery take two ticks (the delivered row's one goes
    // with its row).
    let old_attempts = "SELECT count(*) FROM notification_attempt WHERE attempted_at < now() - interval '30 days'";
    assert_eq!(app.count(old_attempts).await, 101);
    elected_tick(&app).await;
    assert_eq!(app.count(old_attempts).await, 30);
    elected_tick(&app).await;
    let left = |sql: &'static str| {
        let db = &db;
        async move {
            let mut v: Vec<String> = db.query(sql, &[]).await.unwrap().iter().map(|r| r.get(0)).collect();
            v.sort();
            v
        }
    };
    assert_eq!(left("SELECT right(token_hash, 1) FROM staff_session").await, ["2", "3"]);
    assert_eq!(left("SELECT username FROM staff_login_throttle").await, ["locked", "recent"]);
    assert_eq!(left("SELECT host(address) FROM address_login_throttle").await, ["192.0.2.2", "192.0.2.3"]);
    assert_eq!(left("SELECT delivery_id FROM notification_outbox").await, ["new-done", "old-exhausted", "old-pending"]);
    assert_eq!(
        left("SELECT delivery_id || '/' || attempt FROM notification_attempt").await,
        ["new-done/1", "old-exhausted/101"]
    );
    assert_eq!(app.count(untouched).await, others, "nothing else touched");
    let text = app.http.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(text.contains("yeyak_purged_rows_total{table=\"notification_attempt\"} 100"), "{text}");
}

/// The same work with the background loops on and real timers: nothing but
/// the sweeper's own ticks expires the old entry and drains a purge backlog
/// larger than one tick's batches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_background_sweeper_expires_and_purges_on_its_own() {
    let app = TestApp::spawn_with(|c| {
        c.background = true;
        c.sweep_interval_ms = 50;
        c.outbox_poll_ms = 50;
        c.purge_batch = 7;
    })
    .await;
    let id = new_resource(&app, "bg", 1).await;
    confirmed_hold(&app, id, "alice", 1).await;
    let bob = join(&app, id, TENANT_ONE, "bob", "b", 1).await.body["id"].as_i64().unwrap();
    let old = (app.clock.now() - Duration::days(31)).to_rfc3339();
    app.db()
        .await
        .batch_execute(&format!(
            "INSERT INTO notification_outbox (delivery_id, kind, payload, status, created_at, last_error)
             VALUES ('gave-up', 'hold.expired', '{{}}', 'EXHAUSTED', '{old}', 'down');
             INSERT INTO notification_attempt (delivery_id, channel, attempt, worker, attempted_at, outcome)
             SELECT 'gave-up', 'webhook', g, gen_random_uuid(), '{old}', 'RETRYABLE' FROM generate_series(1, 150) g;"
        ))
        .await
        .unwrap();
    app.clock.advance(Duration::hours(25));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let attempts = app.count("SELECT count(*) FROM notification_attempt WHERE delivery_id = 'gave-up'").await;
        let state = entry(&app, bob, TENANT_ONE, "bob").await["state"].as_str().unwrap_or_default().to_owned();
        if attempts == 0 && state == "EXPIRED" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not done in 20 s: {attempts} attempt rows, entry {state}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(app.count("SELECT count(*) FROM notification_outbox WHERE delivery_id = 'gave-up'").await, 1);
    let text = app.http.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(text.contains("yeyak_purged_rows_total{table=\"notification_attempt\"} 150"), "{text}");
    assert!(text.contains("yeyak_sweeper_items_total{kind=\"expired_entries\"} 1"), "{text}");
    // The planted EXHAUSTED row is the only thing the report may flag.
    app.db().await.execute("DELETE FROM notification_outbox WHERE delivery_id = 'gave-up'", &[]).await.unwrap();
    app.assert_consistent().await;
}

/// The new refusals and the eviction route are in the OpenAPI document.
#[tokio::test]
async fn the_document_lists_the_new_route_and_codes() {
    let app = TestApp::spawn().await;
    let doc: Value = app.http.get(app.url("/api/openapi.json")).send().await.unwrap().json().await.unwrap();
    let codes = doc["components"]["schemas"]["ErrorCode"]["enum"].as_array().unwrap();
    for code in ["QUANTITY_EXCEEDS_CAPACITY", "ALREADY_WAITING", "HOLD_LIFETIME_EXCEEDED"] {
        assert!(codes.contains(&json!(code)), "{code}");
    }
    let evict = &doc["paths"]["/api/admin/waitlist/{id}/evict"]["post"];
    assert_eq!((evict["operationId"].as_str(), evict["tags"][0].as_str()), (Some("evictWaitlistEntry"), Some("admin")));
    let says = |op: &Value, status: &str, code: &str| {
        let text = op["responses"][status]["description"].as_str().unwrap_or_default().to_owned();
        assert!(text.contains(code), "{status} of {} lacks {code}: {text}", op["operationId"]);
    };
    says(evict, "404", "NOT_FOUND");
    says(evict, "409", "INVALID_STATE");
    says(evict, "403", "FORBIDDEN");
    let join = &doc["paths"]["/api/resources/{id}/waitlist"]["post"];
    says(join, "400", "QUANTITY_EXCEEDS_CAPACITY");
    says(join, "409", "ALREADY_WAITING");
    says(&doc["paths"]["/api/holds/{id}/extend"]["post"], "409", "HOLD_LIFETIME_EXCEEDED");
}

/// A raw `INSERT` into the waitlist, as a command of the test's own: no
/// `ON CONFLICT` words the refusal, so the index alone judges it.
struct RawWaitlistInsert;

static RAW_JOIN: yeyak::command::Operation =
    yeyak::command::Operation::new("waitlist.join", &[yeyak::command::Role::Integration]).creates();

const RAW_INSERT: &str = "INSERT INTO waitlist_entry (resource_id, owner_digest, sequence, state, quantity, policy_version, created_at, updated_at)
                  SELECT 1, 'same-owner', coalesce(max(sequence), 0) + 1, 'WAITING', 1, 1, now(), now() FROM waitlist_entry";

impl yeyak::command::Command for RawWaitlistInsert {
    type Output = Value;

    fn operation(&self) -> &'static yeyak::command::Operation {
        &RAW_JOIN
    }

    fn fingerprint(&self) -> Value {
        json!({})
    }

    async fn run(
        &self,
        conn: &mut yeyak::db::Conn,
        _: &yeyak::command::Ctx<'_>,
    ) -> Result<Value, yeyak::command::CommandError> {
        use diesel_async::RunQueryDsl;
        diesel::sql_query(RAW_INSERT).execute(conn).await?;
        Ok(json!({}))
    }
}

/// The index is the judge even where no `ON CONFLICT` words the refusal: a
/// raw violation inside any command is classified, stored by the pipeline as
/// a 409 `ALREADY_WAITING` like `ROOM_TIME_TAKEN`, and replayed with its key.
#[tokio::test]
async fn the_runner_stores_a_violation_of_the_one_entry_index_as_a_409() {
    use yeyak::idempotency::IdempotencyKey;

    let app = TestApp::spawn().await;
    app.db()
        .await
        .batch_execute(&format!("{RAW_INSERT}; UPDATE capacity_resource SET waiting_count = 1 WHERE id = 1"))
        .await
        .unwrap();
    let tenant = yeyak::auth::api_key::Tenant::parse("t1").unwrap();
    let owner = yeyak::auth::OwnerId::parse("o").unwrap();
    let principal = yeyak::command::Principal::api_key(b"k", &tenant, false, Some(&owner));
    let run =
        || app.state.pipeline.execute(&principal, Some(IdempotencyKey::parse("raw").unwrap()), &RawWaitlistInsert);
    let first = run().await.unwrap();
    assert!(!first.replayed);
    assert_eq!(first.response.status, 409, "{}", first.response.body);
    assert!(first.response.body.contains("ALREADY_WAITING"), "{}", first.response.body);
    assert_eq!(first.answer.as_ref().unwrap_err().code, yeyak::error::ErrorCode::AlreadyWaiting);
    let again = run().await.unwrap();
    assert!(again.replayed, "the stored refusal is replayed");
    assert_eq!(again.response, first.response);
    assert_eq!(again.answer.unwrap_err().code, yeyak::error::ErrorCode::AlreadyWaiting);
    assert_eq!(app.count("SELECT count(*) FROM waitlist_entry").await, 1);
}
