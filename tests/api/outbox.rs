//! The notification outbox against a real local HTTP receiver (seed 000
//! §알림 작업자가 중단돼 재시도해도…).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use chrono::Duration;
use yeyak::outbox::provider::Provider;
use yeyak::outbox::worker::DeliveryWorker;
use yeyak::outbox::{enqueue, Intent, RetryPolicy};

use crate::helpers::*;

/// A webhook receiver that deduplicates by `Idempotency-Key`: 201 the first
/// time (one effect), 409 after; it can be told to fail with a status first.
#[derive(Default)]
struct Receiver {
    effects: Mutex<HashMap<String, u32>>,
    requests: AtomicU32,
    /// 2xx answers: the effects that really happened.
    accepted: AtomicU32,
    fail_next: AtomicU32,
    fail_status: AtomicU32,
}

async fn hook(rx: web::Data<Receiver>, req: HttpRequest, _body: web::Json<serde_json::Value>) -> HttpResponse {
    rx.requests.fetch_add(1, Ordering::SeqCst);
    if rx.fail_next.load(Ordering::SeqCst) > 0 {
        rx.fail_next.fetch_sub(1, Ordering::SeqCst);
        let status = actix_web::http::StatusCode::from_u16(rx.fail_status.load(Ordering::SeqCst) as u16).unwrap();
        return HttpResponse::build(status).finish();
    }
    let key = req.headers().get("Idempotency-Key").unwrap().to_str().unwrap().to_owned();
    let mut effects = rx.effects.lock().unwrap();
    let seen = effects.entry(key).or_insert(0);
    *seen += 1;
    if *seen == 1 {
        rx.accepted.fetch_add(1, Ordering::SeqCst);
        HttpResponse::Created().finish()
    } else {
        HttpResponse::Conflict().finish()
    }
}

async fn start_receiver() -> (web::Data<Receiver>, String) {
    let rx = web::Data::new(Receiver::default());
    let data = rx.clone();
    let server = HttpServer::new(move || App::new().app_data(data.clone()).route("/hook", web::post().to(hook)))
        .workers(1)
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.addrs()[0];
    tokio::spawn(server.run());
    (rx, format!("http://{addr}/hook"))
}

fn worker(app: &TestApp, url: &str) -> DeliveryWorker {
    DeliveryWorker::new(app.state.pool.clone(), Arc::new(app.clock.clone()), Provider::webhook(url))
}

async fn enqueue_one(app: &TestApp, intent: &Intent) -> bool {
    let mut conn = yeyak::db::establish(&app.database_url()).await.unwrap();
    use yeyak::clock::Clock;
    enqueue(&mut conn, intent, app.clock.now()).await.unwrap()
}

async fn status(app: &TestApp, id: &str) -> (String, i32, Option<chrono::DateTime<chrono::Utc>>) {
    let row = app
        .db()
        .await
        .query_one(
            "SELECT status, attempt_count, next_attempt_at FROM notification_outbox WHERE delivery_id = $1",
            &[&id],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1), row.get(2))
}

#[tokio::test]
async fn enqueueing_twice_keeps_one_row() {
    let app = TestApp::spawn().await;
    let intent = Intent::offer_created(30, 7, 1, chrono::Utc::now());
    assert_eq!(intent.delivery_id, "waitlist-30-offered");
    assert!(enqueue_one(&app, &intent).await);
    assert!(!enqueue_one(&app, &intent).await);
    assert_eq!(app.count("SELECT count(*) FROM notification_outbox").await, 1);
}

