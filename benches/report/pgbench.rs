//! The SQL ceiling of a write scenario: pgbench running the statements that
//! one of our transactions sends, at the same concurrency, on the same
//! database. The scripts live in `benches/report/sql/` and were copied from
//! what PostgreSQL logged for one request of each kind (`log_statement=all`),
//! with the literal values turned into pgbench variables.

use std::path::PathBuf;
use std::process::Command;

pub struct Pgbench<'a> {
    pub db_url: &'a str,
    /// One script, or several that pgbench picks among at random.
    pub scripts: Vec<String>,
    pub clients: usize,
    pub seconds: u64,
    /// Transactions per client instead of a time budget.
    pub transactions: Option<usize>,
    pub vars: Vec<(&'static str, i64)>,
}

impl<'a> Pgbench<'a> {
    pub fn new(db_url: &'a str, script: impl Into<String>, clients: usize, seconds: u64) -> Self {
        let scripts = vec![script.into()];
        Pgbench { db_url, scripts, clients, seconds, transactions: None, vars: Vec::new() }
    }

    pub fn and_script(mut self, script: impl Into<String>) -> Self {
        self.scripts.push(script.into());
        self
    }

    pub fn transactions(mut self, per_client: usize) -> Self {
        self.transactions = Some(per_client);
        self
    }

    pub fn var(mut self, name: &'static str, value: i64) -> Self {
        self.vars.push((name, value));
        self
    }

    /// Runs pgbench and returns its transactions per second.
    pub fn tps(&self) -> f64 {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench");
        std::fs::create_dir_all(&dir).unwrap();
        let mut cmd = Command::new("pgbench");
        // Prepared, as diesel-async sends its statements.
        cmd.args(["-n", "-M", "prepared", "-j", "2", "-c", &self.clients.to_string()]);
        match self.transactions {
            Some(t) => cmd.args(["-t", &t.to_string()]),
            None => cmd.args(["-T", &self.seconds.to_string()]),
        };
        for (name, value) in &self.vars {
            cmd.arg("-D").arg(format!("{name}={value}"));
        }
        let mut files = Vec::new();
        for script in &self.scripts {
            let file = dir.join(format!("pgbench-{}.sql", uuid::Uuid::new_v4().simple()));
            std::fs::write(&file, script).unwrap();
            cmd.arg("-f").arg(&file);
            files.push(file);
        }
        let out = cmd.arg(self.db_url).output().expect("pgbench runs (postgresql-client)");
        for file in files {
            let _ = std::fs::remove_file(file);
        }
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "pgbench failed: {text}{}", String::from_utf8_lossy(&out.stderr));
        text.lines()
            .find(|l| l.starts_with("tps = "))
            .and_then(|l| l.split_whitespace().nth(2))
            .and_then(|v| v.parse().ok())
            .expect("pgbench prints tps")
    }
}
