//! The embedded default (SPEC §14): a private PostgreSQL cluster made from
//! the server binaries installed on the machine, with its data in
//! `YEYAK_DATA_DIR`, reachable only through a Unix socket in that directory.
//!
//! Life cycle, and who stops what:
//! * The process holding an exclusive lock on `<data dir>.lock` owns the
//!   cluster: it creates it (`initdb`) on first use, starts it, and stops it
//!   (`pg_ctl stop -m fast`) after the server and the background work have
//!   stopped. The lock dies with the process, so after a `SIGKILL` the next
//!   owner finds the orphaned cluster still running and adopts it, or finds a
//!   stale `postmaster.pid` (the cluster died too) and starts it again, which
//!   runs PostgreSQL's crash recovery.
//! * A second yeyak process on the same directory uses the running cluster as
//!   a guest and never stops it.
//! * As root the cluster runs as the `postgres` user (PostgreSQL refuses
//!   root), through `runuser`.

use std::path::Path;
use std::time::Duration;

mod binaries;
mod cluster;
mod server;

pub use binaries::Binaries;
pub use cluster::EmbeddedCluster;

/// Port number in the socket's file name (`.s.PGSQL.5432`); no TCP port is opened.
const SOCKET_PORT: u16 = 5432;
/// Longest Unix socket path Linux accepts (`sun_path` less its NUL).
const MAX_SOCKET_PATH: usize = 107;
/// Oldest PostgreSQL yeyak runs on (SPEC §1).
const MIN_MAJOR: u32 = 14;
/// Where Debian and Ubuntu install the server binaries.
pub const DEBIAN_BIN_ROOT: &str = "/usr/lib/postgresql";

#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    #[error(
        "DATABASE_URL=embedded needs the PostgreSQL server binaries (initdb, pg_ctl, postgres), found neither on PATH nor under {DEBIAN_BIN_ROOT}/*/bin. Install the PostgreSQL server {MIN_MAJOR} or newer with its contrib modules (Debian/Ubuntu: apt-get install postgresql; Fedora: dnf install postgresql-server postgresql-contrib; macOS: brew install postgresql), or set DATABASE_URL to a running server."
    )]
    MissingBinaries,
    #[error("the PostgreSQL binaries in {dir} are version {found}; yeyak needs {MIN_MAJOR} or newer. Install a newer server or set DATABASE_URL.")]
    TooOld { dir: String, found: String },
    #[error("YEYAK_DATA_DIR {dir}: {cause}")]
    DataDir { dir: String, cause: String },
    #[error("the embedded PostgreSQL in {dir} failed to {action}: {cause}")]
    Command { dir: String, action: &'static str, cause: String },
}

/// The value of `DATABASE_URL` that asks for the embedded cluster.
pub const EMBEDDED: &str = "embedded";
/// Database of the embedded cluster that yeyak uses.
const DATABASE: &str = "yeyak";

/// What `DATABASE_URL` names: `embedded`, or its default with nothing
/// answering at the default address, start (or join) the private cluster in
/// `data_dir`; anything else is used as it is.
pub async fn resolve(
    database_url: &str,
    defaulted: bool,
    data_dir: &Path,
) -> Result<(String, Option<EmbeddedCluster>), EmbeddedError> {
    resolve_with_default_at(database_url, defaulted, data_dir, DEFAULT_ADDRESS).await
}

/// Where the default `DATABASE_URL` points.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:5432";

/// `resolve`, probing `default_address` for a server (tests point it elsewhere).
pub async fn resolve_with_default_at(
    database_url: &str,
    defaulted: bool,
    data_dir: &Path,
    default_address: &str,
) -> Result<(String, Option<EmbeddedCluster>), EmbeddedError> {
    let wanted = database_url == EMBEDDED || (defaulted && !answers(default_address).await);
    if !wanted {
        return Ok((database_url.to_owned(), None));
    }
    if database_url != EMBEDDED {
        tracing::info!(data_dir = %data_dir.display(), "nothing answers at {default_address} and DATABASE_URL is unset: using the embedded PostgreSQL");
    }
    let data_dir = data_dir.to_owned();
    let cluster =
        tokio::task::spawn_blocking(move || EmbeddedCluster::start(&data_dir, Binaries::locate()?))
            .await
            .map_err(|e| EmbeddedError::Command { dir: String::new(), action: "start", cause: e.to_string() })??;
    Ok((cluster.database_url(DATABASE), Some(cluster)))
}

/// Whether anything accepts a TCP connection at `address`.
async fn answers(address: &str) -> bool {
    let connect = tokio::net::TcpStream::connect(address);
    matches!(tokio::time::timeout(Duration::from_secs(2), connect).await, Ok(Ok(_)))
}
