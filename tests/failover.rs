//! Failover drill (SPEC §14) in a test binary of its own: a pg_auto_failover
//! formation on this machine (a monitor and two nodes, synchronous
//! replication), yeyak on a multi-host `DATABASE_URL`, a load of idempotent
//! bookings, and the primary killed under it. Afterwards every acknowledged
//! booking is on the new primary, every retried key ended with one booking,
//! the consistency report is clean, no client saw a 500, and the sweeper's
//! leader gate sits on the new primary. The numbers go to stderr and to
//! `target/tmp/failover/<tuning>.txt` (docs/SCALING.md §2a).
//!
//! Needs Debian's `pg-auto-failover-cli` and `postgresql-15-auto-failover`
//! (`bash .ci/test` installs them) and root, since `pg_autoctl` runs as the
//! `postgres` user through `runuser`. Each formation lives in its own
//! directory under /tmp on ports of its own; a guard kills its processes and
//! removes it when the test ends, passed or failed. The drills run one at a
//! time so that their timings do not disturb each other.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;
use tokio_postgres::NoTls;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// What a keeper logs when it has read its configuration file again.
const KEEPER_RELOADED: &str = "Reloaded the new configuration from";

/// Clients booking at once (below the pool size, so the bulkhead never refuses).
const CLIENTS: usize = 8;
/// How long the load runs before the primary dies.
const WARM_UP: Duration = Duration::from_secs(4);
/// How long it goes on after the first success on the new primary.
const COOL_DOWN: Duration = Duration::from_secs(3);
/// Longest unavailability the drill waits out before it fails.
const GIVE_UP_AFTER: Duration = Duration::from_secs(150);

/// The monitor's failure detection settings.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tuning {
    /// pg_auto_failover's defaults.
    Defaults,
    /// Faster detection and demotion (docs/SCALING.md says what they risk).
    Tuned,
}

impl Tuning {
    fn name(self) -> &'static str {
        match self {
            Tuning::Defaults => "defaults",
            Tuning::Tuned => "tuned",
        }
    }

    /// `ALTER SYSTEM` settings of the monitor.
    fn monitor_settings(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Tuning::Defaults => &[],
            Tuning::Tuned => &[
                ("pgautofailover.health_check_period", "1000"),
                ("pgautofailover.health_check_timeout", "1000"),
                ("pgautofailover.health_check_max_retries", "1"),
                ("pgautofailover.health_check_retry_delay", "500"),
                ("pgautofailover.node_considered_unhealthy_timeout", "4000"),
                ("pgautofailover.primary_demote_timeout", "6000"),
            ],
        }
    }

    /// `pg_autoctl config set` on every node: an isolated primary must
    /// demote itself before the monitor's demote timeout promotes another.
    fn keeper_settings(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Tuning::Defaults => &[],
            Tuning::Tuned => &[("timeout.network_partition_timeout", "4")],
        }
    }
}

/// How commits reach the standby.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Replication {
    /// pg_auto_failover's default with two nodes: `ANY 1 (standby)`, a commit
    /// is acknowledged once the standby has flushed it.
    Synchronous,
    /// The standby outside the write quorum (`replication-quorum false`).
    Asynchronous,
}

/// One drill's settings.
#[derive(Debug, Clone, Copy)]
struct Drill {
    tuning: Tuning,
    replication: Replication,
    /// The primary's WAL sender is stopped this long before the kill: a
    /// standby falling behind, as over a slow link.
    standby_stalled: Option<Duration>,
}

impl Drill {
    fn name(&self) -> String {
        let mut name = self.tuning.name().to_owned();
        if self.replication == Replication::Asynchronous {
            name.push_str("-async");
        }
        if let Some(stall) = self.standby_stalled {
            name.push_str(&format!("-standby-stalled-{}s", stall.as_secs()));
        }
        name
    }
}

#[test]
fn failover_with_the_monitors_default_timeouts() {
    run(Drill { tuning: Tuning::Defaults, replication: Replication::Synchronous, standby_stalled: None });
}

#[test]
fn failover_with_tuned_timeouts() {
    run(Drill { tuning: Tuning::Tuned, replication: Replication::Synchronous, standby_stalled: None });
}

/// With the standby stalled, synchronous commits wait instead of being
/// acknowledged: still no acknowledged booking is lost.
#[test]
fn a_stalled_synchronous_standby_loses_no_acknowledged_booking() {
    let stall = Some(Duration::from_secs(2));
    run(Drill { tuning: Tuning::Tuned, replication: Replication::Synchronous, standby_stalled: stall });
}