#[tokio::test]
async fn a_crash_after_the_receiver_accepted_is_recovered_with_one_effect() {
    let app = TestApp::spawn().await;
    let (rx, url) = start_receiver().await;
    let intent = Intent::offer_created(30, 7, 1, chrono::Utc::now());
    enqueue_one(&app, &intent).await;

    // Worker A claims and sends; the receiver accepts; A dies before marking.
    let a = worker(&app, &url);
    let claimed = a.claim(10).await.unwrap();
    assert_eq!(claimed.len(), 1);
    let provider = Provider::webhook(&url);
    assert_eq!(provider.send(&claimed[0]).await, yeyak::outbox::provider::SendOutcome::Accepted);

    // Within A's lease nobody else takes it.
    let b = worker(&app, &url);
    assert_eq!(b.run_once(10).await.unwrap().claimed, 0);
    // After the lease B re-sends with the same key; the receiver says duplicate.
    app.clock.advance(Duration::seconds(31));
    let summary = b.run_once(10).await.unwrap();
    assert_eq!((summary.claimed, summary.delivered), (1, 1));
    assert_eq!(rx.requests.load(Ordering::SeqCst), 2);
    assert_eq!(rx.effects.lock().unwrap().get("waitlist-30-offered"), Some(&2), "two requests with one key");
    assert_eq!(rx.accepted.load(Ordering::SeqCst), 1, "one effect");
    assert_eq!(status(&app, "waitlist-30-offered").await.0, "DELIVERED");

    // A comes back: its DELIVERED mark is refused, nothing changes.
    let mut conn = yeyak::db::establish(&app.database_url()).await.unwrap();
    use yeyak::clock::Clock;
    assert!(!yeyak::outbox::store::mark_delivered(&mut conn, "waitlist-30-offered", "webhook", a.id, app.clock.now())
        .await
        .unwrap());
    let outcomes: Vec<String> = app
        .db()
        .await
        .query("SELECT outcome FROM notification_attempt ORDER BY attempted_at, attempt", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(outcomes, ["DUPLICATE"]);
}

#[tokio::test]
async fn five_failures_exhaust_a_delivery_on_the_backoff_schedule_and_an_admin_can_redrive_it() {
    let app = TestApp::spawn().await;
    let (rx, url) = start_receiver().await;
    rx.fail_status.store(503, Ordering::SeqCst);
    rx.fail_next.store(5, Ordering::SeqCst);
    enqueue_one(&app, &Intent::hold_expired(5, 1)).await;
    let w = worker(&app, &url);
    let policy = RetryPolicy::default();
    use yeyak::clock::Clock;

    for attempt in 1..=5 {
        let before = app.clock.now();
        let s = w.run_once(10).await.unwrap();
        assert_eq!(s.claimed, 1, "attempt {attempt}");
        let (state, count, next) = status(&app, "hold-5-expired").await;
        assert_eq!(count, attempt);
        if attempt < 5 {
            assert_eq!(state, "PENDING");
            let wait = next.unwrap() - before;
            let base = policy.base_delay(attempt);
            assert!(wait <= base && wait >= base * 4 / 5, "attempt {attempt}: waited {wait:?}, base {base:?}");
            // Not due before its time.
            app.clock.set(next.unwrap() - Duration::milliseconds(1));
            assert_eq!(w.run_once(10).await.unwrap().claimed, 0);
            app.clock.set(next.unwrap());
        } else {
            assert_eq!((state.as_str(), next), ("EXHAUSTED", None));
        }
    }
    assert_eq!(rx.requests.load(Ordering::SeqCst), 5);
    assert_eq!(app.count("SELECT count(*) FROM notification_attempt WHERE outcome = 'RETRYABLE'").await, 5);
    let (ok, report) = app.consistency().await;
    assert!(!ok);
    let exhausted =
        report["checks"].as_array().unwrap().iter().find(|c| c["name"] == "outbox_exhausted").unwrap().clone();
    assert_eq!(exhausted["samples"][0]["delivery_id"], "hold-5-expired");

    // Re-drive: a fresh budget, and the receiver is back.
    let res = app
        .request(reqwest::Method::POST, "/api/admin/outbox/hold-5-expired/redrive", ADMIN, None)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), reqwest::StatusCode::OK);
    let res = app
        .request(reqwest::Method::POST, "/api/admin/outbox/hold-5-expired/redrive", ADMIN, None)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), reqwest::StatusCode::CONFLICT, "only EXHAUSTED deliveries");
    assert_eq!(w.run_once(10).await.unwrap().delivered, 1);
    assert_eq!(status(&app, "hold-5-expired").await.0, "DELIVERED");
    app.assert_consistent().await;
}

#[tokio::test]
async fn a_permanent_refusal_exhausts_at_once_and_the_log_provider_delivers() {
    let app = TestApp::spawn().await;
    let (rx, url) = start_receiver().await;
    rx.fail_status.store(422, Ordering::SeqCst);
    rx.fail_next.store(1, Ordering::SeqCst);
    enqueue_one(&app, &Intent::hold_expired(6, 1)).await;
    let s = worker(&app, &url).run_once(10).await.unwrap();
    assert_eq!((s.claimed, s.exhausted), (1, 1));
    assert_eq!(status(&app, "hold-6-expired").await.0, "EXHAUSTED");

    enqueue_one(&app, &Intent::hold_expired(7, 1)).await;
    let log = DeliveryWorker::new(app.state.pool.clone(), Arc::new(app.clock.clone()), Provider::Log);
    assert_eq!(log.run_once(10).await.unwrap().delivered, 1);
    assert_eq!(status(&app, "hold-7-expired").await.0, "DELIVERED");
}

#[tokio::test]
async fn an_unreachable_webhook_is_retried_not_lost() {
    let app = TestApp::spawn().await;
    enqueue_one(&app, &Intent::hold_expired(8, 1)).await;
    let s = worker(&app, "http://127.0.0.1:1/hook").run_once(10).await.unwrap();
    assert_eq!((s.claimed, s.retried), (1, 1));
    let (state, count, next) = status(&app, "hold-8-expired").await;
    assert_eq!((state.as_str(), count), ("PENDING", 1));
    assert!(next.is_some());
}
