//! Test harness: every test gets the real app on a free port against its own
//! database, cloned from a migrated template that is built once per run.

use std::sync::Arc;

use chrono::{DateTime, Duration, DurationRound, Utc};
use reqwest::{Response, StatusCode};
use serde_json::Value;
use tokio::sync::OnceCell;
use tokio_postgres::{Client, NoTls};
use yeyak::clock::ManualClock;
use yeyak::config::Config;
use yeyak::state::AppState;

pub const PG_BASE: &str = "postgres://postgres@127.0.0.1:5432";

/// API keys of the test installation.
pub const TENANT_ONE: &str = "key-tenant-one";
pub const TENANT_TWO: &str = "key-tenant-two";
pub const ADMIN: &str = "key-admin-ops";

static TEMPLATE: OnceCell<String> = OnceCell::const_new();

/// Name of the template database for the current migrations.
async fn template() -> &'static str {
    TEMPLATE
        .get_or_init(|| async {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            use std::hash::{Hash, Hasher};
            for m in yeyak_migration_sources() {
                m.hash(&mut hasher);
            }
            let name = format!("yeyak_tmpl_{:016x}", hasher.finish());
            let admin = connect("postgres").await;
            // One builder at a time across test processes.
            admin.execute("SELECT pg_advisory_lock(7215)", &[]).await.unwrap();
            let exists =
                admin.query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name]).await.unwrap().is_some();
            if !exists {
                let building = format!("{name}_building");
                admin.execute(&format!("DROP DATABASE IF EXISTS \"{building}\""), &[]).await.unwrap();
                yeyak::db::bootstrap::prepare(&format!("{PG_BASE}/{building}")).await.expect("template migrates");
                admin.execute(&format!("ALTER DATABASE \"{building}\" RENAME TO \"{name}\""), &[]).await.unwrap();
            }
            admin.execute("SELECT pg_advisory_unlock(7215)", &[]).await.unwrap();
            name
        })
        .await
}

fn yeyak_migration_sources() -> Vec<String> {
    let mut files: Vec<_> = walk(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations"));
    files.sort();
    files.into_iter().map(|p| format!("{}{}", p.display(), std::fs::read_to_string(&p).unwrap())).collect()
}

fn walk(dir: std::path::PathBuf) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(path));
        } else {
            out.push(path);
        }
    }
    out
}

