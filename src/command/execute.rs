//! The pipeline every command runs through, whichever door it came from:
//! the role check of its declaration, admission, the idempotency record
//! (claim, work and stored answer commit in ONE transaction, SPEC §4, so a
//! crash leaves nothing behind and the retry simply runs), metrics per
//! operation, and a typed outcome. The stored answer is written and read
//! back here only: doors get the value or the refusal, never JSON to parse.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chrono::Duration;
use scoped_futures::ScopedFutureExt;
use serde::de::DeserializeOwned;

use super::{Command, CommandError, Ctx, Operation, Principal, Role, Shape};
use crate::admission::{Admission, Lane};
use crate::clock::Clock;
use crate::db::{self, Conn, DbError, DbStats, Pool};
use crate::error::{ApiError, ErrorCode};
use crate::idempotency::store::{acquire, finalize, release, Acquired};
use crate::idempotency::{Fingerprint, IdempotencyKey, Scope, StoredResponse};
use crate::metrics::Metrics;
use crate::policy::Policy;

/// The answer to a command that ran now or before.
#[derive(Debug)]
pub struct Executed<T> {
    /// The value, or the refusal (ran now, or stored and replayed).
    pub answer: Result<T, ApiError>,
    /// Whether this is the stored answer of an earlier run.
    pub replayed: bool,
    /// The answer as stored: status and the exact body bytes a replay gives.
    pub response: StoredResponse,
}

impl<T> Executed<T> {
    pub fn into_answer(self) -> Result<T, ApiError> {
        self.answer
    }
}

/// What the idempotency record decided.
enum Record<T> {
    Ran { answer: Result<T, ApiError>, response: StoredResponse },
    Replayed(StoredResponse),
    FingerprintConflict,
    InProgress { retry_after_secs: u32 },
}

/// Handles the pipeline needs; built once at start-up, shared by every door.
pub struct Pipeline {
    pool: Pool,
    stats: Arc<DbStats>,
    admission: Arc<Admission>,
    clock: Arc<dyn Clock>,
    metrics: Arc<Metrics>,
    /// How long a claim of a command that spans transactions is leased.
    lease: Duration,
    policy: Policy,
    /// Told after a command that changes the room catalogue ran.
    on_catalogue_change: Option<Box<dyn Fn() + Send + Sync>>,
}

impl Pipeline {
    pub fn new(
        pool: Pool,
        stats: Arc<DbStats>,
        admission: Arc<Admission>,
        clock: Arc<dyn Clock>,
        metrics: Arc<Metrics>,
        lease: Duration,
        policy: Policy,
    ) -> Self {
        Pipeline { pool, stats, admission, clock, metrics, lease, policy, on_catalogue_change: None }
    }

    /// Calls `listener` after every command that changed the catalogue.
    pub fn on_catalogue_change(mut self, listener: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_catalogue_change = Some(Box::new(listener));
        self
    }

