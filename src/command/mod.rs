//! One pipeline, many doors (SPEC Part III). Every change of state is a
//! [`Command`]: it names its [`Operation`] (the idempotency scope's name,
//! who may run it, the status of a success), says what makes two requests
//! the same (its fingerprint), and does its work inside the transaction the
//! pipeline opens. A door — a JSON route, a browser form, the door display,
//! CalDAV, the sweeper — builds a [`Principal`] and a command and calls
//! [`Pipeline::execute`]; it never opens an idempotency record, checks a role
//! or counts a metric itself, so a new door cannot forget any of them.

pub mod behalf;
pub mod execute;
pub mod principal;

use std::future::Future;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::db::{Conn, DbError, TxError};
use crate::error::ApiError;
pub use crate::metrics::ResultCounter;
use crate::policy::Policy;

pub use execute::{Executed, Pipeline};
pub use principal::{Allowed, Behalf, Kind, Principal, Role};

/// How a command's work meets its transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Claim, work and stored answer commit together (almost every command).
    OneTransaction,
    /// Work that commits several transactions of its own (an admin's sweep):
    /// the claim is committed first with a lease, the work runs, the answer
    /// is stored by a compare-and-set on the claim.
    SpansTransactions,
}

/// The declaration of an operation.
#[derive(Debug, Clone, Copy)]
pub struct Operation {
    /// The idempotency scope's operation (`booking.create`) and the metric label.
    pub name: &'static str,
    /// Who may run it; the pipeline refuses everyone else before any work.
    pub allowed: Allowed,
    /// The HTTP status of a success (201 for what creates).
    pub status: u16,
    pub shape: Shape,
    /// Changes the room catalogue: processes redraw their snapshot at once.
    pub changes_catalogue: bool,
    pub counter: Option<ResultCounter>,
}

impl Operation {
    pub const fn new(name: &'static str, allowed: &[Role]) -> Operation {
        Operation {
            name,
            allowed: Allowed::of(allowed),
            status: 200,
            shape: Shape::OneTransaction,
            changes_catalogue: false,
            counter: None,
        }
    }

    /// A success answers 201 Created.
    pub const fn creates(mut self) -> Operation {
        self.status = 201;
        self
    }

    pub const fn spans_transactions(mut self) -> Operation {
        self.shape = Shape::SpansTransactions;
        self
    }

    pub const fn changes_catalogue(mut self) -> Operation {
        self.changes_catalogue = true;
        self
    }

    pub const fn counted_in(mut self, counter: ResultCounter) -> Operation {
        self.counter = Some(counter);
        self
    }
}

/// Who asks, under which rules, at which instant: what a command's work reads.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    pub principal: &'a Principal,
    pub policy: &'a Policy,
    pub now: DateTime<Utc>,
}

/// A change of state, as every door runs it.
pub trait Command: Sync {
    /// The answer of a success; stored as JSON and read back on a replay.
    type Output: Serialize + DeserializeOwned + Send;

    fn operation(&self) -> &'static Operation;

    /// What makes two requests the same request (with the operation and
    /// the principal's digest): the parsed command, never the raw body.
    fn fingerprint(&self) -> serde_json::Value;

    /// The work, inside the transaction (or, for [`Shape::SpansTransactions`],
    /// on a connection outside one). May be run again after a deadlock.
    fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> impl Future<Output = Result<Self::Output, CommandError>> + Send;
}

/// What makes a command's fingerprint when it acts on one existing thing.
#[derive(Serialize)]
pub struct On<'a, I: Serialize, T: Serialize + ?Sized> {
    pub id: I,
    pub change: &'a T,
}

/// How a command ends inside its transaction.
#[derive(Debug)]
pub enum CommandError {
    /// A business refusal (room taken, stale version, …): its savepoint is
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
