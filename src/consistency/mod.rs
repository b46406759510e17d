//! Invariant checks that must always find 0 rows. Each check (`checks.rs`,
//! which also names the constraints that guard invariants instead) is one
//! SQL query returning the offending rows as JSON; the admin API and the
//! admin page show every check, those at 0 included.

mod checks;

pub use checks::CHECKS;

use diesel::sql_types::{BigInt, Jsonb};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use serde::Serialize;

use crate::db::{Conn, DbError};

/// How many offending rows a check shows.
const SAMPLE_LIMIT: i64 = 20;

pub struct Check {
    pub name: &'static str,
    pub description: &'static str,
    /// A query whose rows are the violations.
    pub violations_sql: &'static str,
}

/// Instants the time-dependent checks compare against (from the app clock).
#[derive(Debug, Clone, Copy)]
pub struct CheckContext {
    /// Due items older than this are overdue: now minus two sweep intervals.
    pub overdue_before: chrono::DateTime<chrono::Utc>,
    /// Claims whose lease ended before this are stale: now minus ten minutes.
    pub stale_lease_before: chrono::DateTime<chrono::Utc>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CheckResult {
    pub name: &'static str,
    pub description: &'static str,
    pub count: i64,
    pub samples: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Report {
    pub ok: bool,
    pub checks: Vec<CheckResult>,
}

#[derive(QueryableByName)]
struct Counted {
    #[diesel(sql_type = BigInt)]
    count: i64,
    #[diesel(sql_type = Jsonb)]
    samples: serde_json::Value,
}

/// Runs every check in one read-only snapshot.
pub async fn run(conn: &mut Conn, ctx: CheckContext) -> Result<Report, DbError> {
    crate::db::begin_snapshot(conn).await?;
    let checks = run_checks(conn, ctx).await;
    let checks = crate::db::finish(conn, checks).await?;
    Ok(Report { ok: checks.iter().all(|c| c.count == 0), checks })
}

async fn run_checks(conn: &mut Conn, ctx: CheckContext) -> diesel::QueryResult<Vec<CheckResult>> {
    let mut out = Vec::with_capacity(CHECKS.len());
    // Our own clock's instant as a literal: no request input reaches this SQL.
    let overdue_before = format!("'{}'::timestamptz", ctx.overdue_before.to_rfc3339());
    for check in CHECKS {
        let violations = check
            .violations_sql
            .replace("$OVERDUE_BEFORE", &overdue_before)
            .replace("$STALE_LEASE_BEFORE", &format!("'{}'::timestamptz", ctx.stale_lease_before.to_rfc3339()));
        let sql = format!(
            "SELECT count(*) AS count,
                    COALESCE(jsonb_agg(to_jsonb(v) - 'rn') FILTER (WHERE v.rn <= {SAMPLE_LIMIT}), '[]'::jsonb) AS samples
               FROM (SELECT x.*, row_number() OVER () AS rn FROM ({violations}) x) v"
        );
        let row: Counted = diesel::sql_query(sql).get_result(conn).await?;
        let samples = match row.samples {
            serde_json::Value::Array(items) => items,
            _ => Vec::new(),
        };
        out.push(CheckResult { name: check.name, description: check.description, count: row.count, samples });
    }
    Ok(out)
}