    /// What the pipeline runs on, for the work that shares it (the sweeper).
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    pub fn admission(&self) -> &Arc<Admission> {
        &self.admission
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Runs `command` for `principal`, at most once per (tenant, operation,
    /// key) when a key is given. `Err` is an answer that was not stored
    /// (refused role, admission, invalid input, a conflicting or running
    /// duplicate, the database away); `Ok` carries the value or the stored
    /// refusal.
    pub async fn execute<C: Command>(
        &self,
        principal: &Principal,
        key: Option<IdempotencyKey>,
        command: &C,
    ) -> Result<Executed<C::Output>, ApiError> {
        let op = command.operation();
        if !op.allowed.permits(principal.role()) {
            self.count(op, "forbidden", "");
            return Err(forbidden(op, principal));
        }
        let guard = key.map(|key| {
            let fingerprint = Fingerprint::compute(op.name, &command.fingerprint(), principal.digest());
            (Scope { tenant: principal.tenant().clone(), operation: op.name, key }, fingerprint)
        });
        // Admission first: a refused command does no database work at all.
        let lane = if principal.role() == Role::System { Lane::Background } else { Lane::Foreground };
        let ticket = match self.admission.admit(lane, guard.as_ref().map(|(scope, _)| scope)).await {
            Ok(ticket) => ticket,
            Err(refused) => {
                self.count(op, "not_admitted", &code_label(refused.code));
                return Err(refused);
            }
        };
        let took_over = AtomicBool::new(false);
        let result = match op.shape {
            Shape::OneTransaction => self.in_transaction(principal, guard.as_ref(), command, &took_over).await,
            Shape::SpansTransactions => self.claimed(principal, guard.as_ref(), command, &took_over).await,
        };
        ticket.finish().await;
        if op.changes_catalogue && matches!(result, Ok(Record::Ran { answer: Ok(_), .. })) {
            if let Some(listener) = &self.on_catalogue_change {
                listener();
            }
        }
        let record = match result {
            Ok(record) => record,
            Err(err) => {
                let err = match err {
                    CommandError::Reject(e) | CommandError::Invalid(e) => e,
                    CommandError::Db(e) => ApiError::from(e),
                };
                self.count(op, "not_run", &code_label(err.code));
                return Err(err);
            }
        };
        if guard.is_some() {
            self.count_record(&record, took_over.load(Ordering::Relaxed));
        }
        match record {
            Record::Ran { answer, response } => {
                match &answer {
                    Ok(_) => self.count(op, "done", ""),
                    Err(e) => self.count(op, "refused", &code_label(e.code)),
                }
                Ok(Executed { answer, replayed: false, response })
            }
            Record::Replayed(response) => {
                self.count(op, "replayed", "");
                Ok(Executed { answer: decode(&response), replayed: true, response })
            }
            Record::FingerprintConflict => {
                self.count(op, "fingerprint_conflict", "");
                Err(ApiError::new(
                    ErrorCode::IdempotencyFingerprintConflict,
                    "this Idempotency-Key was used for a different request",
                ))
            }
            Record::InProgress { retry_after_secs } => {
                self.count(op, "in_progress", "");
                Err(in_progress().with_retry_after(retry_after_secs))
            }
        }
    }

    /// [`execute`](Self::execute) for doors that only need the value or the
    /// refusal (forms, the door display, the sweeper).
    pub async fn run<C: Command>(
        &self,
        principal: &Principal,
        key: Option<IdempotencyKey>,
        command: &C,
    ) -> Result<C::Output, ApiError> {
        self.execute(principal, key, command).await?.into_answer()
    }

    /// Claim, work and stored answer in one transaction; the work in a
    /// savepoint, so a refusal leaves no row behind yet is stored.
    async fn in_transaction<C: Command>(
        &self,
        principal: &Principal,
        guard: Option<&(Scope, Fingerprint)>,
        command: &C,
        took_over: &AtomicBool,
    ) -> Result<Record<C::Output>, CommandError> {
        let (clock, lease, policy) = (&self.clock, self.lease, &self.policy);
        let op = command.operation();
        db::transaction(&self.pool, &self.stats, |conn| {
            async move {
                let now = clock.now();
                let token = match guard {
                    None => None,
                    Some((scope, fingerprint)) => match acquire(conn, scope, fingerprint, now, lease).await? {
                        Acquired::New { token } => Some(token),
                        Acquired::Takeover { token, .. } => {
                            took_over.store(true, Ordering::Relaxed);
                            Some(token)
                        }
                        Acquired::Replay(stored) => return Ok(Record::Replayed(stored)),
                        Acquired::FingerprintConflict => return Ok(Record::FingerprintConflict),
                        Acquired::InProgress { retry_after_secs } => {
                            return Ok(Record::InProgress { retry_after_secs })
                        }
                    },
                };
                let ctx = Ctx { principal, policy, now };
                db::begin(conn).await?;
                let attempt = run_checked(conn, &ctx, command).await;
                let (answer, response) = settle(op, db::finish(conn, attempt).await)?;
                if let (Some(token), Some((scope, _))) = (token, guard) {
                    if !finalize(conn, scope, token, &response, now).await? {
                        // Someone took the claim over while we worked: roll our
                        // work back with everything else; it must not land.
                        return Err(CommandError::Reject(in_progress().with_retry_after(1)));
                    }
                }
                Ok(Record::Ran { answer, response })
            }
            .scope_boxed()
        })
        .await
    }

    /// Work that commits transactions of its own: the claim is committed
    /// first with a lease, the work runs, the answer is stored by a CAS on
    /// the claim's token. A crash leaves the claim to expire and be taken
    /// over; a late finisher changes nothing.
    async fn claimed<C: Command>(
        &self,
        principal: &Principal,
        guard: Option<&(Scope, Fingerprint)>,
        command: &C,
        took_over: &AtomicBool,
    ) -> Result<Record<C::Output>, CommandError> {
        let op = command.operation();
        let mut pooled = self.pool.get().await.map_err(DbError::from)?;
        let conn: &mut Conn = &mut pooled;
        let token = match guard {
            None => None,
            Some((scope, fingerprint)) => {
                db::begin(conn).await?;
                let acquired = acquire(conn, scope, fingerprint, self.clock.now(), self.lease).await;
                match db::finish(conn, acquired).await? {
                    Acquired::New { token } => Some(token),
                    Acquired::Takeover { token, .. } => {
                        took_over.store(true, Ordering::Relaxed);
                        Some(token)
                    }
                    Acquired::Replay(stored) => return Ok(Record::Replayed(stored)),
                    Acquired::FingerprintConflict => return Ok(Record::FingerprintConflict),
                    Acquired::InProgress { retry_after_secs } => return Ok(Record::InProgress { retry_after_secs }),
                }
            }
        };
        let ctx = Ctx { principal, policy: &self.policy, now: self.clock.now() };
        let attempt = run_checked(conn, &ctx, command).await;
        let settled = settle(op, attempt);
        let (Some(token), Some((scope, _))) = (token, guard) else {
            let (answer, response) = settled?;
            return Ok(Record::Ran { answer, response });
        };
        match settled {
            Ok((answer, response)) => {
                let stored = finalize(conn, scope, token, &response, self.clock.now()).await?;
                if !stored {
                    tracing::warn!(operation = scope.operation, "claim was taken over; this result is not stored");
                }
                Ok(Record::Ran { answer, response })
            }
            Err(err) => {
                // Nothing was stored: let a retry run at once.
                let _ = release(conn, scope, token).await;
                Err(err)
            }
        }
    }

    fn count(&self, op: &Operation, outcome: &str, reason: &str) {
        self.metrics.commands.with_label_values(&[op.name, outcome, reason]).inc();
        if let Some(counter) = op.counter {
            let result = match outcome {
                "done" => Some(("created", reason)),
                "refused" => Some(("rejected", reason)),
                _ => None,
            };
            if let Some((result, reason)) = result {
                self.metrics.result_counter(counter).with_label_values(&[result, reason]).inc();
            }
        }
    }

    /// What the idempotency record decided (`yeyak_idempotency_outcomes_total`).
    fn count_record<T>(&self, record: &Record<T>, took_over: bool) {
        let label = match record {
            Record::Ran { .. } if took_over => "takeover",
            Record::Ran { .. } => "new",
            Record::Replayed(_) => "replay",
            Record::FingerprintConflict => "conflict",
            Record::InProgress { .. } => "in_progress",
        };
        self.metrics.idempotency.with_label_values(&[label]).inc();
    }
}

/// The command's work, after the check every delegate's command gets: the
/// delegation is held to the commit (SPEC §25).
async fn run_checked<C: Command>(conn: &mut Conn, ctx: &Ctx<'_>, command: &C) -> Result<C::Output, CommandError> {
    super::behalf::ensure_acting(conn, ctx.principal).await?;
    command.run(conn, ctx).await
}

/// The value or the refusal of a finished attempt, and its stored form.
/// Refusals judged by a constraint are stored like any other; a database
/// failure or invalid input goes up (nothing is stored).
fn settle<T: serde::Serialize>(
    op: &Operation,
    attempt: Result<T, CommandError>,
) -> Result<(Result<T, ApiError>, StoredResponse), CommandError> {
    let refused = match attempt {
        Ok(value) => {
            let response = StoredResponse::json(op.status, &value);
            return Ok((Ok(value), response));
        }
        Err(CommandError::Reject(err)) => err,
        Err(CommandError::Db(DbError::RoomTimeTaken)) => ApiError::room_time_taken(),
        Err(CommandError::Db(DbError::RoomBufferTaken)) => ApiError::room_buffer_taken(),
        Err(CommandError::Db(DbError::DeskAlreadyBooked)) => DbError::DeskAlreadyBooked.into(),
        Err(CommandError::Db(DbError::AlreadyWaiting)) => ApiError::already_waiting(None),
        Err(other) => return Err(other),
    };
    let response = StoredResponse::from_error(&refused);
    Ok((Err(refused), response))
}

/// A stored answer read back: the value, or the refusal it was.
fn decode<T: DeserializeOwned>(stored: &StoredResponse) -> Result<T, ApiError> {
    if (200..300).contains(&stored.status) {
        serde_json::from_str(&stored.body).map_err(|e| {
            tracing::error!(error = %e, "a stored answer no longer reads as its type");
            ApiError::internal()
        })
    } else {
        Err(ApiError::from_stored_body(&stored.body))
    }
}

fn in_progress() -> ApiError {
    ApiError::new(ErrorCode::CommandInProgress, "the same command is in progress; retry later")
}

fn forbidden(op: &Operation, principal: &Principal) -> ApiError {
    let allowed: Vec<&str> = op.allowed.roles().into_iter().map(Role::as_str).collect();
    ApiError::new(ErrorCode::Forbidden, format!("{} may not run {}", principal.role().as_str(), op.name))
        .with_details(serde_json::json!({ "operation": op.name, "allowed": allowed }))
}

/// An error code as its metric label (`ROOM_TIME_TAKEN`).
fn code_label(code: ErrorCode) -> String {
    serde_json::to_value(code).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}
