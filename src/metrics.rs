//! Prometheus metrics (`/metrics`). Event counters are incremented where the
//! event happens; state (outbox backlog, sweeper lag, pool use) is read when
//! scraped. Labels carry route templates and codes, never owners, keys or
//! digests.

use std::sync::atomic::Ordering;

use prometheus::{HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry};

pub struct Metrics {
    pub registry: Registry,
    pub http_requests: IntCounterVec,
    pub http_duration: HistogramVec,
    pub idempotency: IntCounterVec,
    pub holds: IntCounterVec,
    pub bookings: IntCounterVec,
    /// Every command by operation, outcome and refusal code.
    pub commands: IntCounterVec,
    pub tx_retries: IntCounter,
    pub db_statements: IntCounter,
    pub sweeper_ticks: IntCounterVec,
    pub sweeper_leader: IntGauge,
    pub sweeper_items: IntCounterVec,
    pub sweeper_lag: prometheus::Gauge,
    pub outbox: IntGaugeVec,
    pub outbox_delivery: prometheus::Histogram,
    pub admission: IntCounterVec,
    pub pool: IntGaugeVec,
    pub idempotency_purged: IntCounter,
    /// Rows the retention purge removed, by table (a fixed set).
    pub purged_rows: IntCounterVec,
    /// Requests whose handler panicked and got a 500 from the boundary (SPEC §22).
    pub panics: IntCounter,
}

fn counter_vec(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let c = IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric");
    r.register(Box::new(c.clone())).expect("registered once");
    c
}

fn gauge_vec(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    let g = IntGaugeVec::new(Opts::new(name, help), labels).expect("valid metric");
    r.register(Box::new(g.clone())).expect("registered once");
    g
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A registry of its own per application, so that two apps in one
    /// process (tests) never mix their numbers.
    pub fn new() -> Self {
        let r = Registry::new_custom(Some("yeyak".into()), None).expect("registry");
        let http_duration = HistogramVec::new(
            HistogramOpts::new("http_request_duration_seconds", "HTTP request latency by route template")
                .buckets(vec![0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0]),
            &["method", "route"],
        )
        .expect("valid metric");
        r.register(Box::new(http_duration.clone())).expect("registered once");
        let tx_retries =
            IntCounter::new("db_tx_retries_total", "transactions re-run after a deadlock or serialization failure")
                .expect("valid metric");
        r.register(Box::new(tx_retries.clone())).expect("registered once");
        let db_statements =
            IntCounter::new("db_statements_total", "SQL statements sent on pooled connections (queries per request)")
                .expect("valid metric");
        r.register(Box::new(db_statements.clone())).expect("registered once");
        let sweeper_leader =
            IntGauge::new("sweeper_leader", "1 while this process holds the sweeper's leader gate").expect("valid");
        r.register(Box::new(sweeper_leader.clone())).expect("registered once");
        let sweeper_lag =
            prometheus::Gauge::new("sweeper_lag_seconds", "age of the oldest expired hold or offer not yet swept")
                .expect("valid");
        r.register(Box::new(sweeper_lag.clone())).expect("registered once");
        let outbox_delivery = prometheus::Histogram::with_opts(
            HistogramOpts::new("outbox_delivery_seconds", "time from enqueue to delivery")
                .buckets(vec![0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0]),
        )
        .expect("valid");
        r.register(Box::new(outbox_delivery.clone())).expect("registered once");
        let idempotency_purged =
            IntCounter::new("idempotency_records_purged_total", "idempotency records removed after retention")
                .expect("valid");
        r.register(Box::new(idempotency_purged.clone())).expect("registered once");
        let panics = IntCounter::new("panics_total", "requests whose handler panicked (answered 500 INTERNAL)")
            .expect("valid metric");
        r.register(Box::new(panics.clone())).expect("registered once");
        Metrics {
            http_requests: counter_vec(
                &r,
                "http_requests_total",
                "HTTP requests by route template and status",
                &["method", "route", "status"],
            ),
            idempotency: counter_vec(
                &r,
                "idempotency_outcomes_total",
                "what acquiring an idempotency scope found",
                &["outcome"],
            ),
            holds: counter_vec(&r, "holds_total", "hold commands by result and reason", &["result", "reason"]),
            bookings: counter_vec(
                &r,
                "bookings_total",
                "booking creations by result and reason",
                &["result", "reason"],
            ),
            commands: counter_vec(
                &r,
                "commands_total",
                "commands by operation, outcome (done, refused, replayed, forbidden, not_admitted, not_run, fingerprint_conflict, in_progress) and error code",
                &["operation", "outcome", "reason"],
            ),
            sweeper_ticks: counter_vec(&r, "sweeper_ticks_total", "sweeper ticks by outcome", &["outcome"]),
            sweeper_items: counter_vec(&r, "sweeper_items_total", "items the sweeper processed", &["kind"]),
            outbox: gauge_vec(&r, "outbox_deliveries", "notifications by status", &["status"]),
            admission: counter_vec(&r, "admission_total", "admission decisions", &["outcome"]),
            pool: gauge_vec(&r, "db_pool_connections", "PostgreSQL pool connections", &["state"]),
            purged_rows: counter_vec(
                &r,
                "purged_rows_total",
                "rows past their retention removed by the sweeper",
                &["table"],
            ),
            registry: r,
            http_duration,
            tx_retries,
            db_statements,
            sweeper_leader,
            sweeper_lag,
            outbox_delivery,
            idempotency_purged,
            panics,
        }
    }
}

