//! Which PostgreSQL server binaries the cluster is made from: on `PATH`, or
//! the newest supported major version under Debian's `/usr/lib/postgresql`.

use super::{EmbeddedError, DEBIAN_BIN_ROOT, MIN_MAJOR};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the server binaries are and who runs them.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub dir: PathBuf,
    pub major: u32,
}

impl Binaries {
    /// `initdb` and `pg_ctl` from the first directory on `PATH` that has both,
    /// else the newest `/usr/lib/postgresql/<major>/bin`.
    pub fn locate() -> Result<Binaries, EmbeddedError> {
        let mut candidates: Vec<PathBuf> =
            std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
        candidates.extend(debian_bin_dirs(Path::new(DEBIAN_BIN_ROOT)));
        Binaries::locate_in(&candidates)
    }

    /// The first of `dirs` with the server binaries.
    pub fn locate_in(dirs: &[PathBuf]) -> Result<Binaries, EmbeddedError> {
        let dir = dirs
            .iter()
            .find(|d| ["initdb", "pg_ctl", "postgres"].iter().all(|b| d.join(b).is_file()))
            .ok_or(EmbeddedError::MissingBinaries)?;
        // Symlinks such as /usr/local/bin/pg_ctl point into the real bin
        // directory, where the matching `postgres` lives.
        let dir = std::fs::canonicalize(dir.join("pg_ctl"))
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| dir.clone());
        let version =
            Command::new(dir.join("pg_ctl")).arg("--version").output().map_err(|e| EmbeddedError::Command {
                dir: dir.display().to_string(),
                action: "report its version",
                cause: e.to_string(),
            })?;
        let text = String::from_utf8_lossy(&version.stdout).trim().to_owned();
        let major = text
            .rsplit(' ')
            .next()
            .and_then(|v| v.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|m| m.parse::<u32>().ok())
            .unwrap_or(0);
        if major < MIN_MAJOR {
            return Err(EmbeddedError::TooOld { dir: dir.display().to_string(), found: text });
        }
        Ok(Binaries { dir, major })
    }
}

/// `/usr/lib/postgresql/*/bin`, newest major first.
fn debian_bin_dirs(root: &Path) -> Vec<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let major = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((major, e.path().join("bin")))
        })
        .collect();
    versions.sort_by_key(|v| std::cmp::Reverse(v.0));
    versions.into_iter().map(|(_, dir)| dir).collect()
}
