//! yeyak as real processes (the release binary cargo built beside this bench),
//! each on a port of its own, all against one fresh database.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const KEY: &str = "bench-key-0001";
pub const ADMIN_KEY: &str = "bench-admin-0001";

/// Where PostgreSQL is (`BENCH_PG` to point elsewhere).
pub fn pg_server() -> String {
    std::env::var("BENCH_PG").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into())
}

pub struct Fleet {
    pub db: String,
    pub bases: Vec<String>,
    children: std::sync::Mutex<Vec<Child>>,
    pub client: reqwest::Client,
}

/// Settings of one fleet; every process gets the same. The defaults are
/// yeyak's own (pool 16, sweep every 2 s).
#[derive(Clone)]
pub struct Settings {
    pub processes: usize,
    pub pool_size: u32,
    pub sweep_interval_ms: u64,
    pub extra_env: Vec<(String, String)>,
    /// SQL run after migration and before the processes start (rooms are
    /// read once at start-up).
    pub seed_sql: Option<String>,
    /// Every statement of the database to PostgreSQL's log (set before the
    /// processes connect; see `capture`).
    pub log_statements: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            processes: 1,
            pool_size: 16,
            sweep_interval_ms: 2000,
            extra_env: Vec::new(),
            seed_sql: None,
            log_statements: false,
        }
    }
}

impl Settings {
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.extra_env.push((key.into(), value.into()));
        self
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Fleet {
    /// Starts `settings.processes` processes on a database of their own and
    /// waits until each is ready. The database is created and migrated by
    /// yeyak's own bootstrap (as the server does at start) so that the seed
    /// SQL can run before the first process reads the rooms.
    pub async fn start(settings: &Settings) -> Fleet {
        let db = format!("yeyak_report_{}", uuid::Uuid::new_v4().simple());
        let client = reqwest::Client::builder().pool_max_idle_per_host(512).build().unwrap();
        let mut fleet = Fleet { db, bases: Vec::new(), children: Default::default(), client };
        yeyak::db::bootstrap::prepare(&fleet.db_url()).await.expect("database created and migrated");
        if let Some(sql) = &settings.seed_sql {
            fleet.sql(sql).await;
        }
        if settings.log_statements {
            fleet.sql(&format!("ALTER DATABASE \"{}\" SET log_statement = 'all'", fleet.db)).await;
        }
        for _ in 0..settings.processes {
            let port = free_port();
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_yeyak"));
            cmd.env_clear()
                .env("PATH", std::env::var("PATH").unwrap_or_default())
                .env("DATABASE_URL", fleet.db_url())
                .env("YEYAK_BIND", format!("127.0.0.1:{port}"))
                .env("YEYAK_API_KEYS", format!("bench:integration:{KEY},ops:admin:{ADMIN_KEY}"))
                .env("YEYAK_DB_POOL_SIZE", settings.pool_size.to_string())
                .env("YEYAK_SWEEP_INTERVAL_MS", settings.sweep_interval_ms.to_string())
                .env("YEYAK_SECRET_KEY", "report-secret-key-not-the-development-default")
                .env("RUST_LOG", "warn")
                .stdout(Stdio::null())
                .stderr(Stdio::inherit());
            for (k, v) in &settings.extra_env {
                cmd.env(k, v);
            }
            fleet.children.lock().unwrap().push(cmd.spawn().expect("yeyak binary starts"));
            let base = format!("http://127.0.0.1:{port}");
            fleet.wait_ready(&base).await;
            fleet.bases.push(base);
        }
        fleet
    }

    pub fn db_url(&self) -> String {
        format!("{}/{}", pg_server(), self.db)
    }

    async fn wait_ready(&self, base: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(res) = self.client.get(format!("{base}/readyz")).send().await {
                if res.status().is_success() {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "yeyak at {base} not ready within 60 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The process that serves request `n` (round robin).
    pub fn base(&self, n: usize) -> &str {
        &self.bases[n % self.bases.len()]
    }

    /// GET with the admin key, as JSON.
    pub async fn admin_get(&self, base: &str, path: &str) -> Value {
        self.client.get(format!("{base}{path}")).bearer_auth(ADMIN_KEY).send().await.unwrap().json().await.unwrap()
    }

    /// The sum of a Prometheus metric over every process and every label set.
    pub async fn metric_sum(&self, name: &str) -> f64 {
        let mut total = 0.0;
        for base in &self.bases {
            let text = self.client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
            total += text
                .lines()
                .filter(|l| l.starts_with(name) && l[name.len()..].starts_with([' ', '{']))
                .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                .sum::<f64>();
        }
        total
    }

    /// Violations over every invariant of the consistency report; the
    /// `overdue_*` checks measure the sweeper's lag, not a contradiction, and
    /// are returned apart.
    pub async fn consistency(&self) -> (i64, i64) {
        let report = self.admin_get(&self.bases[0], "/api/admin/consistency").await;
        let (mut broken, mut overdue) = (0, 0);
        for check in report["checks"].as_array().expect("checks") {
            let count = check["count"].as_i64().unwrap();
            if check["name"].as_str().unwrap().starts_with("overdue_") {
                overdue += count
            } else {
                broken += count
            }
        }
        (broken, overdue)
    }

    /// Runs SQL statements on a connection of its own.
    pub async fn sql(&self, sql: &str) {
        use diesel_async::SimpleAsyncConnection;
        let mut conn = yeyak::db::establish(&self.db_url()).await.unwrap();
        conn.batch_execute(sql).await.unwrap();
    }

    /// One `bigint` column of a query.
    pub async fn ids(&self, sql: &str) -> Vec<i64> {
        use diesel::sql_types::BigInt;
        use diesel_async::RunQueryDsl;
        #[derive(diesel::QueryableByName)]
        struct Id {
            #[diesel(sql_type = BigInt)]
            id: i64,
        }
        let mut conn = yeyak::db::establish(&self.db_url()).await.unwrap();
        let rows: Vec<Id> = diesel::sql_query(sql).load(&mut conn).await.unwrap();
        rows.into_iter().map(|r| r.id).collect()
    }

    /// Kills the processes; the database stays (for pgbench runs that must
    /// not race with a live sweeper).
    pub fn halt(&self) {
        for mut child in self.children.lock().unwrap().drain(..) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the processes and drops the database.
    pub async fn stop(self) {
        self.halt();
        use diesel_async::RunQueryDsl;
        if let Ok(mut admin) = yeyak::db::establish(&format!("{}/postgres", pg_server())).await {
            let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.db))
                .execute(&mut admin)
                .await;
        }
    }
}

impl Drop for Fleet {
    /// A panicking bench leaves no process behind.
    fn drop(&mut self) {
        self.halt();
    }
}
