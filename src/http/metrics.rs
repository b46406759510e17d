//! `GET /metrics`: the Prometheus scrape. Process-local counters are
//! copied in, and the outbox backlog and sweeper lag are read from the
//! database (each count served by a partial index).

use actix_web::{web, HttpResponse};
use diesel::sql_types::{BigInt, Double, Nullable};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use crate::state::AppState;

#[derive(QueryableByName)]
struct Backlog {
    #[diesel(sql_type = BigInt)]
    pending: i64,
    #[diesel(sql_type = BigInt)]
    exhausted: i64,
    #[diesel(sql_type = Nullable<Double>)]
    lag: Option<f64>,
}

/// Copies a process-local atomic into a Prometheus counter.
fn sync_counter(c: &prometheus::IntCounter, current: u64) {
    let seen = c.get();
    if current > seen {
        c.inc_by(current - seen);
    }
}

pub async fn scrape(state: web::Data<AppState>) -> HttpResponse {
    let m = &*state.metrics;
    sync_counter(&m.tx_retries, state.db_stats.retries());
    sync_counter(&m.db_statements, state.db_stats.statements());
    let a = state.admission.stats.snapshot();
    for (outcome, value) in
        [("admitted", a.admitted), ("rejected", a.rejected), ("fallback", a.fallback), ("suppressed", a.suppressed)]
    {
        sync_counter(&m.admission.with_label_values(&[outcome]), value);
    }
    let pool = state.pool.state();
    m.pool.with_label_values(&["open"]).set(i64::from(pool.connections));
    m.pool.with_label_values(&["idle"]).set(i64::from(pool.idle_connections));
    m.pool.with_label_values(&["in_use"]).set(i64::from(pool.connections - pool.idle_connections));
    m.sweeper_leader.set(i64::from(state.sweeper.is_leader().await));
    if let Ok(mut conn) = state.pool.get().await {
        let now = state.clock.now();
        let backlog = diesel::sql_query(crate::metrics::BACKLOG_SQL)
            .bind::<diesel::sql_types::Timestamptz, _>(now)
            .get_result::<Backlog>(&mut conn)
            .await;
        if let Ok(b) = backlog {
            m.outbox.with_label_values(&["pending"]).set(b.pending);
            m.outbox.with_label_values(&["exhausted"]).set(b.exhausted);
            m.sweeper_lag.set(b.lag.unwrap_or(0.0));
        }
    }
    let mut out = Vec::new();
    let _ = prometheus::Encoder::encode(&prometheus::TextEncoder::new(), &m.registry.gather(), &mut out);
    HttpResponse::Ok().content_type("text/plain; version=0.0.4").body(out)
}
