//! Persistence edge: the connection pool, one classification of database
//! errors, and the bounded retry of deadlocks and serialization failures.

pub mod bootstrap;
pub mod cached;
pub mod conninfo;
pub mod embedded;
pub mod schema;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::QueryResult;
use diesel_async::pooled_connection::bb8::{Pool as Bb8Pool, RunError};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, PoolableConnection, RecyclingMethod,
};
use diesel_async::RunQueryDsl;
use diesel_async::{AnsiTransactionManager, AsyncConnection, AsyncPgConnection, TransactionManager};
use futures_util::FutureExt;
use rand::Rng;
use scoped_futures::ScopedBoxFuture;

pub type Conn = AsyncPgConnection;
pub type Pool = Bb8Pool<AsyncPgConnection>;

/// Name of the EXCLUDE constraint on `reservation_room` (migrations/…_rooms).
pub const ROOM_OVERLAP_CONSTRAINT: &str = "reservation_room_no_overlap";
/// The meetings themselves overlap; checked before [`ROOM_OVERLAP_CONSTRAINT`]
/// (made first), so this one names the conflict whenever it applies.
pub const ROOM_MEETINGS_CONSTRAINT: &str = "reservation_room_meetings_apart";

/// One desk per person per half day (SPEC §28, migrations/…_desks): a
/// 23P01 on it is `DESK_ALREADY_BOOKED`, told apart from a taken room by
/// this name.
pub const DESK_PER_PERSON_CONSTRAINT: &str = "reservation_room_one_desk_per_person";

/// Partial unique index of one live waitlist entry per owner and resource
/// (migrations/…_abuse_limits).
pub const ONE_LIVE_ENTRY_INDEX: &str = "waitlist_entry_one_live_per_owner";

/// How many times one command's transaction runs before giving up on
/// deadlocks/serialization failures (seed 002 §교착: retry from the start).
pub const MAX_TX_ATTEMPTS: u32 = 5;

/// A database failure after classification.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// No connection could be had or it broke: 503, the request may be retried.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// 23P01 on the room EXCLUDE constraint.
    #[error("room time taken")]
    RoomTimeTaken,
    /// Only buffers overlap (`reservation_room_no_overlap`, SPEC §24).
    #[error("room buffer taken")]
    RoomBufferTaken,
    /// 23P01 on [`DESK_PER_PERSON_CONSTRAINT`].
    #[error("desk already booked")]
    DeskAlreadyBooked,
    /// 23505 on the one-live-entry index: the owner already waits.
    #[error("already waiting")]
    AlreadyWaiting,
    /// 22021: a text the client sent holds a NUL byte, which PostgreSQL
    /// cannot store — the client's malformed input (400), from any door.
    #[error("text with a NUL byte")]
    NulInText,
    /// 40P01 or 40001: the transaction is retried from its start.
    #[error("retryable transaction failure: {0}")]
    Retryable(DieselError),
    #[error("database error: {0}")]
    Other(DieselError),
}

impl DbError {
    pub fn is_retryable(&self) -> bool {
        matches!(self, DbError::Retryable(_))
    }
}

/// 40P01 reaches diesel-async 0.9 as `DatabaseErrorKind::Unknown` (its
/// error_helper maps only 23505/23503/23P01/40001/…); the SQLSTATE itself is
/// not exposed, so the server's message text decides. The server runs with
/// `lc_messages = 'C'` for our connections (see `bootstrap`), and
/// `tests/api/rooms_concurrency.rs` (`a_real_deadlock_is_retried_…`) provokes a
/// real deadlock to prove the match.
fn is_deadlock(kind: &DatabaseErrorKind, message: &str) -> bool {
    matches!(kind, DatabaseErrorKind::Unknown) && message.starts_with("deadlock detected")
}

/// Connection loss and server shutdown (SQLSTATE classes 08 and 57P: a
/// primary killed or demoted in a failover, `pg_terminate_backend`, a restart)
/// also reach diesel-async 0.9 as `Unknown` without their code (class 08 is
/// raised by the client when the socket dies and arrives as
/// `UnableToSendCommand`, matched below). The session
/// ends with them, so a retry on another connection is the answer: 503. The
/// texts are PostgreSQL's with `lc_messages = 'C'`; `tests/embedded.rs`
/// provokes the postmaster-death and administrator-command cases and proves
/// the match on what the server sent.
fn is_session_ended(kind: &DatabaseErrorKind, message: &str) -> bool {
    const SESSION_ENDED: [&str; 2] = [
        // 57P01 (admin shutdown, postmaster exit), 57P02 (crash of another
        // backend), 57P05 (idle-session timeout), 25P03, recovery conflicts.
        "terminating connection ",
        // 57P03: starting up, shutting down, in recovery, not accepting connections.
        "the database system is ",
    ];
    matches!(kind, DatabaseErrorKind::Unknown) && SESSION_ENDED.iter().any(|prefix| message.starts_with(prefix))
}

