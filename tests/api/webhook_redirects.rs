//! The webhook follows no redirect (SPEC §20): a 3xx answer is a failed
//! attempt, recorded with the status it got.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use actix_web::{web as aweb, App, HttpResponse, HttpServer};
use yeyak::clock::Clock;

use crate::helpers::*;

/// A receiver that answers `/moved` with a redirect to `/hook`, and counts
/// what reaches `/hook` by any method.
async fn redirecting_receiver(status: u16) -> (Arc<AtomicU32>, String) {
    let reached = Arc::new(AtomicU32::new(0));
    let counter = reached.clone();
    let server = HttpServer::new(move || {
        let counter = counter.clone();
        App::new()
            .route(
                "/moved",
                aweb::post().to(move || async move {
                    HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap())
                        .insert_header(("Location", "/hook"))
                        .finish()
                }),
            )
            .default_service(aweb::to(move || {
                let counter = counter.clone();
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    HttpResponse::Created().finish()
                }
            }))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let addr = server.addrs()[0];
    tokio::spawn(server.run());
    (reached, format!("http://{addr}/moved"))
}

#[tokio::test]
async fn a_webhook_redirect_is_a_failed_attempt_not_followed() {
    let app = TestApp::spawn().await;
    for (i, status) in [301u16, 302, 303, 307, 308].into_iter().enumerate() {
        let (reached, url) = redirecting_receiver(status).await;
        let intent = yeyak::outbox::Intent::hold_expired(100 + i as i64, 1);
        let mut conn = yeyak::db::establish(&app.database_url()).await.unwrap();
        yeyak::outbox::enqueue(&mut conn, &intent, app.clock.now()).await.unwrap();
        let worker = yeyak::outbox::worker::DeliveryWorker::new(
            app.state.pool.clone(),
            Arc::new(app.clock.clone()),
            yeyak::outbox::provider::Provider::webhook(&url),
        );
        let summary = worker.run_once(10).await.unwrap();
        assert_eq!((summary.claimed, summary.delivered), (1, 0), "{status}: {summary:?}");
        assert_eq!(reached.load(Ordering::SeqCst), 0, "{status}: the redirect was not followed");
        let db = app.db().await;
        let row = db
            .query_one("SELECT status FROM notification_outbox WHERE delivery_id = $1", &[&intent.delivery_id])
            .await
            .unwrap();
        assert_eq!(row.get::<_, String>(0), "EXHAUSTED", "{status}: a redirect is permanent");
        let attempt = db
            .query_one(
                "SELECT outcome, detail FROM notification_attempt WHERE delivery_id = $1",
                &[&intent.delivery_id],
            )
            .await
            .unwrap();
        let (outcome, detail): (String, Option<String>) = (attempt.get(0), attempt.get(1));
        assert_eq!(outcome, "PERMANENT", "{status}");
        assert!(detail.unwrap_or_default().contains(&status.to_string()), "{status}: the attempt names the answer");
    }
}
