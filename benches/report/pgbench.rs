//! The SQL ceiling of a write scenario: pgbench running the statements that
//! one of our transactions sends, at the same concurrency, on the same
//! database. The scripts live in `benches/report/sql/`, written from what
//! PostgreSQL logged for one request of each kind (`log_statement=all`), with
//! the literal values turned into pgbench variables; at bench time
//! [`Pgbench::sample`] logs one transaction of the script and `capture`
//! compares it with what the server sent, so a script that no longer sends
//! what its request sends yields no ceiling.

use std::path::PathBuf;
use std::process::Command;

pub struct Pgbench {
    pub db_url: String,
    /// One script, or several that pgbench picks among at random.
    pub scripts: Vec<String>,
    pub clients: usize,
    pub seconds: u64,
    /// Transactions per client instead of a time budget.
    pub transactions: Option<usize>,
    pub vars: Vec<(&'static str, i64)>,
}

impl Pgbench {
    pub fn new(db_url: &str, script: impl Into<String>, clients: usize, seconds: u64) -> Self {
        let scripts = vec![script.into()];
        Pgbench { db_url: db_url.to_string(), scripts, clients, seconds, transactions: None, vars: Vec::new() }
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
        self.tps_with(&[])
    }

    /// As [`Pgbench::tps`], with `extra` variables for this run.
    pub fn tps_with(&self, extra: &[(&'static str, i64)]) -> f64 {
        let text = self.run(extra, None, false);
        text.lines()
            .find(|l| l.starts_with("tps = "))
            .and_then(|l| l.split_whitespace().nth(2))
            .and_then(|v| v.parse().ok())
            .expect("pgbench prints tps")
    }

    /// Barrier rounds: every client runs one transaction, all starting
    /// together (pgbench starts its clients once all are connected, and its
    /// tps leaves the connections out), round `r` with the variables
    /// `round(r)`; transactions per second over the rounds' time.
    pub fn rounds(&self, n: usize, round: impl Fn(usize) -> Vec<(&'static str, i64)>) -> f64 {
        let mut secs = 0.0;
        for r in 0..n {
            let once = Pgbench {
                db_url: self.db_url.clone(),
                scripts: self.scripts.clone(),
                clients: self.clients,
                seconds: self.seconds,
                transactions: Some(1),
                vars: self.vars.clone(),
            };
            secs += self.clients as f64 / once.tps_with(&round(r));
        }
        (n * self.clients) as f64 / secs
    }

    /// One client runs the script `transactions` times with every statement
    /// logged; the transactions PostgreSQL logged, in order. `vars` are set
    /// for this run only (after the others, so they win).
    pub fn sample(&self, transactions: usize, vars: &[(&'static str, i64)]) -> Vec<Vec<String>> {
        let db = self.db_url.rsplit('/').next().unwrap().to_string();
        let mut log = crate::capture::PgLog::from_now();
        self.run(vars, Some(transactions), true);
        crate::capture::transactions(&log.since(&db))
    }

    fn run(&self, extra: &[(&'static str, i64)], sample: Option<usize>, log: bool) -> String {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench");
        std::fs::create_dir_all(&dir).unwrap();
        let mut cmd = Command::new("pgbench");
        // Prepared, as diesel-async sends its statements.
        match sample {
            Some(t) => cmd.args(["-n", "-M", "prepared", "-c", "1", "-t", &t.to_string()]),
            None => cmd.args(["-n", "-M", "prepared", "-j", "2", "-c", &self.clients.to_string()]),
        };
        match (sample, self.transactions) {
            (Some(_), _) => &mut cmd,
            (None, Some(t)) => cmd.args(["-t", &t.to_string()]),
            (None, None) => cmd.args(["-T", &self.seconds.to_string()]),
        };
        if log {
            cmd.env("PGOPTIONS", "-c log_statement=all");
        }
        for (name, value) in self.vars.iter().chain(extra) {
            cmd.arg("-D").arg(format!("{name}={value}"));
        }
        let mut files = Vec::new();
        for script in &self.scripts {
            let file = dir.join(format!("pgbench-{}.sql", uuid::Uuid::new_v4().simple()));
            std::fs::write(&file, script).unwrap();
            cmd.arg("-f").arg(&file);
            files.push(file);
        }
        let out = cmd.arg(&self.db_url).output().expect("pgbench runs (postgresql-client)");
        for file in files {
            let _ = std::fs::remove_file(file);
        }
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "pgbench failed: {text}{}", String::from_utf8_lossy(&out.stderr));
        text
    }
}
