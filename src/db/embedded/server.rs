//! The cluster's server processes: `initdb` on first use, `pg_ctl` to
//! start, wait for and stop it, as the `postgres` user when yeyak runs as
//! root.

use super::{EmbeddedCluster, EmbeddedError, SOCKET_PORT};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

impl EmbeddedCluster {
    /// `initdb` on first use; the settings file on every start.
    pub(super) fn prepare_directory(&self) -> Result<(), EmbeddedError> {
        let fail = |cause: String| EmbeddedError::DataDir { dir: self.data_dir.display().to_string(), cause };
        let fresh = !self.data_dir.join("PG_VERSION").is_file();
        if fresh {
            let occupied = std::fs::read_dir(&self.data_dir).map(|mut d| d.next().is_some()).unwrap_or(false);
            if occupied {
                return Err(fail("is not empty and holds no PostgreSQL cluster; empty it or choose another".into()));
            }
            std::fs::create_dir_all(&self.data_dir).map_err(|e| fail(e.to_string()))?;
            self.hand_to_postgres(&self.data_dir)?;
            let dir = self.data_dir.display().to_string();
            self.run(
                "initdb",
                "create its cluster",
                &["-D", &dir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C"],
            )?;
            let conf = self.data_dir.join("postgresql.conf");
            let mut text = std::fs::read_to_string(&conf).map_err(|e| fail(e.to_string()))?;
            text.push_str(
                "\n# yeyak: socket-only settings, rewritten on every start\ninclude_if_exists = 'yeyak.conf'\n",
            );
            std::fs::write(&conf, text).map_err(|e| fail(e.to_string()))?;
            tracing::info!(data_dir = %dir, "embedded PostgreSQL cluster created");
        } else {
            let version = std::fs::read_to_string(self.data_dir.join("PG_VERSION")).unwrap_or_default();
            if version.trim() != self.binaries.major.to_string() {
                return Err(fail(format!(
                    "holds a PostgreSQL {} cluster but the binaries in {} are version {}; upgrade it with pg_upgrade or install that version",
                    version.trim(),
                    self.binaries.dir.display(),
                    self.binaries.major
                )));
            }
        }
        // Written on every start, so a moved directory keeps working.
        let settings = format!(
            "listen_addresses = ''\nunix_socket_directories = '{}'\nport = {SOCKET_PORT}\nunix_socket_permissions = 0700\n",
            self.data_dir.display().to_string().replace('\'', "''")
        );
        let path = self.data_dir.join("yeyak.conf");
        std::fs::write(&path, settings).map_err(|e| fail(e.to_string()))?;
        self.hand_to_postgres(&path)
    }

    /// Starts the server; a stale `postmaster.pid` is PostgreSQL's to judge
    /// (it replaces one whose process is gone). Backends of a killed
    /// postmaster may hold its shared memory for a moment, hence the retries.
    pub(super) fn start_server(&self) -> Result<(), EmbeddedError> {
        let log = self.data_dir.join("server.log").display().to_string();
        let mut last = None;
        for attempt in 0..5 {
            if attempt > 0 {
                std::thread::sleep(Duration::from_secs(1));
            }
            match self.pg_ctl("start", &["start", "-w", "-t", "60", "-s", "-l", &log]) {
                Ok(_) => {
                    tracing::info!(data_dir = %self.data_dir.display(), "embedded PostgreSQL started");
                    return Ok(());
                }
                Err(e) => last = Some(e),
            }
            if self.is_running() {
                return Ok(());
            }
        }
        let tail = std::fs::read_to_string(&log)
            .map(|t| t.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join(" | "))
            .unwrap_or_default();
        Err(match last {
            Some(EmbeddedError::Command { dir, action, cause }) => {
                EmbeddedError::Command { dir, action, cause: format!("{cause} (server.log: {tail})") }
            }
            Some(other) => other,
            None => unreachable!("at least one attempt"),
        })
    }

    /// A guest waits for the owner to bring the server up.
    pub(super) fn wait_until_running(&self) -> Result<(), EmbeddedError> {
        for _ in 0..600 {
            if self.is_running() && self.data_dir.join(format!(".s.PGSQL.{SOCKET_PORT}")).exists() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(EmbeddedError::Command {
            dir: self.data_dir.display().to_string(),
            action: "come up under the yeyak process that owns it",
            cause: "not running after 60 s".into(),
        })
    }

    /// `pg_ctl status`: 0 when a postmaster of this directory is alive.
    pub(super) fn is_running(&self) -> bool {
        self.pg_ctl("report its status", &["status"]).is_ok()
    }

    pub(super) fn pg_ctl(&self, action: &'static str, args: &[&str]) -> Result<Output, EmbeddedError> {
        let dir = self.data_dir.display().to_string();
        let mut all = vec!["-D", dir.as_str()];
        all.extend_from_slice(args);
        self.run("pg_ctl", action, &all)
    }

    /// Runs one of the server's programs, as `postgres` when we are root.
    pub(super) fn run(&self, program: &str, action: &'static str, args: &[&str]) -> Result<Output, EmbeddedError> {
        let binary = self.binaries.dir.join(program);
        let mut command = if self.run_as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&binary);
            c
        } else {
            Command::new(&binary)
        };
        // The caller's directory may be closed to the postgres user.
        command.args(args).current_dir("/").env("LC_ALL", "C");
        let fail = |cause: String| EmbeddedError::Command { dir: self.data_dir.display().to_string(), action, cause };
        let output = command.output().map_err(|e| fail(format!("{}: {e}", binary.display())))?;
        if output.status.success() {
            Ok(output)
        } else {
            let text =
                format!("{}{}", String::from_utf8_lossy(&output.stderr), String::from_utf8_lossy(&output.stdout));
            Err(fail(format!("{program} exited with {}: {}", output.status, text.trim())))
        }
    }

    /// As root: gives `path` to the postgres user, and checks that it can
    /// reach it (a parent such as /root may be closed to other users).
    pub(super) fn hand_to_postgres(&self, path: &Path) -> Result<(), EmbeddedError> {
        if !self.run_as_postgres {
            return Ok(());
        }
        let fail = |cause: String| EmbeddedError::DataDir { dir: self.data_dir.display().to_string(), cause };
        let (uid, gid) = postgres_ids().ok_or_else(|| fail("running as root, but there is no postgres user to run PostgreSQL as; create one (useradd --system postgres)".into()))?;
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(|e| fail(e.to_string()))?;
        let reachable = Command::new("runuser")
            .args(["-u", "postgres", "--", "test", "-r"])
            .arg(path)
            .current_dir("/")
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !reachable {
            return Err(fail(format!(
                "the postgres user (which runs the cluster when yeyak runs as root) cannot reach {}: a directory above it is closed to other users. Set YEYAK_DATA_DIR to a directory it can reach, e.g. /var/lib/yeyak/pg",
                path.display()
            )));
        }
        Ok(())
    }
}

/// Whether this process runs as root (`/proc/self` belongs to the effective user).
pub(super) fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

pub(super) fn postgres_ids() -> Option<(u32, u32)> {
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id").args([flag, "postgres"]).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().parse().ok())?
    };
    Some((id("-u")?, id("-g")?))
}