/// What a scrape reads from the database. Each count is served by a partial
/// index (`notification_outbox_due_idx`, `notification_outbox_exhausted_idx`),
/// so a scrape stays cheap however many delivered rows the outbox holds;
/// `tests/api/abuse.rs` checks the plan.
pub const BACKLOG_SQL: &str =
    "SELECT (SELECT count(*) FROM notification_outbox WHERE status = 'PENDING') AS pending,
            (SELECT count(*) FROM notification_outbox WHERE status = 'EXHAUSTED') AS exhausted,
            extract(epoch FROM $1 - LEAST(
                (SELECT min(expires_at) FROM capacity_hold WHERE state = 'HELD' AND expires_at <= $1),
                (SELECT min(expires_at) FROM capacity_offer WHERE state = 'ACTIVE' AND expires_at <= $1)))::float8 AS lag";

impl Metrics {
    /// Counts one finished request (called by the response middleware).
    /// `route` must be a registered template (or [`UNMATCHED_ROUTE`]); the
    /// method is folded into a fixed set here, so no client input becomes a
    /// label value.
    pub fn observe_request(&self, method: &actix_web::http::Method, route: &str, status: u16, seconds: f64) {
        let m = self;
        let method = method_label(method);
        m.http_requests.with_label_values(&[method, route, &status.to_string()]).inc();
        m.http_duration.with_label_values(&[method, route]).observe(seconds);
    }
}

/// The route label of a request that matched no registered route.
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// Methods outside the standard set are `other` (SPEC §13): `curl -X
/// RANDOM…` in a loop must not grow the scrape.
pub fn method_label(method: &actix_web::http::Method) -> &'static str {
    use actix_web::http::Method;
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// Reads an atomic without caring about ordering (metrics only).
pub fn relaxed(a: &std::sync::atomic::AtomicU64) -> u64 {
    a.load(Ordering::Relaxed)
}

/// A metric of Part I that counts one operation's results by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultCounter {
    Bookings,
    Holds,
}

impl Metrics {
    /// The Part I counter of an operation's results by reason.
    pub fn result_counter(&self, counter: ResultCounter) -> &IntCounterVec {
        match counter {
            ResultCounter::Bookings => &self.bookings,
            ResultCounter::Holds => &self.holds,
        }
    }
}
