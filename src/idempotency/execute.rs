//! Runs one command so that the claim, the business mutation and the stored
//! response commit in ONE transaction (SPEC §4): a crash leaves nothing behind
//! and the retry simply runs. Used unchanged by every mutating JSON route.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use scoped_futures::{ScopedBoxFuture, ScopedFutureExt};

use super::{acquire, finalize, Acquired, Fingerprint, Scope, StoredResponse};
use crate::clock::Clock;
use crate::db::{self, Conn, DbError, DbStats, Pool, TxError};
use crate::error::{ApiError, ErrorCode};

/// How a command ends inside its transaction.
#[derive(Debug)]
pub enum CommandError {
    /// A business rejection (room taken, stale version, …): its savepoint is
    /// rolled back, and the answer is stored and replayed like a success.
    Reject(ApiError),
    /// A database failure: nothing is stored; deadlocks re-run the transaction.
    Db(DbError),
    /// Invalid input found only inside the transaction (a room that does not
    /// exist or does not link): the whole transaction, claim included, is
    /// rolled back, so malformed requests are never stored (seed 001).
    Invalid(ApiError),
}

impl From<diesel::result::Error> for CommandError {
    fn from(e: diesel::result::Error) -> Self {
        CommandError::Db(DbError::from(e))
    }
}

impl From<DbError> for CommandError {
    fn from(e: DbError) -> Self {
        CommandError::Db(e)
    }
}

impl From<ApiError> for CommandError {
    fn from(e: ApiError) -> Self {
        CommandError::Reject(e)
    }
}

impl TxError for CommandError {
    fn is_retryable(&self) -> bool {
        matches!(self, CommandError::Db(e) if e.is_retryable())
    }
}

/// The answer to a command request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Executed now (a success or a business rejection).
    Fresh(StoredResponse),
    /// Executed before; this is the stored answer.
    Replayed(StoredResponse),
    FingerprintConflict,
    InProgress {
        retry_after_secs: u32,
    },
}

/// What `run_command` needs from the application.
pub struct Runner<'a> {
    pub admission: &'a crate::admission::Admission,
    pub metrics: &'a crate::metrics::Metrics,
    pub pool: &'a Pool,
    pub stats: &'a DbStats,
    pub clock: &'a Arc<dyn Clock>,
    pub lease: Duration,
}

/// Runs `command` at most once per scope. Without a scope (no key given on a
/// route where it is optional) the command simply runs in its transaction.
pub async fn run_command<'a, F>(
    runner: &Runner<'_>,
    guard: Option<(Scope, Fingerprint)>,
    command: F,
) -> Result<Outcome, ApiError>
where
    F: for<'r> Fn(&'r mut Conn, DateTime<Utc>) -> ScopedBoxFuture<'a, 'r, Result<StoredResponse, CommandError>>
        + Send
        + Sync
        + 'a,
{
    // Admission first: a refused command does no database work at all.
    let ticket = runner.admission.admit(guard.as_ref().map(|(scope, _)| scope)).await?;
    let keyed = guard.is_some();
    let took_over = &std::sync::atomic::AtomicBool::new(false);
    let guard = &guard;
    let command = &command;
    let clock = runner.clock;
    let lease = runner.lease;
    let result = db::transaction(runner.pool, runner.stats, |conn| {
        async move {
            let now = clock.now();
            let token = match guard {
                None => None,
                Some((scope, fingerprint)) => match acquire(conn, scope, fingerprint, now, lease).await? {
                    Acquired::New { token } => Some(token),
                    Acquired::Takeover { token, .. } => {
                        took_over.store(true, std::sync::atomic::Ordering::Relaxed);
                        Some(token)
                    }
                    Acquired::Replay(stored) => return Ok(Outcome::Replayed(stored)),
                    Acquired::FingerprintConflict => return Ok(Outcome::FingerprintConflict),
                    Acquired::InProgress { retry_after_secs } => return Ok(Outcome::InProgress { retry_after_secs }),
                },
            };
            // A savepoint: a rejected mutation leaves no row behind, yet the
            // rejection itself is stored in the same transaction.
            db::begin(conn).await?;
            let attempt = command(conn, now).await;
            let response = match db::finish(conn, attempt).await {
                Ok(response) => response,
                Err(CommandError::Reject(err)) => StoredResponse::from_error(&err),
                // Refusals judged by a constraint are stored like any other.
                Err(CommandError::Db(DbError::RoomTimeTaken)) => {
                    StoredResponse::from_error(&ApiError::room_time_taken())
                }
                Err(CommandError::Db(DbError::AlreadyWaiting)) => {
                    StoredResponse::from_error(&ApiError::already_waiting(None))
                }
                Err(other) => return Err(other),
            };
            if let (Some(token), Some((scope, _))) = (token, guard) {
                if !finalize(conn, scope, token, &response, now).await? {
                    // Someone took the claim over while we worked: roll our
                    // mutation back with everything else; it must not land.
                    return Err(CommandError::Reject(
                        ApiError::new(ErrorCode::CommandInProgress, "the same command is in progress; retry later")
                            .with_retry_after(1),
                    ));
                }
            }
            Ok(Outcome::Fresh(response))
        }
        .scope_boxed()
    })
    .await;
    ticket.finish().await;
    if let (true, Ok(outcome)) = (keyed, &result) {
        count(runner.metrics, outcome, took_over.load(std::sync::atomic::Ordering::Relaxed));
    }
    match result {
        Ok(outcome) => Ok(outcome),
        Err(CommandError::Reject(err)) => Ok(Outcome::Fresh(StoredResponse::from_error(&err))),
        Err(CommandError::Invalid(err)) => Err(err),
        Err(CommandError::Db(err)) => Err(ApiError::from(err)),
    }
}