/// What asynchronous replication risks, shown rather than told: bookings
/// acknowledged while the standby lagged are gone after the failover (the
/// drill asserts that some are lost, and that none is doubled).
#[test]
fn asynchronous_replication_loses_acknowledged_bookings() {
    let stall = Some(Duration::from_secs(2));
    run(Drill { tuning: Tuning::Tuned, replication: Replication::Asynchronous, standby_stalled: stall });
}

fn run(drill: Drill) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    runtime().block_on(self::drill(drill));
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

async fn drill(drill: Drill) {
    let formation = Formation::create(drill.tuning).await;
    if drill.replication == Replication::Asynchronous {
        formation.make_standby_asynchronous().await;
    }
    let url = formation.database_url();
    let mut config = yeyak::config::Config::for_database(&url);
    config.bind = "127.0.0.1:0".parse().unwrap();
    config.sweep_interval_ms = 500;
    let app = yeyak::startup::build(config).await.expect("yeyak starts on the formation");
    let base = format!("http://{}", app.addr);
    let state = app.state.clone();
    tokio::spawn(app.server);
    let _background = app.background;

    let load = Load::start(&base);
    tokio::time::sleep(WARM_UP).await;
    assert!(load.tally.lock().unwrap().acked.len() >= 10, "bookings go through before the failover");
    let old_primary = formation.primary().await;
    let stalled = match drill.standby_stalled {
        Some(stall) => {
            let sender = formation.stop_wal_sender().await;
            tokio::time::sleep(stall).await;
            Some(sender)
        }
        None => None,
    };
    let acked_before_kill = load.tally.lock().unwrap().acked.len();
    let killed_at = formation.kill(&old_primary);
    // The stalled sender dies with its server (a stopped process outlives its postmaster).
    if let Some(sender) = stalled {
        signal(sender, "-KILL");
    }
    let killed_wall = SystemTime::now();

    // Load goes on until the new primary has served for a while.
    let recovered_at = loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if let Some(first) = load.tally.lock().unwrap().first_success_after(killed_at) {
            break first;
        }
        assert!(killed_at.elapsed() < GIVE_UP_AFTER, "no booking succeeded within {GIVE_UP_AFTER:?} of the kill");
    };
    tokio::time::sleep(COOL_DOWN).await;
    let tally = load.stop().await;
    let window = recovered_at - killed_at;

    // Nothing but retryable answers reached the clients.
    assert!(tally.unexpected.is_empty(), "answers other than 201/503: {:?}", tally.unexpected);

    // Every acknowledged booking is on the new primary, every key has at most one.
    let new_primary = formation.primary().await;
    assert_ne!(new_primary, old_primary, "the monitor promoted the other node");
    let db = connect(&url).await;
    let mut per_title: HashMap<String, i64> = HashMap::new();
    for row in db.query("SELECT title, count(*) FROM reservation GROUP BY title", &[]).await.unwrap() {
        per_title.insert(row.get(0), row.get(1));
    }
    let lost: Vec<&String> = tally.acked.keys().filter(|k| !per_title.contains_key(*k)).collect();
    let doubled: Vec<(&String, &i64)> = per_title.iter().filter(|(_, n)| **n != 1).collect();
    match drill.replication {
        Replication::Synchronous => assert!(lost.is_empty(), "acknowledged bookings lost: {lost:?}"),
        Replication::Asynchronous => assert!(!lost.is_empty(), "a lagging asynchronous standby loses bookings"),
    }
    assert!(doubled.is_empty(), "keys with more than one booking: {doubled:?}");
    let unacked_present = per_title.keys().filter(|k| !tally.acked.contains_key(*k)).count();
    // A key still retrying when the load stopped may or may not have landed; each is one booking at most (above).
    assert!(unacked_present <= CLIENTS, "{unacked_present} bookings nobody was told about");

    // The consistency report is clean.
    let report: serde_json::Value = reqwest::Client::new()
        .get(format!("{base}/api/admin/consistency"))
        .bearer_auth("yeyak-dev-key")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(report["ok"], true, "{report:#}");

    // The sweeper's leader gate moved to the new primary.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !(state.sweeper.is_leader().await && leader_lock_held(&db).await) {
        assert!(Instant::now() < deadline, "the sweeper leads again on the new primary");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let timeline = formation.timeline_since(killed_wall).await;
    let summary = Summary { drill, window, tally: &tally, acked_before_kill, lost: lost.len(), timeline };
    summary.publish();
}

