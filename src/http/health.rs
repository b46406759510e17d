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
    // An idle pooled connection whose backend died (a restart) fails once and
    // is dropped; the question is whether PostgreSQL answers now, so a few
    // more checkouts are tried within the timeout.
    let probe = async {
        let mut last = String::new();
        for _ in 0..5 {
            let mut conn = state.pool.get().await.map_err(|e| e.to_string())?;
            match diesel::sql_query("SELECT 1").execute(&mut conn).await {
                Ok(n) => return Ok(n),
                Err(e) => last = e.to_string(),
            }
        }
        Err(last)
    };
    let postgres = match tokio::time::timeout(Duration::from_secs(2), probe).await {
        Ok(Ok(_)) => "ok",
        Ok(Err(_)) | Err(_) => "unavailable",
    };
    let redis = state.admission.redis_status().await;
    let body = json!({ "postgres": postgres, "redis": redis, "admission": state.admission.stats.snapshot() });
    if postgres == "ok" {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable().json(body)
    }
}