impl Outcome {
    /// The HTTP answer; `keyed` adds `Idempotency-Replayed` when a key was sent.
    pub fn into_response(self, keyed: bool) -> actix_web::HttpResponse {
        use actix_web::http::StatusCode;
        let (stored, replayed) = match self {
            Outcome::Fresh(s) => (s, false),
            Outcome::Replayed(s) => (s, true),
            Outcome::FingerprintConflict => {
                return actix_web::ResponseError::error_response(&ApiError::new(
                    ErrorCode::IdempotencyFingerprintConflict,
                    "this Idempotency-Key was used for a different request",
                ))
            }
            Outcome::InProgress { retry_after_secs } => {
                return actix_web::ResponseError::error_response(
                    &ApiError::new(ErrorCode::CommandInProgress, "the same command is in progress; retry later")
                        .with_retry_after(retry_after_secs),
                )
            }
        };
        let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut res = actix_web::HttpResponse::build(status);
        res.content_type("application/json");
        if keyed {
            res.insert_header(("Idempotency-Replayed", if replayed { "true" } else { "false" }));
        }
        res.body(stored.body)
    }
}

/// Runs work that cannot live in one transaction (it commits several, or
/// calls out): the claim is committed first with a lease, the work runs, and
/// the response is stored by a CAS on the claim's token. A crash leaves the
/// claim to expire and be taken over; a late finisher changes nothing.
pub async fn run_claimed<W, Fut>(
    runner: &Runner<'_>,
    scope: Scope,
    fingerprint: Fingerprint,
    work: W,
) -> Result<Outcome, ApiError>
where
    W: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<StoredResponse, ApiError>>,
{
    let ticket = runner.admission.admit(Some(&scope)).await?;
    let outcome = run_claimed_admitted(runner, scope, fingerprint, work).await;
    ticket.finish().await;
    outcome
}

async fn run_claimed_admitted<W, Fut>(
    runner: &Runner<'_>,
    scope: Scope,
    fingerprint: Fingerprint,
    work: W,
) -> Result<Outcome, ApiError>
where
    W: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<StoredResponse, ApiError>>,
{
    let mut pooled = runner.pool.get().await.map_err(DbError::from)?;
    let conn: &mut Conn = &mut pooled;
    db::begin(conn).await.map_err(DbError::from)?;
    let acquired = acquire(conn, &scope, &fingerprint, runner.clock.now(), runner.lease).await;
    let acquired = db::finish(conn, acquired).await.map_err(DbError::from)?;
    let (token, took_over) = match acquired {
        Acquired::New { token } => (token, false),
        Acquired::Takeover { token, .. } => (token, true),
        Acquired::Replay(stored) => return Ok(counted(runner.metrics, Outcome::Replayed(stored), false)),
        Acquired::FingerprintConflict => return Ok(counted(runner.metrics, Outcome::FingerprintConflict, false)),
        Acquired::InProgress { retry_after_secs } => {
            return Ok(counted(runner.metrics, Outcome::InProgress { retry_after_secs }, false))
        }
    };
    match work().await {
        Ok(response) => {
            let stored = finalize(conn, &scope, token, &response, runner.clock.now()).await.map_err(DbError::from)?;
            if !stored {
                tracing::warn!(operation = scope.operation, "claim was taken over; this result is not stored");
            }
            Ok(counted(runner.metrics, Outcome::Fresh(response), took_over))
        }
        Err(err) => {
            let _ = super::store::release(conn, &scope, token).await;
            Err(err)
        }
    }
}

/// Counts what the idempotency record decided (metrics).
fn count(metrics: &crate::metrics::Metrics, outcome: &Outcome, took_over: bool) {
    let label = match outcome {
        Outcome::Fresh(_) if took_over => "takeover",
        Outcome::Fresh(_) => "new",
        Outcome::Replayed(_) => "replay",
        Outcome::FingerprintConflict => "conflict",
        Outcome::InProgress { .. } => "in_progress",
    };
    metrics.idempotency.with_label_values(&[label]).inc();
}

fn counted(metrics: &crate::metrics::Metrics, outcome: Outcome, took_over: bool) -> Outcome {
    count(metrics, &outcome, took_over);
    outcome
}