/// 22021 (`character_not_in_repertoire`) also reaches diesel-async 0.9 as
/// `Unknown`: the text is PostgreSQL's with `lc_messages = 'C'`. Its one
/// cause from yeyak's statements is a NUL byte in a text parameter (Rust
/// strings are UTF-8 otherwise); `tests/api/hostile_sweep.rs` and
/// `tests/api/hostile_input.rs` send one through a path, a query, a form
/// and a JSON body and prove the match.
fn is_nul_in_text(kind: &DatabaseErrorKind, message: &str) -> bool {
    matches!(kind, DatabaseErrorKind::Unknown) && message.starts_with("invalid byte sequence for encoding")
}

impl From<DieselError> for DbError {
    fn from(err: DieselError) -> Self {
        match &err {
            DieselError::DatabaseError(DatabaseErrorKind::ExclusionViolation, info)
                if info.constraint_name() == Some(ROOM_MEETINGS_CONSTRAINT) =>
            {
                DbError::RoomTimeTaken
            }
            DieselError::DatabaseError(DatabaseErrorKind::ExclusionViolation, info)
                if info.constraint_name() == Some(ROOM_OVERLAP_CONSTRAINT) =>
            {
                DbError::RoomBufferTaken
            }
            DieselError::DatabaseError(DatabaseErrorKind::ExclusionViolation, info)
                if info.constraint_name() == Some(DESK_PER_PERSON_CONSTRAINT) =>
            {
                DbError::DeskAlreadyBooked
            }
            DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info)
                if info.constraint_name() == Some(ONE_LIVE_ENTRY_INDEX) =>
            {
                DbError::AlreadyWaiting
            }
            DieselError::DatabaseError(kind, info) if is_nul_in_text(kind, info.message()) => DbError::NulInText,
            DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => DbError::Retryable(err),
            DieselError::DatabaseError(kind, info) if is_deadlock(kind, info.message()) => DbError::Retryable(err),
            DieselError::DatabaseError(
                DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
                info,
            ) => DbError::Unavailable(info.message().to_owned()),
            DieselError::DatabaseError(kind, info) if is_session_ended(kind, info.message()) => {
                DbError::Unavailable(info.message().to_owned())
            }
            // 25006: this connection reached a standby (a demoted primary, or a
            // URL without `target_session_attrs=read-write`); yeyak opens no
            // read-only transaction for a write, so the primary is elsewhere.
            DieselError::DatabaseError(DatabaseErrorKind::ReadOnlyTransaction, info) => {
                DbError::Unavailable(info.message().to_owned())
            }
            DieselError::BrokenTransactionManager => DbError::Unavailable(err.to_string()),
            _ => DbError::Other(err),
        }
    }
}

impl From<RunError> for DbError {
    fn from(err: RunError) -> Self {
        DbError::Unavailable(err.to_string())
    }
}

/// Counters the operations issue exposes as metrics.
#[derive(Debug, Default)]
pub struct DbStats {
    pub tx_retries: AtomicU64,
    /// Statements sent on pooled connections (to prove queries per request).
    pub queries: AtomicU64,
}

/// Counts every statement a connection starts.
struct QueryCounter(Arc<DbStats>);