/// Whether a session on this server holds the sweeper's advisory lock.
async fn leader_lock_held(db: &tokio_postgres::Client) -> bool {
    let key = yeyak::sweeper::LEADER_LOCK;
    let (class_id, obj_id) = ((key >> 32) as u32 as i64, (key as u32) as i64);
    let row = db
        .query_one(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted \
             AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1",
            &[&class_id, &obj_id],
        )
        .await
        .unwrap();
    row.get::<_, i64>(0) == 1
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.expect("the primary answers");
    tokio::spawn(connection);
    client
}

// ---------------------------------------------------------------- the load

/// What the clients saw.
#[derive(Debug, Default)]
struct Tally {
    /// Key → when its 201 came (the key is also the booking's title).
    acked: BTreeMap<String, Instant>,
    /// Start times of the requests that got a 201.
    successes: Vec<(Instant, Instant)>,
    requests: u64,
    unavailable_503: u64,
    /// Keys that needed more than one attempt.
    retried_keys: u64,
    /// Retries answered from the stored response: the first attempt had committed.
    replayed: u64,
    unexpected: Vec<String>,
}

impl Tally {
    /// Counts one answer; true when the key has its booking.
    fn record(&mut self, key: &str, attempt: u32, sent: Instant, answer: Result<(u16, bool), String>) -> bool {
        self.requests += 1;
        match answer {
            Ok((201, replayed)) => {
                let done = Instant::now();
                self.acked.insert(key.to_owned(), done);
                self.successes.push((sent, done));
                if attempt > 1 {
                    self.retried_keys += 1;
                    self.replayed += u64::from(replayed);
                }
                true
            }
            Ok((503, _)) => {
                self.unavailable_503 += 1;
                false
            }
            Ok((status, _)) => {
                self.unexpected.push(format!("{key}: {status}"));
                false
            }
            Err(e) => {
                self.unexpected.push(format!("{key}: {e}"));
                false
            }
        }
    }

    /// When the first request sent after `t` succeeded.
    fn first_success_after(&self, t: Instant) -> Option<Instant> {
        self.successes.iter().filter(|(sent, _)| *sent > t).map(|(_, done)| *done).min()
    }
}

struct Load {
    tally: Arc<Mutex<Tally>>,
    stop: tokio::sync::watch::Sender<bool>,
    clients: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    fn start(base: &str) -> Load {
        let tally = Arc::new(Mutex::new(Tally::default()));
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let http = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
        let clients = (0..CLIENTS)
            .map(|client| {
                let (http, base, tally, stopped) = (http.clone(), base.to_owned(), tally.clone(), stopped.clone());
                tokio::spawn(async move { book_until_stopped(client, http, base, tally, stopped).await })
            })
            .collect();
        Load { tally, stop, clients }
    }

    async fn stop(self) -> Tally {
        self.stop.send(true).unwrap();
        for client in self.clients {
            client.await.unwrap();
        }
        Arc::try_unwrap(self.tally).unwrap().into_inner().unwrap()
    }
}

