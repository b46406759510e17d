//! Shared set-up of the HTTP benchmarks: yeyak in-process on a fresh
//! database, a client, timing helpers.

#![allow(dead_code)]

pub mod postfix;
pub mod smtp_sink;

use std::time::{Duration, Instant};

pub const KEY: &str = "bench-key-0001";
pub const ADMIN_KEY: &str = "bench-admin-0001";

pub struct Bench {
    pub base: String,
    pub pg: String,
    pub db: String,
    pub state: actix_web::web::Data<yeyak::state::AppState>,
    pub client: reqwest::Client,
}

impl Bench {
    /// Starts yeyak on a new database (`BENCH_PG` names the server).
    pub async fn start() -> Bench {
        Self::start_with(|_| {}).await
    }

    /// Same, with settings changed first.
    pub async fn start_with(tweak: impl FnOnce(&mut yeyak::config::Config)) -> Bench {
        Self::start_on(format!("yeyak_bench_{}", uuid::Uuid::new_v4().simple()), tweak).await
    }

    /// Same, on the database `db` (created and migrated when missing, kept
    /// as it is otherwise: a bench may reuse what an earlier run loaded).
    pub async fn start_on(db: String, tweak: impl FnOnce(&mut yeyak::config::Config)) -> Bench {
        let pg = std::env::var("BENCH_PG").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into());
        let mut config = yeyak::config::Config::for_database(&format!("{pg}/{db}"));
        config.bind = "127.0.0.1:0".parse().unwrap();
        config.api_keys = {
            use clap::Parser;
            let keys = format!("bench:integration:{KEY},ops:admin:{ADMIN_KEY}");
            yeyak::config::Config::parse_from(["yeyak", "--api-keys", &keys]).api_keys
        };
        config.db_pool_size = 32;
        tweak(&mut config);
        let app = yeyak::startup::build(config).await.expect("yeyak starts");
        let base = format!("http://{}", app.addr);
        let state = app.state.clone();
        tokio::spawn(app.server);
        let client = reqwest::Client::builder().pool_max_idle_per_host(256).build().unwrap();
        Bench { base, pg, db, state, client }
    }

    pub fn db_url(&self) -> String {
        format!("{}/{}", self.pg, self.db)
    }

    /// POSTs JSON and returns the status and the latency.
    pub async fn post(&self, path: &str, owner: &str, idem: &str, body: &serde_json::Value) -> (u16, Duration) {
        let req = self
            .client
            .post(format!("{}{path}", self.base))
            .bearer_auth(KEY)
            .header("X-Reservation-Owner", owner)
            .header("Idempotency-Key", idem)
            .json(body);
        let started = Instant::now();
        let res = req.send().await.expect("request");
        let status = res.status().as_u16();
        let _ = res.bytes().await;
        (status, started.elapsed())
    }

    /// Runs SQL statements (several allowed) on a connection of its own.
    pub async fn sql(&self, sql: &str) {
        use diesel_async::SimpleAsyncConnection;
        let mut conn = yeyak::db::establish(&self.db_url()).await.unwrap();
        conn.batch_execute(sql).await.unwrap();
    }

    /// A browser signed in as the default admin (cookies kept).
    pub async fn signed_in(&self) -> reqwest::Client {
        let client =
            reqwest::Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let login = client.get(format!("{}/login", self.base)).send().await.unwrap().text().await.unwrap();
        let marker = "name=\"csrf_token\" value=\"";
        let csrf = login[login.find(marker).unwrap() + marker.len()..].split('"').next().unwrap().to_owned();
        let res = client
            .post(format!("{}/login", self.base))
            .form(&[("username", "admin"), ("password", "yeyak-admin"), ("csrf_token", csrf.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 303, "signed in");
        client
    }

    /// `n` sequential GETs of `path` by `client`, each read to the end:
    /// sorted latencies, SQL statements per request, bytes of the last.
    pub async fn get_n(&self, client: &reqwest::Client, path: &str, n: usize) -> (Vec<Duration>, f64, usize) {
        let before = self.state.db_stats.statements();
        let mut lat = Vec::with_capacity(n);
        let mut size = 0;
        for _ in 0..n {
            let t = Instant::now();
            let res = client.get(format!("{}{path}", self.base)).send().await.unwrap();
            assert_eq!(res.status().as_u16(), 200, "{path}");
            size = res.bytes().await.unwrap().len();
            lat.push(t.elapsed());
        }
        let queries = (self.state.db_stats.statements() - before) as f64 / n as f64;
        lat.sort();
        (lat, queries, size)
    }

    /// Drops the bench database.
    pub async fn finish(self) {
        use diesel_async::RunQueryDsl;
        drop(self.client);
        if let Ok(mut admin) = yeyak::db::establish(&format!("{}/postgres", self.pg)).await {
            let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.db))
                .execute(&mut admin)
                .await;
        }
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The `p` quantile (0..=1) of sorted latencies.
pub fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}