impl diesel::connection::Instrumentation for QueryCounter {
    fn on_connection_event(&mut self, event: diesel::connection::InstrumentationEvent<'_>) {
        if let diesel::connection::InstrumentationEvent::StartQuery { .. } = event {
            self.0.queries.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl DbStats {
    /// Statements sent so far.
    pub fn statements(&self) -> u64 {
        AtomicU64::load(&self.queries, Ordering::Relaxed)
    }

    pub fn retries(&self) -> u64 {
        AtomicU64::load(&self.tx_retries, Ordering::Relaxed)
    }
}

/// An error a transactional command can end with: it must say whether the
/// whole transaction should run again.
pub trait TxError: From<DieselError> + From<DbError> + Send {
    fn is_retryable(&self) -> bool;
}

impl TxError for DbError {
    fn is_retryable(&self) -> bool {
        DbError::is_retryable(self)
    }
}

/// Opens a transaction, or a savepoint when one is already open.
pub async fn begin(conn: &mut Conn) -> QueryResult<()> {
    AnsiTransactionManager::begin_transaction(conn).await
}

/// Opens a read-only snapshot for reports that read several tables.
pub async fn begin_snapshot(conn: &mut Conn) -> QueryResult<()> {
    AnsiTransactionManager::begin_transaction_sql(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").await
}

/// Commits (or releases the savepoint) on `Ok`, rolls back on `Err`.
pub async fn finish<T, E: From<DieselError>>(conn: &mut Conn, result: Result<T, E>) -> Result<T, E> {
    match result {
        Ok(value) => {
            AnsiTransactionManager::commit_transaction(conn).await?;
            Ok(value)
        }
        Err(err) => {
            if let Err(rollback) = AnsiTransactionManager::rollback_transaction(conn).await {
                // The connection is then marked broken and the pool drops it.
                tracing::warn!(error = %rollback, "rollback failed");
            }
            Err(err)
        }
    }
}

/// Runs `work` in one transaction on one pooled connection, re-running it from
/// the start on deadlock or serialization failure, at most `MAX_TX_ATTEMPTS` times.
pub async fn transaction<'a, T, E, F>(pool: &Pool, stats: &DbStats, work: F) -> Result<T, E>
where
    F: for<'r> Fn(&'r mut Conn) -> ScopedBoxFuture<'a, 'r, Result<T, E>> + Send + Sync + 'a,
    E: TxError + 'a,
    T: Send + 'a,
{
    let mut pooled = pool.get().await.map_err(|e| E::from(DbError::from(e)))?;
    let conn: &mut Conn = &mut pooled;
    let mut attempt = 1;
    loop {
        begin(conn).await?;
        let result = work(conn).await;
        match finish(conn, result).await {
            Err(e) if e.is_retryable() && attempt < MAX_TX_ATTEMPTS => {
                stats.tx_retries.fetch_add(1, Ordering::Relaxed);
                tracing::info!(attempt, "transaction retried after deadlock/serialization failure");
                let jitter = rand::thread_rng().gen_range(1..=10u64) * u64::from(attempt);
                tokio::time::sleep(Duration::from_millis(jitter)).await;
                attempt += 1;
            }
            // A connection that died under us (backend terminated, server
            // restarting) is an outage, whatever the server said last: 503.
            Err(e) if !e.is_retryable() && PoolableConnection::is_broken(conn) => {
                drop(e);
                return Err(E::from(DbError::Unavailable("the database connection was lost".into())));
            }
            other => return other,
        }
    }
}

/// Builds the pool without connecting yet; start-up has already proven the
/// database reachable, and a later outage must not stop the process.
///
/// A checked-out connection is tested without a round trip by default: one
/// whose socket PostgreSQL closed (restart, `pg_terminate_backend`) is known
/// closed locally and replaced. `verify_checkout` adds diesel-async's
/// `SELECT 1` per checkout, which also catches a peer that vanished without
/// closing the socket, at one statement per request (see docs/PERFORMANCE.md).
pub fn build_pool(database_url: &str, max_size: u32, verify_checkout: bool, stats: Arc<DbStats>) -> Pool {
    let mut config = ManagerConfig::default();
    if !verify_checkout {
        config.recycling_method = RecyclingMethod::CustomFunction(Box::new(|conn| {
            let closed = PoolableConnection::is_broken(conn);
            async move {
                if closed {
                    Err(DieselError::BrokenTransactionManager)
                } else {
                    Ok(())
                }
            }
            .boxed()
        }));
    }
    config.custom_setup = Box::new(move |url| {
        let stats = stats.clone();
        async move {
            let mut conn = establish(url).await?;
            conn.set_instrumentation(QueryCounter(stats));
            Ok(conn)
        }
        .boxed()
    });
    let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(database_url, config);
    Bb8Pool::builder().max_size(max_size).connection_timeout(Duration::from_secs(5)).build_unchecked(manager)
}

/// Opens one connection with English server messages where the role may set
/// them (needed by `is_deadlock`); a role that may not keeps its own setting
/// and bootstrap warns about it once.
///
/// JIT compilation is off: PostgreSQL compiles a statement whose estimated
/// cost passes `jit_above_cost`, and at campus size (SPEC §27) one area's
/// year report spent 1.2 s compiling for 0.18 s of work. yeyak's reads are
/// indexed and short; the compile never pays for itself.
pub async fn establish(url: &str) -> diesel::ConnectionResult<Conn> {
    let mut conn = Conn::establish(url).await?;
    let _ = diesel::sql_query("SET lc_messages TO 'C'").execute(&mut conn).await;
    let _ = diesel::sql_query("SET jit TO off").execute(&mut conn).await;
    Ok(conn)
}

diesel::define_sql_function! {
    /// PostgreSQL's `lower`: usernames compare case-insensitively (SPEC
    /// §22, §25), served by the unique index on `lower(username)`.
    fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text;
}
