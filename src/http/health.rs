//! `/healthz` (the process answers) and `/readyz` (PostgreSQL answers now;
//! Redis is reported, never required).

use std::time::Duration;

use actix_web::{web, HttpResponse};
use diesel_async::RunQueryDsl;
use serde_json::json;

use crate::state::AppState;

pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({ "status": "ok" }))
}

pub async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    let probe = || async {
        let mut conn = state.pool.get().await.map_err(|e| e.to_string())?;
        diesel::sql_query("SELECT 1").execute(&mut conn).await.map_err(|e| e.to_string())
    };
    // Pooled connections that PostgreSQL closed a moment ago (a restart, a
    // failover) can still be checked out before their sockets read the close;
    // the pool drops each one whose query fails, so quick failures earn
    // another try until one connection answers or the 2 s are up.
    let answers = async {
        while probe().await.is_err() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    let postgres = match tokio::time::timeout(Duration::from_secs(2), answers).await {
        Ok(()) => "ok",
        Err(_) => "unavailable",
    };
    let redis = state.admission.redis_status().await;
    let body = json!({ "postgres": postgres, "redis": redis, "admission": state.admission.stats.snapshot() });
    if postgres == "ok" {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable().json(body)
    }
}
