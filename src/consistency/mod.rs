//! Invariant checks that must always find 0 rows. Each check (`checks.rs`,
//! which also names the constraints that guard invariants instead) is one
//! SQL query returning the offending rows as JSON, or a condition on a pass
//! that several checks share (the history's three read it once); the admin
//! API and the admin page show every check, those at 0 included.

mod checks;

pub use checks::CHECKS;

use std::sync::atomic::{AtomicUsize, Ordering};

use diesel::sql_types::{BigInt, Integer, Jsonb};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use serde::Serialize;

use crate::db::{Conn, DbError};

/// How many offending rows a check shows.
const SAMPLE_LIMIT: i64 = 20;

pub struct Check {
    pub name: &'static str,
    pub description: &'static str,
    pub reading: Reading,
}

/// How a check finds its violations.
pub enum Reading {
    /// A query whose rows are the violations.
    Query(&'static str),
    /// A condition on the rows of a pass that several checks share, and
    /// what a violation shows (`jsonb_build_object` arguments): the pass
    /// reads its tables once for all of them.
    InPass { pass: &'static Pass, violation: &'static str, shows: &'static str },
}

/// Rows several checks read in one scan.
pub struct Pass {
    pub rows_sql: &'static str,
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
    /// The check's place in `CHECKS`.
    #[diesel(sql_type = Integer)]
    i: i32,
    #[diesel(sql_type = BigInt)]
    count: i64,
    #[diesel(sql_type = Jsonb)]
    samples: serde_json::Value,
}

/// Runs every check in one read-only snapshot.
pub async fn run(conn: &mut Conn, ctx: CheckContext) -> Result<Report, DbError> {
    crate::db::begin_snapshot(conn).await?;
    let next = AtomicUsize::new(0);
    let checks = take_checks(conn, ctx, &next).await.map(in_order);
    let checks = crate::db::finish(conn, checks).await?;
    Ok(Report { ok: checks.iter().all(|c| c.count == 0), checks })
}

/// Runs every check in one read-only snapshot shared by two connections:
/// the second imports the first's (`pg_export_snapshot`, `SET TRANSACTION
/// SNAPSHOT`), and each takes the next check as it finishes one. A large
/// site's check then reads on two cores while every check still sees the
/// same instant (SPEC §27: 13.9 s on one connection at 3,000,000 bookings,
/// most of it in the three checks of the history).
pub async fn run_on_two(first: &mut Conn, second: &mut Conn, ctx: CheckContext) -> Result<Report, DbError> {
    crate::db::begin_snapshot(first).await?;
    if let Err(e) = crate::db::begin_snapshot(second).await {
        return crate::db::finish(first, Err(DbError::from(e))).await;
    }
    let checks = async {
        let id = export_snapshot(first).await?;
        diesel::sql_query(format!("SET TRANSACTION SNAPSHOT '{id}'")).execute(second).await?;
        let next = AtomicUsize::new(0);
        let (a, b) = futures_util::future::join(take_checks(first, ctx, &next), take_checks(second, ctx, &next)).await;
        let mut all = a?;
        all.extend(b?);
        Ok::<_, diesel::result::Error>(in_order(all))
    }
    .await;
    let checks = crate::db::finish(second, checks).await;
    let checks = crate::db::finish(first, checks).await?;
    Ok(Report { ok: checks.iter().all(|c| c.count == 0), checks })
}

/// The exporting transaction's snapshot id (hex digits and dashes, as
/// PostgreSQL writes it; anything else is refused before it reaches SQL).
async fn export_snapshot(conn: &mut Conn) -> diesel::QueryResult<String> {
    #[derive(QueryableByName)]
    struct Exported {
        #[diesel(sql_type = diesel::sql_types::Text)]
        id: String,
    }
    let id = diesel::sql_query("SELECT pg_export_snapshot() AS id").get_result::<Exported>(conn).await?.id;
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return Err(diesel::result::Error::QueryBuilderError(format!("unexpected snapshot id {id:?}").into()));
    }
    Ok(id)
}

/// The results in `CHECKS` order, a pass's two halves added up into one
/// result per check (their first samples kept).
fn in_order(mut results: Vec<(usize, CheckResult)>) -> Vec<CheckResult> {
    results.sort_by_key(|(i, _)| *i);
    let mut merged: Vec<(usize, CheckResult)> = Vec::with_capacity(results.len());
    for (i, result) in results {
        match merged.last_mut() {
            Some((last, into)) if *last == i => {
                into.count += result.count;
                into.samples.extend(result.samples);
                into.samples.truncate(SAMPLE_LIMIT as usize);
            }
            _ => merged.push((i, result)),
        }
    }
    merged.into_iter().map(|(_, c)| c).collect()
}

/// Which half of the bookings' ids a pass's job reads, so that the two
/// connections of `run_on_two` share a pass.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Half {
    Lower,
    Upper,
}

impl Half {
    /// The condition on a booking id (`$SLICE` in a pass): up to the middle
    /// of the ids, or after it (found from the primary key's two ends).
    fn condition(self) -> String {
        let middle = "(SELECT (min(id) + max(id)) / 2 FROM reservation)";
        match self {
            Half::Lower => format!("<= {middle}"),
            Half::Upper => format!("> {middle}"),
        }
    }
}