pub async fn connect(db: &str) -> Client {
    let (client, connection) =
        tokio_postgres::connect(&format!("{PG_BASE}/{db}"), NoTls).await.expect("PostgreSQL on localhost");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// A fresh database cloned from the template.
pub async fn fresh_database() -> String {
    let template = template().await;
    let name = format!("yeyak_test_{}", uuid::Uuid::new_v4().simple());
    let admin = connect("postgres").await;
    // The template may be busy for a moment while another clone starts.
    let mut attempt = 0;
    loop {
        match admin.execute(&format!("CREATE DATABASE \"{name}\" TEMPLATE \"{template}\""), &[]).await {
            Ok(_) => break,
            Err(e) if attempt < 50 => {
                attempt += 1;
                let _ = e;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(e) => panic!("cannot clone template: {e}"),
        }
    }
    name
}

pub struct TestApp {
    pub address: String,
    pub db_name: String,
    /// Whether dropping this app drops its database (a second process on
    /// the same database does not).
    owns_db: bool,
    pub clock: ManualClock,
    pub state: actix_web::web::Data<AppState>,
    pub http: reqwest::Client,
}

/// The start of the next whole minute: what the test clock starts at.
pub fn test_now() -> DateTime<Utc> {
    Utc::now().duration_trunc(Duration::minutes(1)).unwrap() + Duration::minutes(1)
}

pub fn test_config(db_name: &str) -> Config {
    let mut config = Config::for_database(&format!("{PG_BASE}/{db_name}"));
    config.bind = "127.0.0.1:0".parse().unwrap();
    config.api_keys = parse_keys(&format!("t1:integration:{TENANT_ONE},t2:integration:{TENANT_TWO},ops:admin:{ADMIN}"));
    config.db_pool_size = 24;
    // Tests drive the sweeper and the outbox worker themselves.
    config.background = false;
    config
}

fn parse_keys(raw: &str) -> yeyak::config::ApiKeyList {
    use clap::Parser;
    let cfg = Config::parse_from(["yeyak", "--api-keys", raw]);
    cfg.api_keys
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        Self::spawn_with(|_| {}).await
    }

    pub async fn spawn_with(tweak: impl FnOnce(&mut Config)) -> TestApp {
        let db_name = fresh_database().await;
        Self::start(db_name, true, tweak).await
    }

    /// A second process on this app's database (its own pool, caches and clock).
    pub async fn another_process(&self) -> TestApp {
        Self::start(self.db_name.clone(), false, |_| {}).await
    }

    /// A second process on this app's database with other settings (a
    /// restart with a changed configuration).
    pub async fn another_process_with(&self, tweak: impl FnOnce(&mut Config)) -> TestApp {
        Self::start(self.db_name.clone(), false, tweak).await
    }

    async fn start(db_name: String, owns_db: bool, tweak: impl FnOnce(&mut Config)) -> TestApp {
        let mut config = test_config(&db_name);
        tweak(&mut config);
        let clock = ManualClock::new(test_now());
        let app = yeyak::startup::build_with_clock(config, Arc::new(clock.clone())).await.expect("app builds");
        let address = format!("http://{}", app.addr);
        let state = app.state.clone();
        tokio::spawn(app.server);
        TestApp {
            address,
            db_name,
            owns_db,
            clock,
            state,
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(64)
                // Under actix's 5 s keep-alive (see `web::Browser`).
                .pool_idle_timeout(std::time::Duration::from_secs(3))
                .build()
                .unwrap(),
        }
    }

    /// A direct connection to this test's database.
    pub async fn db(&self) -> Client {
        connect(&self.db_name).await
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    /// A request with the given API key and owner.
    pub fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        key: &str,
        owner: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let mut req = self.http.request(method, self.url(path)).bearer_auth(key);
        if let Some(owner) = owner {
            req = req.header("X-Reservation-Owner", owner);
        }
        req
    }

    pub async fn create_booking(&self, key: &str, owner: &str, idem: &str, body: &Value) -> Response {
        self.request(reqwest::Method::POST, "/api/bookings", key, Some(owner))
            .header("Idempotency-Key", idem)
            .json(body)
            .send()
            .await
            .expect("request sent")
    }

    pub async fn move_booking(&self, key: &str, owner: &str, id: i64, idem: Option<&str>, body: &Value) -> Response {
        let mut req = self.request(reqwest::Method::PATCH, &format!("/api/bookings/{id}"), key, Some(owner)).json(body);
        if let Some(idem) = idem {
            req = req.header("Idempotency-Key", idem);
        }
        req.send().await.expect("request sent")
    }

    pub async fn cancel_booking(&self, key: &str, owner: &str, id: i64, idem: Option<&str>, body: &Value) -> Response {
        let mut req =
            self.request(reqwest::Method::POST, &format!("/api/bookings/{id}/cancel"), key, Some(owner)).json(body);
        if let Some(idem) = idem {
            req = req.header("Idempotency-Key", idem);
        }
        req.send().await.expect("request sent")
    }

    pub async fn get_json(&self, path: &str, key: &str) -> (StatusCode, Value) {
        let res = self.request(reqwest::Method::GET, path, key, None).send().await.expect("request sent");
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// Runs the consistency check and returns (ok, report).
    pub async fn consistency(&self) -> (bool, Value) {
        let (status, body) = self.get_json("/api/admin/consistency", ADMIN).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        (body["ok"].as_bool().unwrap(), body)
    }

    pub async fn assert_consistent(&self) {
        let (ok, report) = self.consistency().await;
        assert!(ok, "consistency check failed: {report:#}");
    }

    pub fn database_url(&self) -> String {
        format!("{PG_BASE}/{}", self.db_name)
    }

    pub async fn count(&self, sql: &str) -> i64 {
        self.db().await.query_one(sql, &[]).await.unwrap().get::<_, i64>(0)
    }
}

/// An RFC 3339 time `days` days and `hh:mm` (UTC) after the test day.
pub fn at(days: i64, hh: u32, mm: u32) -> String {
    let day = (test_now() + Duration::days(days)).date_naive();
    day.and_hms_opt(hh, mm, 0).unwrap().and_utc().to_rfc3339()
}

pub fn booking(title: &str, rooms: &[&str], starts: &str, ends: &str) -> Value {
    serde_json::json!({ "title": title, "rooms": rooms, "startsAt": starts, "endsAt": ends })
}

pub async fn body(res: Response) -> (StatusCode, Value) {
    let status = res.status();
    let text = res.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// Drops a test database, closing whatever still uses it.
pub fn drop_database(name: &str) {
    let name = name.to_owned();
    // Drop runs outside any runtime guarantees; use a thread with its own.
    let _ = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let admin = connect("postgres").await;
            let _ = admin.execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"), &[]).await;
        });
    })
    .join();
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if self.owns_db {
            drop_database(&self.db_name);
        }
    }
}

