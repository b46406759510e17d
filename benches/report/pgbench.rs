//! The SQL ceiling of a write scenario: pgbench running the statements that
//! one of our transactions sends, at the same concurrency, on the same
//! database. The scripts live in `benches/report/sql/`, written from what
//! PostgreSQL logged for one request of each kind (`log_statement=all`), with
//! the literal values turned into pgbench variables; at bench time
//! [`Pgbench::sample`] logs one transaction of the script and `capture`
//! compares it with what the server sent, so a script that no longer sends
//! what its request sends yields no ceiling.

use std::path::PathBuf;
use std::process::{Command, Stdio};

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
        tps_of(&self.run(extra, None, false))
    }

    /// Transactions per second and the cores PostgreSQL kept busy meanwhile
    /// (its CPU seconds over pgbench's wall time, connections included).
    pub fn tps_and_cores(&self) -> (f64, f64) {
        let (mut child, files) = self.spawn(&[], None, false, None);
        let (cpu, wall) = crate::cpu::postgres_while(&mut child);
        let out = child.wait_with_output().unwrap();
        for file in files {
            let _ = std::fs::remove_file(file);
        }
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "pgbench failed: {text}{}", String::from_utf8_lossy(&out.stderr));
        (tps_of(&text), cpu / wall)
    }

    /// Barrier rounds, as the HTTP races run them: `n` rounds in which every
    /// client sends one transaction and all of a round's start together.
    /// Each transaction first waits for a shared advisory lock of its round
    /// (an autocommit statement outside the transaction, so not part of the
    /// compared sequence) that this process holds exclusively until all
    /// clients wait for it; the next round's lock is taken before this one is
    /// let go. The script sees the round in `:round` (1, 2, …). A round lasts
    /// from its release until every client waits at the next one (as an HTTP
    /// round lasts from its barrier to its last answer); round 1, where
    /// pgbench prepares its statements on fresh connections, runs before the
    /// `n` measured. Transactions per second of the measured rounds.
    pub async fn rounds(&self, n: usize) -> f64 {
        use diesel_async::RunQueryDsl;
        let mut conn = yeyak::db::establish(&self.db_url).await.unwrap();
        for r in 1..=2 {
            diesel::sql_query(format!("SELECT pg_advisory_lock({BARRIER}, {r})")).execute(&mut conn).await.unwrap();
        }
        // Round 1 warms up; rounds 2..=n+1 are measured; round n+2 only
        // lets the clients finish.
        let total = n + 2;
        let (mut child, files) = self.spawn(&[("barrier", 1)], None, false, Some(total));
        #[derive(diesel::QueryableByName)]
        struct Waiting {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            n: i64,
        }
        let mut measured = std::time::Duration::ZERO;
        let mut released: Option<std::time::Instant> = None;
        for r in 1..=total {
            loop {
                let w: Waiting = diesel::sql_query(format!(
                    "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = {BARRIER} \
                     AND objid = {r} AND objsubid = 2 AND NOT granted"
                ))
                .get_result(&mut conn)
                .await
                .unwrap();
                if w.n as usize >= self.clients {
                    break;
                }
                if let Some(status) = child.try_wait().unwrap() {
                    let out = child.wait_with_output().unwrap();
                    panic!("pgbench ended in round {r} ({status}): {}", String::from_utf8_lossy(&out.stderr));
                }
                tokio::time::sleep(std::time::Duration::from_micros(200)).await;
            }
            if let Some(at) = released.take() {
                measured += at.elapsed();
            }
            diesel::sql_query(format!("SELECT pg_advisory_lock({BARRIER}, {})", r + 2))
                .execute(&mut conn)
                .await
                .unwrap();
            diesel::sql_query(format!("SELECT pg_advisory_unlock({BARRIER}, {r})")).execute(&mut conn).await.unwrap();
            if (2..=n + 1).contains(&r) {
                released = Some(std::time::Instant::now());
            }
        }
        let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()).await.unwrap();
        for file in files {
            let _ = std::fs::remove_file(file);
        }
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "pgbench failed: {text}{}", String::from_utf8_lossy(&out.stderr));
        (n * self.clients) as f64 / measured.as_secs_f64()
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
        let (child, files) = self.spawn(extra, sample, log, None);
        let out = child.wait_with_output().expect("pgbench runs (postgresql-client)");
        for file in files {
            let _ = std::fs::remove_file(file);
        }
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "pgbench failed: {text}{}", String::from_utf8_lossy(&out.stderr));
        text
    }

    fn spawn(
        &self,
        extra: &[(&'static str, i64)],
        sample: Option<usize>,
        log: bool,
        rounds: Option<usize>,
    ) -> (std::process::Child, Vec<PathBuf>) {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench");
        std::fs::create_dir_all(&dir).unwrap();
        let mut cmd = Command::new("pgbench");
        // Prepared, as diesel-async sends its statements.
        match sample {
            Some(t) => cmd.args(["-n", "-M", "prepared", "-c", "1", "-t", &t.to_string()]),
            None => cmd.args(["-n", "-M", "prepared", "-j", "2", "-c", &self.clients.to_string()]),
        };
        match (sample, rounds, self.transactions) {
            (Some(_), _, _) => &mut cmd,
            (None, Some(t), _) | (None, None, Some(t)) => cmd.args(["-t", &t.to_string()]),
            (None, None, None) => cmd.args(["-T", &self.seconds.to_string()]),
        };
        if log {
            cmd.env("PGOPTIONS", "-c log_statement=all");
        }
        let base = [("round", 0), ("barrier", 0)];
        for (name, value) in base.iter().chain(&self.vars).chain(extra) {
            cmd.arg("-D").arg(format!("{name}={value}"));
        }
        let mut files = Vec::new();
        for script in &self.scripts {
            let file = dir.join(format!("pgbench-{}.sql", uuid::Uuid::new_v4().simple()));
            std::fs::write(&file, format!("{BARRIER_PREFIX}{script}")).unwrap();
            cmd.arg("-f").arg(&file);
            files.push(file);
        }
        cmd.arg(&self.db_url).stdout(Stdio::piped()).stderr(Stdio::piped());
        (cmd.spawn().expect("pgbench runs (postgresql-client)"), files)
    }
}

/// The advisory lock class of [`Pgbench::rounds`].
const BARRIER: i32 = 4242;

/// Before every script: the client's round, and in barrier runs the wait for
/// that round's start.
const BARRIER_PREFIX: &str = "\\set round :round + 1
\\if :barrier = 1
SELECT pg_advisory_xact_lock_shared(4242, :round);
\\endif
";

fn tps_of(text: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|v| v.parse().ok())
        .expect("pgbench prints tps")
}