/// A unit of work, one statement: a check with its own query, or a pass
/// with every check that reads it (`(place in CHECKS, violation, shows)`).
enum Job {
    Own(usize, &'static str),
    Pass(&'static Pass, Vec<(usize, &'static str, &'static str)>, Half),
}

/// The checks as jobs, passes first (they take longest), each in two halves.
fn jobs() -> Vec<Job> {
    let mut passes: Vec<(&Pass, Vec<_>)> = Vec::new();
    let mut own = Vec::new();
    for (i, check) in CHECKS.iter().enumerate() {
        match check.reading {
            Reading::Query(sql) => own.push(Job::Own(i, sql)),
            Reading::InPass { pass, violation, shows } => {
                match passes.iter_mut().find(|(p, _)| p.rows_sql == pass.rows_sql) {
                    Some((_, checks)) => checks.push((i, violation, shows)),
                    None => passes.push((pass, vec![(i, violation, shows)])),
                }
            }
        }
    }
    passes
        .into_iter()
        .flat_map(|(pass, checks)| [Half::Lower, Half::Upper].map(|half| Job::Pass(pass, checks.clone(), half)))
        .chain(own)
        .collect()
}

/// One statement answering `(i, count, samples)` for each check of a job.
/// `consistency_samples` (a migration's aggregate) keeps the first few
/// violations it is fed; the filter feeds it only violations, so a healthy
/// site's pass builds no sample and numbers no row.
fn job_sql(job: &Job) -> String {
    match job {
        Job::Own(i, violations) => format!(
            "SELECT {i} AS i, count(*) AS count, consistency_samples(to_jsonb(x), {SAMPLE_LIMIT}) AS samples
               FROM ({violations}) x"
        ),
        Job::Pass(pass, checks, half) => {
            let (mut sums, mut rows) = (Vec::new(), Vec::new());
            for (j, (i, violation, shows)) in checks.iter().enumerate() {
                sums.push(format!(
                    "count(*) FILTER (WHERE {violation}) AS n{j},
                     consistency_samples(jsonb_build_object({shows}), {SAMPLE_LIMIT}) FILTER (WHERE {violation}) AS s{j}"
                ));
                rows.push(format!("({i}, a.n{j}, a.s{j})"));
            }
            format!(
                "SELECT v.i, v.count, v.samples
                   FROM (SELECT {sums} FROM ({rows_sql}) p) a
                  CROSS JOIN LATERAL (VALUES {rows}) v(i, count, samples)",
                sums = sums.join(", "),
                rows = rows.join(", "),
                rows_sql = pass.rows_sql.replace("$SLICE", &half.condition())
            )
        }
    }
}

/// Runs jobs on `conn` until none is left, taking the next from `next`.
async fn take_checks(
    conn: &mut Conn,
    ctx: CheckContext,
    next: &AtomicUsize,
) -> diesel::QueryResult<Vec<(usize, CheckResult)>> {
    let mut out = Vec::new();
    // Our own clock's instants as literals: no request input reaches this SQL.
    let overdue_before = format!("'{}'::timestamptz", ctx.overdue_before.to_rfc3339());
    let stale_lease_before = format!("'{}'::timestamptz", ctx.stale_lease_before.to_rfc3339());
    let jobs = jobs();
    while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
        let sql = job_sql(job)
            .replace("$OVERDUE_BEFORE", &overdue_before)
            .replace("$STALE_LEASE_BEFORE", &stale_lease_before);
        for row in diesel::sql_query(sql).load::<Counted>(conn).await? {
            let i = usize::try_from(row.i).expect("a check's place");
            let samples = match row.samples {
                serde_json::Value::Array(items) => items,
                _ => Vec::new(),
            };
            let check = &CHECKS[i];
            out.push((i, CheckResult { name: check.name, description: check.description, count: row.count, samples }));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_checks_read_one_pass_in_two_halves_and_every_check_has_one_job() {
        let jobs = jobs();
        let Some(Job::Pass(_, first, Half::Lower)) = <[Job]>::first(&jobs) else { panic!("the pass comes first") };
        assert!(matches!(&jobs[1], Job::Pass(_, second, Half::Upper) if second == first), "then its other half");
        let names: Vec<&str> = first.iter().map(|(i, _, _)| CHECKS[*i].name).collect();
        assert_eq!(
            names,
            [
                "booking_without_created_event",
                "booking_version_differs_from_history",
                "booking_status_differs_from_history"
            ]
        );
        let mut places: Vec<usize> = jobs
            .iter()
            .flat_map(|job| match job {
                Job::Own(i, _) => vec![*i],
                Job::Pass(_, checks, Half::Lower) => checks.iter().map(|(i, _, _)| *i).collect(),
                Job::Pass(_, _, Half::Upper) => vec![],
            })
            .collect();
        places.sort();
        assert_eq!(places, (0..CHECKS.len()).collect::<Vec<_>>());
    }
}