/// POSTs JSON with a key, an owner and an idempotency key; returns status and body.
pub async fn post(app: &TestApp, path: &str, key: &str, owner: &str, idem: &str, body: Value) -> (StatusCode, Value) {
    let res = app
        .request(reqwest::Method::POST, path, key, Some(owner))
        .header("Idempotency-Key", idem)
        .json(&body)
        .send()
        .await
        .expect("request sent");
    self::body(res).await
}

/// Sends JSON with a method, a key, optional owner and idempotency key.
pub async fn send(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    key: &str,
    idem: Option<&str>,
    body: Value,
) -> (StatusCode, Value) {
    let mut req = app.request(method, path, key, None).json(&body);
    if let Some(idem) = idem {
        req = req.header("Idempotency-Key", idem);
    }
    self::body(req.send().await.expect("request sent")).await
}

/// Adds a room with an admin key; panics unless 201.
pub async fn add_room(app: &TestApp, room: Value) -> Value {
    let idem = format!("room-{}", uuid::Uuid::new_v4());
    let (status, body) = send(app, reqwest::Method::POST, "/api/rooms", ADMIN, Some(&idem), room).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

/// Every row of `tables`, as one fingerprint: equal before and after means
/// nothing in them changed.
pub async fn fingerprint(app: &TestApp, tables: &[&str]) -> String {
    let db = app.db().await;
    let mut out = String::new();
    for table in tables {
        let row = db
            .query_one(
                &format!("SELECT coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') FROM {table} t"),
                &[],
            )
            .await
            .unwrap();
        out.push_str(&format!("{table}:{};", row.get::<_, String>(0)));
    }
    out
}

/// Waits until at least `n` sessions on the observer's database wait for a
/// heavyweight lock (a row, a table, another transaction): the barrier
/// "they are inside their statements, queued behind the holder". The
/// observer must be a connection of its own outside any transaction
/// (`pg_stat_activity` is read once per transaction).
pub async fn until_waiting_for_locks(observer: &Client, n: i64) {
    let sql = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
    for _ in 0..2000 {
        let waiting: i64 = observer.query_one(sql, &[]).await.unwrap().get(0);
        if waiting >= n {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("{n} sessions never queued for a lock");
}

/// Waits (polling, at most 20 s) until `done` holds; panics naming `what`.
pub async fn until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..2000 {
        if done() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("never happened: {what}");
}

/// An RFC 3339 time of a JSON answer.
pub fn utc(v: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap().with_timezone(&Utc)
}

/// The day `t` falls on in Seoul (the tests' time zone), as YYYY-MM-DD.
pub fn seoul_date(t: DateTime<Utc>) -> String {
    t.with_timezone(&chrono_tz::Asia::Seoul).date_naive().to_string()
}

/// A person added through the admin form with any display name (and an
/// email, so notices reach them); returns their id and a signed-in browser.
pub async fn add_person_signed_in<'a>(
    app: &'a TestApp,
    admin: &crate::web::Browser<'_>,
    user: &str,
    display: &str,
) -> (i64, crate::web::Browser<'a>) {
    let page = admin.get("/admin/staff").await;
    let added = admin
        .post(
            "/admin/staff",
            &[
                ("username", user),
                ("display_name", display),
                ("password", "correct-horse-1"),
                ("email", &format!("{user}@example.com")),
                ("csrf_token", &page.field("csrf_token")),
            ],
        )
        .await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.html);
    let db = app.db().await;
    let id: i64 = db.query_one("SELECT id FROM staff_user WHERE username = $1", &[&user]).await.unwrap().get(0);
    let b = crate::web::Browser::new(app);
    b.sign_in(user, "correct-horse-1").await;
    (id, b)
}

/// The feed address shown on a page.
pub fn feed_address(page: &crate::web::Page) -> String {
    let start = page.html.find("/ical/me.ics?token=").expect("a feed address on the page");
    let head = &page.html[..start];
    let from = head.rfind(['"', '>']).map_or(0, |i| i + 1);
    page.html[from..].split(['"', '<']).next().unwrap().replace("&amp;", "&")
}
