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

    /// The one bigint `n` a query answers, read on a connection of its own.
    pub async fn count(&self, sql: &str) -> i64 {
        use diesel_async::RunQueryDsl;
        #[derive(diesel::QueryableByName)]
        struct N {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            n: i64,
        }
        let mut conn = yeyak::db::establish(&self.db_url()).await.unwrap();
        diesel::sql_query(sql).get_result::<N>(&mut conn).await.unwrap().n
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

/// An area `code` of `places` desks (for one person each) on a 2,000 ×
/// 1,500 plan (SPEC §28):
/// a third booked 09:00-18:00 on `day`, a tenth assigned to holders of
/// their own (half of them away around `day`). The floor plan bench and the
/// campus bench render the same area. Does nothing if `code` exists.
pub async fn desk_area(bench: &Bench, code: &str, places: i32, day: chrono::NaiveDate) {
    let (away_from, away_to) = (day - chrono::Days::new(2), day + chrono::Days::new(2));
    let holder = code.to_lowercase();
    bench
        .sql(&format!(
            "DO $$ BEGIN IF EXISTS (SELECT 1 FROM area WHERE code = '{code}') THEN RETURN; END IF;
INSERT INTO area (code, name, time_zone, position) VALUES ('{code}', '{code}', 'Asia/Seoul', 999);
INSERT INTO staff_user (username, display_name, password_hash, is_admin, created_at)
SELECT '{holder}holder' || i, 'holder ' || i, '$argon2-bench', false, now() FROM generate_series(1, {places} / 10) i;
INSERT INTO room (code, name, area, position, kind, capacity, plan_x, plan_y, assigned_to)
SELECT '{code}P' || i, 'Desk ' || i, '{code}', i, 'desk', 1, ((i - 1) % 40 + 0.5) / 40.0, ((i - 1) / 40 + 0.5) / 25.0,
       CASE WHEN i % 10 = 0 THEN (SELECT id FROM staff_user WHERE username = '{holder}holder' || (i / 10)) END
  FROM generate_series(1, {places}) i;
INSERT INTO staff_away (staff_id, from_date, to_date)
SELECT id, DATE '{away_from}', DATE '{away_to}' FROM staff_user
 WHERE username LIKE '{holder}holder%' AND right(username, 1) IN ('1', '3', '5', '7', '9');
WITH ins AS (
  INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at)
  SELECT '{code}P' || i, '직원', 'bench-' || i,
         TIMESTAMP '{day} 09:00' AT TIME ZONE 'Asia/Seoul', TIMESTAMP '{day} 18:00' AT TIME ZONE 'Asia/Seoul',
         now(), now()
    FROM generate_series(1, {places}) i WHERE i % 3 = 0
  RETURNING id, title, starts_at, ends_at, created_at),
rooms AS (
  INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
  SELECT id, title, starts_at, ends_at, true FROM ins)
INSERT INTO booking_event (reservation_id, at, action, actor, changes)
SELECT id, created_at, 'created', '직원', jsonb_build_object('status', jsonb_build_object('before', null, 'after', 'CONFIRMED'))
  FROM ins;
END $$;"
        ))
        .await;
    let mut png = std::io::Cursor::new(Vec::new());
    image::RgbImage::from_pixel(2000, 1500, image::Rgb([250, 250, 250]))
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    let stored = reqwest::Client::new()
        .put(format!("{}/api/areas/{code}/plan", bench.base))
        .bearer_auth(ADMIN_KEY)
        .header("Content-Type", "image/png")
        .body(png.into_inner())
        .send()
        .await
        .unwrap();
    assert_eq!(stored.status().as_u16(), 200, "{}", stored.text().await.unwrap());
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The `p` quantile (0..=1) of sorted latencies.
pub fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}