/// One client: books slot after slot, each under its own key, and retries a
/// key after a 503 until it gets its booking.
async fn book_until_stopped(
    client: usize,
    http: reqwest::Client,
    base: String,
    tally: Arc<Mutex<Tally>>,
    stopped: tokio::sync::watch::Receiver<bool>,
) {
    let room = ["A", "B", "C"][client % 3];
    let first = chrono::Utc::now().date_naive() + chrono::Duration::days(2);
    let origin = first.and_hms_opt(0, 0, 0).unwrap().and_utc() + chrono::Duration::days(40 * (client / 3) as i64);
    for n in 0.. {
        let key = format!("failover-{client}-{n}");
        let starts = origin + chrono::Duration::minutes(10 * n);
        let body = json!({"title": key, "rooms": [room], "startsAt": starts.to_rfc3339(),
            "endsAt": (starts + chrono::Duration::minutes(10)).to_rfc3339()});
        let mut attempt: u32 = 0;
        loop {
            if *stopped.borrow() {
                return;
            }
            attempt += 1;
            let sent = Instant::now();
            let res = http
                .post(format!("{base}/api/bookings"))
                .bearer_auth("yeyak-dev-key")
                .header("X-Reservation-Owner", format!("client-{client}"))
                .header("Idempotency-Key", &key)
                .json(&body)
                .send()
                .await;
            let answer = match res {
                Ok(res) => {
                    Ok((res.status().as_u16(), res.headers().get("Idempotency-Replayed").is_some_and(|v| v == "true")))
                }
                Err(e) => Err(e.to_string()),
            };
            if tally.lock().unwrap().record(&key, attempt, sent, answer) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

// ---------------------------------------------------------------- report

struct Summary<'a> {
    drill: Drill,
    window: Duration,
    tally: &'a Tally,
    acked_before_kill: usize,
    lost: usize,
    timeline: Vec<(f64, String)>,
}

impl Summary<'_> {
    fn publish(&self) {
        let t = self.tally;
        let mut text = format!(
            "failover drill {} ({} timeouts, {:?} replication, standby stalled {:?}, {} clients)\n\
             unavailability window (kill → first successful booking sent after it): {:.1} s\n\
             requests {}, acknowledged bookings {} ({} before the kill), 503 answers {}, keys retried {} (replayed {}), \
             acknowledged bookings lost {}, other answers {}\n",
            self.drill.name(),
            self.drill.tuning.name(),
            self.drill.replication,
            self.drill.standby_stalled,
            CLIENTS,
            self.window.as_secs_f64(),
            t.requests,
            t.acked.len(),
            self.acked_before_kill,
            t.unavailable_503,
            t.retried_keys,
            t.replayed,
            self.lost,
            t.unexpected.len(),
        );
        for (at, event) in &self.timeline {
            text.push_str(&format!("  +{at:5.1} s  {event}\n"));
        }
        eprintln!("{text}");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("failover");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{}.txt", self.drill.name())), text).unwrap();
    }
}

// ---------------------------------------------------------------- the formation

/// A pg_auto_failover monitor and two nodes, killed and removed on drop.
struct Formation {
    root: PathBuf,
    bin_dir: PathBuf,
    monitor_port: u16,
    keepers: Vec<Keeper>,
}

/// One `pg_autoctl … --run` process group: the keeper and its PostgreSQL.
struct Keeper {
    name: String,
    port: u16,
    pgdata: PathBuf,
    child: Child,
}

impl Formation {
    async fn create(tuning: Tuning) -> Formation {
        let bin_dir = auto_failover_bin_dir();
        let root = std::env::temp_dir().join(format!("yeyak-failover-{}", uuid::Uuid::new_v4().simple()));
        for dir in ["cfg", "share", "run"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        run_ok(Command::new("chown").args(["-R", "postgres:postgres"]).arg(&root));
        run_ok(Command::new("chmod").arg("700").arg(root.join("run")));
        let mut formation = Formation { root, bin_dir, monitor_port: free_port(), keepers: Vec::new() };

        let monitor = formation.spawn(
            "monitor",
            formation.monitor_port,
            &["create", "monitor", "--auth", "trust", "--no-ssl", "--run"],
        );
        formation.keepers.push(monitor);
        let monitor_db = formation.monitor_url();
        formation.wait_for("the monitor", || async { try_connect(&monitor_db).await.is_some() }).await;
        let db = connect(&monitor_db).await;
        for (name, value) in tuning.monitor_settings() {
            db.batch_execute(&format!("ALTER SYSTEM SET {name} = {value}")).await.unwrap();
        }
        db.batch_execute("SELECT pg_reload_conf()").await.unwrap();

        for (n, state) in [(1, "single"), (2, "secondary")] {
            let name = format!("node{n}");
            let port = free_port();
            let monitor = format!(
                "postgres://autoctl_node@127.0.0.1:{}/pg_auto_failover?sslmode=disable",
                formation.monitor_port
            );
            let args = [
                "create",
                "postgres",
                "--name",
                &name,
                "--dbname",
                "yeyak",
                "--listen",
                "127.0.0.1",
                "--auth",
                "trust",
                "--no-ssl",
                "--monitor",
                &monitor,
                "--run",
            ];
            let keeper = formation.spawn(&name, port, &args);
            formation.keepers.push(keeper);
            let primary_port = formation.keepers[1].port;
            // The joining node's base backup waits for a checkpoint on the primary.
            formation
                .wait_for(&format!("{name} to reach {state}"), || async {
                    if n == 2 {
                        if let Some(p) =
                            try_connect(&format!("postgres://postgres@127.0.0.1:{primary_port}/postgres")).await
                        {
                            let _ = p.batch_execute("CHECKPOINT").await;
                        }
                    }
                    db.query_opt(
                        "SELECT 1 FROM pgautofailover.node WHERE nodename = $1 AND reportedstate::text = $2 \
                         AND goalstate = reportedstate",
                        &[&name, &state],
                    )
                    .await
                    .map(|r| r.is_some())
                    .unwrap_or(false)
                })
                .await;
            formation.configure_keeper(n, tuning.keeper_settings()).await;
        }
        formation
            .wait_for("node1 primary, node2 secondary", || async {
                let rows = db
                    .query("SELECT 1 FROM pgautofailover.node WHERE reportedstate::text IN ('primary', 'secondary') AND goalstate = reportedstate", &[])
                    .await
                    .unwrap_or_default();
                rows.len() == 2
            })
            .await;
        let sync = connect(&format!("postgres://postgres@127.0.0.1:{}/yeyak", formation.keepers[1].port))
            .await
            .query_one("SHOW synchronous_standby_names", &[])
            .await
            .unwrap()
            .get::<_, String>(0);
        assert!(sync.starts_with("ANY 1"), "synchronous replication is on: {sync}");
        formation
    }

    /// Both nodes, the primary found by `target_session_attrs=read-write`.
    fn database_url(&self) -> String {
        let hosts: Vec<String> = self.keepers[1..].iter().map(|k| format!("127.0.0.1:{}", k.port)).collect();
        format!("postgres://postgres@{}/yeyak?target_session_attrs=read-write&connect_timeout=2", hosts.join(","))
    }

    fn monitor_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/pg_auto_failover", self.monitor_port)
    }

    /// The node that took the primary's role and reported it (a dead one
    /// still shows its last reported state, but another goal).
    async fn primary(&self) -> String {
        let db = connect(&self.monitor_url()).await;
        let row = db
            .query_one(
                "SELECT nodename FROM pgautofailover.node \
                 WHERE goalstate::text IN ('primary', 'wait_primary', 'single') AND goalstate = reportedstate",
                &[],
            )
            .await
            .unwrap();
        row.get(0)
    }

    /// Kills a node the way a crash does: its keeper and its postmaster with
    /// SIGKILL. The backends notice their postmaster's death and end their
    /// sessions, as on a primary whose server died. Returns when the
    /// postmaster is gone.
    fn kill(&self, name: &str) -> Instant {
        let keeper = self.keepers.iter().find(|k| k.name == name).unwrap();
        let postmaster = std::fs::read_to_string(keeper.pgdata.join("postmaster.pid"))
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<u32>().ok()))
            .expect("the primary's postmaster.pid");
        let mut victims: Vec<u32> = group_members(keeper.child.id())
            .into_iter()
            .filter(|(_, comm)| comm != "postgres")
            .map(|(p, _)| p)
            .collect();
        victims.push(postmaster);
        for pid in victims {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
        // Dead, not dying: from here no request can reach it.
        while Path::new(&format!("/proc/{postmaster}")).exists()
            && std::fs::read_to_string(format!("/proc/{postmaster}/stat")).is_ok_and(|s| !s.contains(") Z "))
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        Instant::now()
    }

    /// `pg_autoctl config set` on the running node `n`, one setting after
    /// another, each taken in by its keeper before this returns.
    ///
    /// A running keeper rewrites its configuration file in place (truncated,
    /// then written) when its service starts — just *after* the node first
    /// reports its state, so the monitor may already show it — and on every
    /// reload, which each `config set` asks for. A `pg_autoctl` that reads
    /// the file meanwhile finds it empty ("Failed to find section
    /// pg_autoctl"), and a `config set` written between the keeper's read
    /// and its rewrite is silently undone. So: wait for the service to have
    /// started (it logs that it runs after that rewrite), set, and wait for
    /// the reload to be over (the keeper calls the monitor after it).
    async fn configure_keeper(&self, n: usize, settings: &[(&str, &str)]) {
        if settings.is_empty() {
            return;
        }
        let name = self.keepers[n].name.clone();
        let pgdata = self.keepers[n].pgdata.display().to_string();
        self.wait_for(&format!("{name}'s keeper service to start"), || async {
            self.log_of(&name).contains("pg_autoctl service is running")
        })
        .await;
        for (key, value) in settings {
            let reloads = self.log_of(&name).matches(KEEPER_RELOADED).count();
            self.pg_autoctl(&["config", "set", "--pgdata", &pgdata, key, value]);
            self.wait_for(&format!("{name}'s keeper to reload {key}"), || async {
                self.log_of(&name).matches(KEEPER_RELOADED).count() > reloads
            })
            .await;
            // The reload logs before it rewrites the file; a later call to
            // the monitor (its next loop) comes after the rewrite.
            let monitor = connect(&self.monitor_url()).await;
            let seen: String = monitor.query_one("SELECT now()::text", &[]).await.unwrap().get(0);
            self.wait_for(&format!("{name}'s keeper to report after its reload"), || async {
                monitor
                    .query_opt(
                        "SELECT 1 FROM pgautofailover.node WHERE nodename = $1 AND reporttime > $2::text::timestamptz",
                        &[&name, &seen],
                    )
                    .await
                    .map(|r| r.is_some())
                    .unwrap_or(false)
            })
            .await;
        }
    }

    /// What a node's `pg_autoctl` has logged so far.
    fn log_of(&self, name: &str) -> String {
        std::fs::read_to_string(self.root.join(format!("{name}.log"))).unwrap_or_default()
    }

    /// Takes the standby out of the write quorum: commits no longer wait for it.
    async fn make_standby_asynchronous(&self) {
        let standby = self.keepers[2].pgdata.display().to_string();
        self.pg_autoctl(&["set", "node", "replication-quorum", "--pgdata", &standby, "false"]);
        let primary = format!("postgres://postgres@127.0.0.1:{}/postgres", self.keepers[1].port);
        self.wait_for("synchronous_standby_names to be emptied", || async {
            let db = connect(&primary).await;
            let names: String = db.query_one("SHOW synchronous_standby_names", &[]).await.unwrap().get(0);
            names.is_empty()
        })
        .await;
    }

    /// Stops (SIGSTOP) the primary's WAL sender, so that the standby falls
    /// behind (stopping the standby's receiver would not do: what the sender
    /// wrote waits in the socket buffers and arrives after all); returns its pid.
    async fn stop_wal_sender(&self) -> u32 {
        let primary = connect(&format!("postgres://postgres@127.0.0.1:{}/postgres", self.keepers[1].port)).await;
        let pid: i32 = primary.query_one("SELECT pid FROM pg_stat_replication", &[]).await.unwrap().get(0);
        signal(pid as u32, "-STOP");
        pid as u32
    }

    /// The monitor's events since `t`, as seconds after it.
    async fn timeline_since(&self, t: SystemTime) -> Vec<(f64, String)> {
        let since = t.duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
        let db = connect(&self.monitor_url()).await;
        db.query(
            "SELECT extract(epoch FROM eventtime)::float8 - $1, description FROM pgautofailover.event \
             WHERE extract(epoch FROM eventtime)::float8 >= $1 ORDER BY eventid",
            &[&since],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get::<_, f64>(0), r.get::<_, String>(1)))
        .filter(|(_, d)| {
            d.contains("unhealthy") || d.contains("Setting goal state") || d.contains("New state is reported")
        })
        .fold(Vec::new(), |mut events: Vec<(f64, String)>, event| {
            // The monitor logs a goal change once per node it concerns.
            if events.last().is_none_or(|last| last.1 != event.1) {
                events.push(event);
            }
            events
        })
    }

    fn spawn(&self, name: &str, port: u16, args: &[&str]) -> Keeper {
        let pgdata = self.root.join(name);
        let log = std::fs::File::create(self.root.join(format!("{name}.log"))).unwrap();
        let mut command = self.as_postgres("pg_autoctl");
        command
            .args(args)
            .arg("--pgdata")
            .arg(&pgdata)
            .args(["--pgport", &port.to_string(), "--hostname", "127.0.0.1"])
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log));
        // Its own process group, so that the guard can end all of it.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command.spawn().expect("pg_autoctl starts");
        Keeper { name: name.to_owned(), port, pgdata, child }
    }

    fn pg_autoctl(&self, args: &[&str]) {
        let mut command = self.as_postgres("pg_autoctl");
        run_ok(command.args(args));
    }

    /// `runuser -u postgres -- env … program`: pg_autoctl refuses root, and
    /// keeps its state in the XDG directories of this formation.
    fn as_postgres(&self, program: &str) -> Command {
        let path = format!("{}:{}", self.bin_dir.display(), std::env::var("PATH").unwrap_or_default());
        let mut command = Command::new("runuser");
        command
            .args(["-u", "postgres", "--", "env"])
            .arg(format!("XDG_CONFIG_HOME={}", self.root.join("cfg").display()))
            .arg(format!("XDG_DATA_HOME={}", self.root.join("share").display()))
            .arg(format!("XDG_RUNTIME_DIR={}", self.root.join("run").display()))
            .arg(format!("PATH={path}"))
            .arg(program)
            .current_dir(&self.root);
        command
    }

    /// What shows the formation moving: the bytes its processes have logged
    /// and the monitor's latest event (none while the monitor is starting).
    async fn progress(&self) -> (u64, i64) {
        let logged = std::fs::read_dir(&self.root)
            .map(|dir| {
                dir.filter_map(Result::ok)
                    .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0);
        let event = match try_connect(&self.monitor_url()).await {
            Some(db) => db
                .query_one("SELECT coalesce(max(eventid), 0)::int8 FROM pgautofailover.event", &[])
                .await
                .map(|r| r.get::<_, i64>(0))
                .unwrap_or(0),
            None => 0,
        };
        (logged, event)
    }

    async fn wait_for<F, Fut>(&self, what: &str, check: F)
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        // Waits on progress, not on a guess of how fast the machine is: the
        // wait fails only when the formation has stood still (no line logged
        // by any of its processes, no event on the monitor) for two minutes,
        // or after an outer limit that no healthy formation comes near.
        let started = Instant::now();
        let mut last = self.progress().await;
        let mut moved_at = Instant::now();
        while !check().await {
            let now = self.progress().await;
            if now != last {
                (last, moved_at) = (now, Instant::now());
            }
            if moved_at.elapsed() > Duration::from_secs(120) || started.elapsed() > Duration::from_secs(900) {
                let logs: Vec<String> = self
                    .keepers
                    .iter()
                    .map(|k| {
                        let text =
                            std::fs::read_to_string(self.root.join(format!("{}.log", k.name))).unwrap_or_default();
                        let tail: Vec<&str> = text.lines().rev().take(15).collect();
                        format!("--- {}\n{}", k.name, tail.into_iter().rev().collect::<Vec<_>>().join("\n"))
                    })
                    .collect();
                panic!("timed out waiting for {what}\n{}", logs.join("\n"));
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

impl Drop for Formation {
    fn drop(&mut self) {
        for keeper in &mut self.keepers {
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", keeper.child.id())]).status();
            let _ = keeper.child.wait();
        }
        // Anything that left the groups still works in its data directory.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = processes_under(&self.root);
            if left.is_empty() || Instant::now() > deadline {
                break;
            }
            for pid in left {
                let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The bin directory of the PostgreSQL that has the pgautofailover extension.
fn auto_failover_bin_dir() -> PathBuf {
    let found = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|dir| dir.join("lib/pgautofailover.so").is_file());
    let has_cli = Command::new("pg_autoctl").arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    match found {
        Some(dir) if has_cli => dir.join("bin"),
        _ => panic!(
            "the failover drill needs pg_auto_failover: apt-get install pg-auto-failover-cli postgresql-15-auto-failover \
             (bash .ci/test installs them)"
        ),
    }
}

/// (pid, command name) of every process in process group `pgid`.
fn group_members(pgid: u32) -> Vec<(u32, String)> {
    all_pids()
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (head, tail) = stat.rsplit_once(')')?;
            let comm = head.split_once('(')?.1.to_owned();
            let group: u32 = tail.split_whitespace().nth(2)?.parse().ok()?;
            (group == pgid).then_some((pid, comm))
        })
        .collect()
}

/// Processes whose working directory is under `root` (PostgreSQL works in its data directory).
fn processes_under(root: &Path) -> Vec<u32> {
    all_pids()
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).map(|cwd| cwd.starts_with(root)).unwrap_or(false))
        .collect()
}

fn all_pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()).filter_map(|e| e.file_name().to_str()?.parse().ok())
}

fn signal(pid: u32, signal: &str) {
    let _ = Command::new("kill").args([signal, &pid.to_string()]).status();
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

async fn try_connect(url: &str) -> Option<tokio_postgres::Client> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.ok()?;
    tokio::spawn(connection);
    Some(client)
}

fn run_ok(command: &mut Command) {
    let out = command.output().expect("command runs");
    assert!(out.status.success(), "{command:?}: {}", String::from_utf8_lossy(&out.stderr));
}
