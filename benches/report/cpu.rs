//! CPU time by program, from `/proc/<pid>/stat` (user + system), so that a
//! scenario can say where the two cores went: PostgreSQL, yeyak, or the load
//! generator itself.

use std::time::Instant;

/// CPU seconds used so far by every live process named `comm`.
fn seconds_of(comm: &str) -> f64 {
    let ticks = clock_ticks();
    let mut total = 0u64;
    let Ok(dir) = std::fs::read_dir("/proc") else { return 0.0 };
    for entry in dir.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Some((c, t)) = read_stat(&entry.path().join("stat")) {
            if c == comm {
                total += t;
            }
        }
    }
    total as f64 / ticks
}

/// (comm, utime + stime) of one `/proc/<pid>/stat`.
fn read_stat(path: &std::path::Path) -> Option<(String, u64)> {
    let text = std::fs::read_to_string(path).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text[open + 1..close].to_string();
    let fields: Vec<&str> = text[close + 2..].split_whitespace().collect();
    // Fields after the name start at 3 (state); utime and stime are 14 and 15.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((comm, utime + stime))
}

fn clock_ticks() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .unwrap_or(100.0)
    })
}

fn own_seconds() -> f64 {
    read_stat(std::path::Path::new("/proc/self/stat")).map(|(_, t)| t as f64 / clock_ticks()).unwrap_or(0.0)
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Share {
    pub postgres: f64,
    pub yeyak: f64,
    pub client: f64,
    pub wall: f64,
}

impl Share {
    /// Cores each kept busy on average: (PostgreSQL, yeyak, load client).
    pub fn cores(&self) -> (f64, f64, f64) {
        (self.postgres / self.wall, self.yeyak / self.wall, self.client / self.wall)
    }
}

pub struct Meter {
    start: Share,
    at: Instant,
}

impl Meter {
    pub fn start() -> Meter {
        Meter {
            start: Share {
                postgres: seconds_of("postgres"),
                yeyak: seconds_of("yeyak"),
                client: own_seconds(),
                wall: 0.0,
            },
            at: Instant::now(),
        }
    }

    pub fn stop(&self) -> Share {
        Share {
            postgres: seconds_of("postgres") - self.start.postgres,
            yeyak: seconds_of("yeyak") - self.start.yeyak,
            client: own_seconds() - self.start.client,
            wall: self.at.elapsed().as_secs_f64(),
        }
    }
}

/// CPU ticks of every live process named `comm`, by pid.
fn ticks_by_pid(comm: &str) -> std::collections::HashMap<u32, u64> {
    let mut out = std::collections::HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return out };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        if let Some((c, t)) = read_stat(&entry.path().join("stat")) {
            if c == comm {
                out.insert(pid, t);
            }
        }
    }
    out
}

/// CPU time of `postgres` processes while a child process runs, counting
/// backends that start and exit meanwhile (pgbench's own connections):
/// sampled every 100 ms, so a backend's last 100 ms before it exits may be
/// missed. Returns (PostgreSQL CPU seconds, wall seconds).
pub fn postgres_while(child: &mut std::process::Child) -> (f64, f64) {
    let at = Instant::now();
    let base = ticks_by_pid("postgres");
    let mut last = base.clone();
    loop {
        for (pid, t) in ticks_by_pid("postgres") {
            last.insert(pid, t);
        }
        if child.try_wait().ok().flatten().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let used: u64 = last.iter().map(|(pid, t)| t.saturating_sub(base.get(pid).copied().unwrap_or(0))).sum();
    (used as f64 / clock_ticks(), at.elapsed().as_secs_f64())
}
