//! Start-up work on the database: create it if missing, install `btree_gist`,
//! run the embedded migrations under an advisory lock (so several processes
//! may start at once), and fail with one clear line when PostgreSQL is away.

use super::conninfo::ConnInfo;
use super::{establish, Conn};
use diesel::sql_types::{BigInt, Bool, Text};
use diesel::QueryableByName;
use diesel_async::{AsyncMigrationHarness, RunQueryDsl};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");

/// Session advisory lock key held while migrating ("yeyak-mg").
const MIGRATION_LOCK: i64 = 0x7965_7961_6b2d_6d67;

#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    #[error("cannot reach PostgreSQL at {url}: {cause}. Start PostgreSQL or set DATABASE_URL to a reachable server.")]
    Unreachable { url: String, cause: String },
    #[error("DATABASE_URL {url} is not a postgres:// URL naming a database: {cause}")]
    BadUrl { url: String, cause: String },
    #[error("database set-up failed on {url}: {cause}")]
    Setup { url: String, cause: String },
}

/// The URL with its password removed, for messages and logs.
pub fn redact(url: &str) -> String {
    super::conninfo::redact(url)
}

#[derive(QueryableByName)]
struct Exists {
    #[diesel(sql_type = Bool)]
    exists: bool,
}

#[derive(QueryableByName)]
struct Setting {
    #[diesel(sql_type = Text)]
    setting: String,
}

/// Creates the database if missing, then migrates it. `database_url` may
/// list several hosts; tokio-postgres picks the one that qualifies
/// (`target_session_attrs=read-write`: the primary).
pub async fn prepare(database_url: &str) -> Result<(), BootstrapError> {
    let shown = redact(database_url);
    let info = ConnInfo::parse(database_url).map_err(|cause| BootstrapError::BadUrl { url: shown.clone(), cause })?;
    create_database_if_missing(&info, &shown).await?;
    migrate(database_url, &shown).await
}

async fn create_database_if_missing(info: &ConnInfo, shown: &str) -> Result<(), BootstrapError> {
    let name = info.database();
    let mut conn = establish(&info.with_database("postgres"))
        .await
        .map_err(|e| BootstrapError::Unreachable { url: shown.to_owned(), cause: e.to_string() })?;
    let setup = |e: diesel::result::Error| BootstrapError::Setup { url: shown.to_owned(), cause: e.to_string() };
    if database_exists(&mut conn, name).await.map_err(setup)? {
        return Ok(());
    }
    let create = format!("CREATE DATABASE \"{}\"", name.replace('"', "\"\""));
    if let Err(e) = diesel::sql_query(create).execute(&mut conn).await {
        // Another process may have created it in the meantime.
        if !database_exists(&mut conn, name).await.map_err(setup)? {
            return Err(setup(e));
        }
    }
    tracing::info!(database = name, "created database");
    Ok(())
}

async fn database_exists(conn: &mut Conn, name: &str) -> diesel::QueryResult<bool> {
    diesel::sql_query("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1) AS exists")
        .bind::<Text, _>(name)
        .get_result::<Exists>(conn)
        .await
        .map(|row| row.exists)
}

async fn migrate(database_url: &str, shown: &str) -> Result<(), BootstrapError> {
    let setup = |e: String| BootstrapError::Setup { url: shown.to_owned(), cause: e };
    let mut conn = establish(database_url)
        .await
        .map_err(|e| BootstrapError::Unreachable { url: shown.to_owned(), cause: e.to_string() })?;
    diesel::sql_query("SELECT pg_advisory_lock($1)")
        .bind::<BigInt, _>(MIGRATION_LOCK)
        .execute(&mut conn)
        .await
        .map_err(|e| setup(e.to_string()))?;
    diesel::sql_query("CREATE EXTENSION IF NOT EXISTS btree_gist")
        .execute(&mut conn)
        .await
        .map_err(|e| setup(format!("CREATE EXTENSION btree_gist: {e}")))?;
    let lc = diesel::sql_query("SELECT current_setting('lc_messages') AS setting")
        .get_result::<Setting>(&mut conn)
        .await
        .map_err(|e| setup(e.to_string()))?;
    if !matches!(lc.setting.as_str(), "C" | "POSIX" | "") && !lc.setting.starts_with("en") {
        tracing::warn!(lc_messages = %lc.setting, "PostgreSQL messages are localised and this role may not set lc_messages; deadlock retries need lc_messages = 'C' (ALTER ROLE … SET lc_messages = 'C')");
    }
    // The harness blocks (block_in_place); run it on a blocking thread so that
    // this works on any runtime flavour.
    let (result, mut conn) = tokio::task::spawn_blocking(move || {
        let mut harness = AsyncMigrationHarness::new(conn);
        let result = harness.run_pending_migrations(MIGRATIONS).map(|v| v.len()).map_err(|e| e.to_string());
        (result, harness.into_inner())
    })
    .await
    .map_err(|e| setup(format!("migration task failed: {e}")))?;
    let applied = result.map_err(setup)?;
    if applied > 0 {
        tracing::info!(applied, "migrations applied");
    }
    diesel::sql_query("SELECT pg_advisory_unlock($1)")
        .bind::<BigInt, _>(MIGRATION_LOCK)
        .execute(&mut conn)
        .await
        .map_err(|e| setup(e.to_string()))?;
    Ok(())
}
