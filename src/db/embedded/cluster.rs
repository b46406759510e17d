//! The cluster's life: started or joined, owned through the lock file, and
//! stopped by its owner only (see the module above).

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use super::server::running_as_root;
use super::{Binaries, EmbeddedError, MAX_SOCKET_PATH, SOCKET_PORT};

/// A running private cluster; stopped on `stop` or drop when this process owns it.
#[derive(Debug)]
pub struct EmbeddedCluster {
    pub(super) data_dir: PathBuf,
    pub(super) binaries: Binaries,
    /// `Some` while this process owns the cluster (holds the lock file).
    pub(super) owner_lock: Option<File>,
    pub(super) run_as_postgres: bool,
}

impl EmbeddedCluster {
    /// Creates the cluster on first use and starts it, or joins the one running
    /// in `data_dir`. Blocking: call from a blocking thread.
    pub fn start(data_dir: &Path, binaries: Binaries) -> Result<EmbeddedCluster, EmbeddedError> {
        let data_dir = absolute(data_dir)?;
        let fail = |cause: String| EmbeddedError::DataDir { dir: data_dir.display().to_string(), cause };
        let socket = data_dir.join(format!(".s.PGSQL.{SOCKET_PORT}"));
        if socket.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(fail(format!(
                "its socket path would be {} bytes long, more than the {MAX_SOCKET_PATH} a Unix socket allows; choose a shorter path",
                socket.as_os_str().len()
            )));
        }
        let parent = data_dir.parent().ok_or_else(|| fail("has no parent directory".into()))?;
        std::fs::create_dir_all(parent).map_err(|e| fail(e.to_string()))?;
        let lock_path = PathBuf::from(format!("{}.lock", data_dir.display()));
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| fail(format!("cannot open {}: {e}", lock_path.display())))?;
        let owner_lock = match lock.try_lock() {
            Ok(()) => Some(lock),
            Err(std::fs::TryLockError::WouldBlock) => None,
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(fail(format!("cannot lock {}: {e}", lock_path.display())))
            }
        };
        let cluster = EmbeddedCluster { data_dir, binaries, owner_lock, run_as_postgres: running_as_root() };
        if cluster.owner_lock.is_none() {
            tracing::info!(data_dir = %cluster.data_dir.display(), "embedded PostgreSQL is run by another yeyak process; using it");
            cluster.wait_until_running()?;
            return Ok(cluster);
        }
        cluster.prepare_directory()?;
        if cluster.is_running() {
            tracing::info!(data_dir = %cluster.data_dir.display(), "embedded PostgreSQL left running by a previous yeyak; adopting it");
        } else {
            cluster.start_server()?;
        }
        Ok(cluster)
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Whether this process stops the cluster when it stops.
    pub fn is_owner(&self) -> bool {
        self.owner_lock.is_some()
    }

    /// URL of `database` on this cluster, over its socket.
    pub fn database_url(&self, database: &str) -> String {
        format!(
            "postgres:///{database}?host={}&port={SOCKET_PORT}&user=postgres",
            crate::db::conninfo::percent_encode(&self.data_dir.display().to_string())
        )
    }

    /// Stops the cluster if this process owns it (fast shutdown: open sessions
    /// are ended, committed work is on disk). Blocking.
    pub fn stop(mut self) -> Result<(), EmbeddedError> {
        self.stop_owned()
    }

    fn stop_owned(&mut self) -> Result<(), EmbeddedError> {
        if self.owner_lock.is_none() {
            return Ok(());
        }
        let result = if self.is_running() {
            self.pg_ctl("stop", &["stop", "-m", "fast", "-w", "-t", "60"]).map(|_| ())
        } else {
            Ok(())
        };
        // Release ownership only once the server is down.
        self.owner_lock = None;
        if result.is_ok() {
            tracing::info!(data_dir = %self.data_dir.display(), "embedded PostgreSQL stopped");
        }
        result
    }
}

impl Drop for EmbeddedCluster {
    fn drop(&mut self) {
        if let Err(e) = self.stop_owned() {
            tracing::warn!(error = %e, "embedded PostgreSQL did not stop");
        }
    }
}

fn absolute(dir: &Path) -> Result<PathBuf, EmbeddedError> {
    std::path::absolute(dir)
        .map(|p| p.components().collect())
        .map_err(|e| EmbeddedError::DataDir { dir: dir.display().to_string(), cause: e.to_string() })
}
