//! The write scenarios of the report, each over HTTP on a running fleet and
//! then its SQL ceiling (pgbench, same statements, same concurrency) on the
//! same database.

pub mod capacity;
pub mod drain;
pub mod rooms;
pub mod sample;

use crate::cpu::{Meter, Share};
use crate::fleet::Fleet;
use crate::load::Run;

/// Seconds of each timed HTTP scenario and of each pgbench run.
pub const SECONDS: u64 = 5;
pub const CLIENTS: usize = 32;
/// Commands yeyak lets into the database at once with default settings: the
/// bulkhead's foreground lane, pool (16) less the background lane (2)
/// (`src/admission/bulkhead.rs`). pgbench runs at most this many clients, so
/// that both sides put the same number of transactions in PostgreSQL at once
/// (more HTTP clients than this wait at the bulkhead, not in PostgreSQL).
pub const ADMITTED: usize = 14;

/// One line of the summary: what was measured and against which ceiling.
pub struct Row {
    pub name: String,
    pub clients: usize,
    pub run: Run,
    /// The rate compared with the ceiling, and what it counts.
    pub rate: f64,
    pub unit: &'static str,
    pub ceiling: Option<f64>,
    pub statements_per_request: Option<f64>,
    /// pgbench's clients beside the ceiling.
    pub ceiling_clients: Option<usize>,
    /// Statements per transaction of one request and of its script, as
    /// PostgreSQL logged them at bench time ("12 / 12").
    pub sent: Option<String>,
    /// Why the script is not the request's statements (no ratio then).
    pub stale: Option<String>,
    /// Where the CPU went while the HTTP load ran.
    pub cpu: Option<Share>,
    /// Cores PostgreSQL kept busy while pgbench ran the ceiling.
    pub ceiling_pg_cores: Option<f64>,
    pub notes: String,
}

impl Row {
    pub fn ratio(&self) -> Option<f64> {
        if self.stale.is_some() {
            return None;
        }
        self.ceiling.map(|c| self.rate / c)
    }
}

/// The script checked against the request: (stale, "server / script").
pub fn verdict(server: &[Vec<String>], script: &[Vec<String>]) -> (Option<String>, String) {
    let count = |t: &[Vec<String>]| t.iter().map(|x| x.len().to_string()).collect::<Vec<_>>().join("+");
    let stale = crate::capture::compare(server, script);
    if let Some(s) = &stale {
        eprintln!("STALE pgbench script: {s}");
    }
    (stale, format!("{} / {}", count(server), count(script)))
}

/// Statements the fleet sent while `work` ran, per request it made, and the
/// CPU time it took.
pub async fn counted<F: std::future::Future<Output = Run>>(fleet: &Fleet, work: F) -> (Run, f64, Share) {
    let before = fleet.metric_sum("yeyak_db_statements_total").await;
    let meter = Meter::start();
    let run = work.await;
    let cpu = meter.stop();
    let after = fleet.metric_sum("yeyak_db_statements_total").await;
    let per = (after - before) / run.total().max(1) as f64;
    (run, per, cpu)
}

/// Resources `<prefix>-1..=n` of `capacity`; their ids in order.
pub async fn resources(fleet: &Fleet, prefix: &str, n: usize, capacity: i64) -> Vec<i64> {
    fleet
        .sql(&format!(
            "INSERT INTO capacity_resource (code, name, capacity)
             SELECT '{prefix}-' || g, '{prefix}', {capacity} FROM generate_series(1, {n}) g"
        ))
        .await;
    fleet.ids(&format!("SELECT id FROM capacity_resource WHERE name = '{prefix}' ORDER BY id")).await
}
