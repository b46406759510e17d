//! The embedded default (SPEC §14) in a test binary of its own: the real
//! `yeyak` binary with `DATABASE_URL=embedded` on a fresh data directory,
//! stopped with SIGTERM and SIGKILL, its postmaster killed under it. Every
//! cluster lives in a directory of its own under /tmp (reachable by the
//! `postgres` user that runs it when the tests run as root), and a guard kills
//! whatever still runs there when a test ends, passed or failed.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::RunQueryDsl;
use serde_json::{json, Value};
use yeyak::db::embedded::{Binaries, EmbeddedCluster, EmbeddedError};
use yeyak::db::DbError;

/// A private directory for one test's cluster, emptied of processes and files on drop.
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let root = std::env::temp_dir().join(format!("yeyak-embedded-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&root).unwrap();
        Scratch { root }
    }

    fn data_dir(&self) -> PathBuf {
        self.root.join("pg")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for pid in processes_in(&self.data_dir()) {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Processes working in `dir`: the postmaster and every server process chdir there.
fn processes_in(dir: &Path) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).map(|cwd| cwd == dir).unwrap_or(false))
        .collect()
}

fn postmaster_pid(dir: &Path) -> Option<u32> {
    std::fs::read_to_string(dir.join("postmaster.pid")).ok()?.lines().next()?.trim().parse().ok()
}

/// The `yeyak` binary serving on a free port from the embedded cluster.
struct Yeyak {
    child: Child,
    base: String,
    log: mpsc::Receiver<String>,
}

impl Yeyak {
    fn start(data_dir: &Path) -> Yeyak {
        let mut command = Command::new(env!("CARGO_BIN_EXE_yeyak"));
        command.env("DATABASE_URL", "embedded");
        Yeyak::spawn(command, data_dir).0
    }

    /// The binary with `DATABASE_URL` unset, in a network namespace of its
    /// own where nothing answers at the default address 127.0.0.1:5432;
    /// returns it with the log lines it wrote before it listened.
    fn start_unset_with_nothing_at_the_default_address(data_dir: &Path) -> (Yeyak, Vec<String>) {
        let mut command = Command::new("unshare");
        command
            .args(["--net", "--", "sh", "-c", "ip link set lo up && exec \"$0\"", env!("CARGO_BIN_EXE_yeyak")])
            .env_remove("DATABASE_URL");
        Yeyak::spawn(command, data_dir)
    }

    fn spawn(mut command: Command, data_dir: &Path) -> (Yeyak, Vec<String>) {
        let mut child = command
            .env("YEYAK_DATA_DIR", data_dir)
            .env("YEYAK_BIND", "127.0.0.1:0")
            .env("NO_COLOR", "1")
            .env_remove("YEYAK_READ_DATABASE_URL")
            .env_remove("REDIS_URL")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("yeyak starts");
        let (tx, log) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(90);
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            match log.recv_timeout(Duration::from_millis(200)) {
                Ok(line) => {
                    if let Some(at) = line.find("listening on http://") {
                        let addr = line[at + "listening on ".len()..].split_whitespace().next().unwrap().to_owned();
                        return (Yeyak { child, base: addr, log }, seen);
                    }
                    seen.push(line);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("yeyak did not start:\n{}", seen.join("\n"));
    }

    fn signal(&self, signal: &str) {
        assert!(Command::new("kill").args([signal, &self.child.id().to_string()]).status().unwrap().success());
    }

    /// Sends SIGTERM and waits for a clean exit.
    fn terminate(mut self) {
        self.signal("-TERM");
        let status = wait_exit(&mut self.child, Duration::from_secs(60));
        let rest: Vec<String> = self.log.try_iter().collect();
        assert!(status.success(), "yeyak exited with {status}:\n{}", rest.join("\n"));
    }

    fn kill(mut self) {
        self.signal("-KILL");
        wait_exit(&mut self.child, Duration::from_secs(10));
    }
}

impl Drop for Yeyak {
    /// A failed test must not leave the server running (the scratch guard then stops its cluster).
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "process {} did not exit", child.id());
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn day() -> chrono::NaiveDate {
    (chrono::Utc::now() + chrono::Duration::days(3)).date_naive()
}

async fn book(base: &str, key: &str, hour: u32) -> (u16, Value) {
    let res = reqwest::Client::new()
        .post(format!("{base}/api/bookings"))
        .bearer_auth("yeyak-dev-key")
        .header("X-Reservation-Owner", "alice")
        .header("Idempotency-Key", key)
        .json(&json!({"title": key, "rooms": ["A"],
            "startsAt": format!("{}T{hour:02}:00:00Z", day()), "endsAt": format!("{}T{hour:02}:30:00Z", day())}))
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.json().await.unwrap_or(Value::Null))
}

async fn titles(base: &str) -> Vec<String> {
    let res = reqwest::Client::new()
        .get(format!("{base}/api/bookings?date={}", day()))
        .bearer_auth("yeyak-dev-key")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    let mut titles: Vec<String> =
        body["bookings"].as_array().unwrap().iter().map(|b| b["title"].as_str().unwrap().to_owned()).collect();
    titles.sort();
    titles
}

#[tokio::test]
async fn a_fresh_directory_serves_keeps_its_data_across_restarts_and_sigterm_leaves_no_postgres() {
    let scratch = Scratch::new();
    let data = scratch.data_dir();

    let first = Yeyak::start(&data);
    assert_eq!(book(&first.base, "first-run", 9).await.0, 201);
    first.terminate();
    assert_eq!(processes_in(&data), Vec::<u32>::new(), "SIGTERM stops the cluster too");
    assert!(!data.join("postmaster.pid").exists());

    let second = Yeyak::start(&data);
    assert_eq!(titles(&second.base).await, ["first-run"]);
    assert_eq!(book(&second.base, "second-run", 10).await.0, 201);
    second.terminate();
    assert_eq!(processes_in(&data), Vec::<u32>::new());
}

#[tokio::test]
async fn after_sigkill_a_restart_adopts_the_orphaned_cluster_or_recovers_a_dead_one() {
    let scratch = Scratch::new();
    let data = scratch.data_dir();

    let first = Yeyak::start(&data);
    assert_eq!(book(&first.base, "before-kill", 9).await.0, 201);
    first.kill();
    // The cluster outlives a killed yeyak; the next start adopts it.
    let orphan = postmaster_pid(&data).expect("the cluster keeps running");
    assert!(processes_in(&data).contains(&orphan));
    let adopter = Yeyak::start(&data);
    assert_eq!(postmaster_pid(&data), Some(orphan), "adopted, not restarted");
    assert_eq!(titles(&adopter.base).await, ["before-kill"]);

    // Now the postmaster dies uncleanly too: a stale postmaster.pid stays.
    adopter.kill();
    assert!(Command::new("kill").args(["-KILL", &orphan.to_string()]).status().unwrap().success());
    // Gone for good, not just dying (a zombie still answers `kill -0`).
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{orphan}")).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(postmaster_pid(&data), Some(orphan), "the stale lock file is left behind");

    let recovered = Yeyak::start(&data);
    assert_ne!(postmaster_pid(&data), Some(orphan));
    assert_eq!(titles(&recovered.base).await, ["before-kill"]);
    assert_eq!(book(&recovered.base, "after-recovery", 10).await.0, 201);
    recovered.terminate();
    assert_eq!(processes_in(&data), Vec::<u32>::new());
}

#[tokio::test]
async fn a_second_process_shares_the_cluster_and_only_its_owner_stops_it() {
    let scratch = Scratch::new();
    let data = scratch.data_dir();

    let owner = Yeyak::start(&data);
    let guest = Yeyak::start(&data);
    assert_eq!(book(&guest.base, "from-the-guest", 9).await.0, 201);
    let postmaster = postmaster_pid(&data).unwrap();
    guest.terminate();
    assert!(processes_in(&data).contains(&postmaster), "a guest leaves the cluster running");
    assert_eq!(titles(&owner.base).await, ["from-the-guest"]);
    owner.terminate();
    assert_eq!(processes_in(&data), Vec::<u32>::new(), "its owner stops it");
}

/// `DATABASE_URL` unset: the default server when something answers at its
/// address, else the embedded cluster; an explicit URL is never replaced.
#[tokio::test]
async fn the_embedded_cluster_stands_in_only_for_an_unset_url_with_nothing_at_its_address() {
    use yeyak::config::DEFAULT_DATABASE_URL;
    use yeyak::db::embedded::resolve_with_default_at;
    let scratch = Scratch::new();
    let data = scratch.data_dir();
    let listening = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let answering = listening.local_addr().unwrap().to_string();
    let silent = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().to_string()
    };

    let (url, cluster) = resolve_with_default_at(DEFAULT_DATABASE_URL, true, &data, &answering).await.unwrap();
    assert_eq!((url.as_str(), cluster.is_none()), (DEFAULT_DATABASE_URL, true));
    let explicit = "postgres://postgres@127.0.0.1:1/yeyak";
    let (url, cluster) = resolve_with_default_at(explicit, false, &data, &silent).await.unwrap();
    assert_eq!((url.as_str(), cluster.is_none()), (explicit, true));
    assert!(!data.exists(), "nothing was created");

    let (url, cluster) = resolve_with_default_at(DEFAULT_DATABASE_URL, true, &data, &silent).await.unwrap();
    let cluster = cluster.expect("the embedded cluster stands in");
    assert_eq!(url, cluster.database_url("yeyak"));
    yeyak::db::bootstrap::prepare(&url).await.expect("and serves");
    tokio::task::spawn_blocking(move || cluster.stop()).await.unwrap().unwrap();
    assert_eq!(processes_in(&data), Vec::<u32>::new());
}

/// The same, end to end: the real binary started with no `DATABASE_URL` where
/// nothing answers at 127.0.0.1:5432 starts its private cluster, serves from
/// it, and SIGTERM stops both.
#[tokio::test]
async fn the_binary_with_database_url_unset_serves_from_the_embedded_cluster_when_nothing_answers() {
    let scratch = Scratch::new();
    let data = scratch.data_dir();
    let (server, log) = Yeyak::start_unset_with_nothing_at_the_default_address(&data);
    assert!(
        log.iter().any(|line| line.contains("DATABASE_URL is unset: using the embedded PostgreSQL")),
        "the log says why it stands in:\n{}",
        log.join("\n")
    );
    let postmaster = postmaster_pid(&data).expect("the cluster runs in YEYAK_DATA_DIR");
    assert!(processes_in(&data).contains(&postmaster));

    // Inside the server's own network namespace: ready (its database answers),
    // and a booking lands.
    let inside = |args: &[&str]| {
        let out = Command::new("nsenter")
            .args(["-t", &server.child.id().to_string(), "-n", "curl", "-s", "-w", "\n%{http_code}"])
            .args(args)
            .output()
            .expect("nsenter and curl run");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let ready = inside(&[&format!("{}/readyz", server.base)]);
    assert!(ready.ends_with("\n200") && ready.contains("\"postgres\":\"ok\""), "{ready}");
    let body = json!({"title": "unset-url", "rooms": ["A"],
        "startsAt": format!("{}T09:00:00Z", day()), "endsAt": format!("{}T09:30:00Z", day())})
    .to_string();
    let booked = inside(&[
        "-H",
        "Authorization: Bearer yeyak-dev-key",
        "-H",
        "X-Reservation-Owner: alice",
        "-H",
        "Idempotency-Key: unset-url",
        "-H",
        "Content-Type: application/json",
        "-d",
        &body,
        &format!("{}/api/bookings", server.base),
    ]);
    assert!(booked.ends_with("\n201"), "{booked}");

    server.terminate();
    assert_eq!(processes_in(&data), Vec::<u32>::new(), "SIGTERM stops the cluster it started");
}

#[test]
fn without_server_binaries_the_error_says_what_to_install() {
    let empty = Scratch::new();
    let err = Binaries::locate_in(std::slice::from_ref(&empty.root)).unwrap_err();
    assert!(matches!(err, EmbeddedError::MissingBinaries));
    let text = err.to_string();
    for hint in ["initdb", "pg_ctl", "apt-get install postgresql", "DATABASE_URL", "PATH", "/usr/lib/postgresql"] {
        assert!(text.contains(hint), "{hint:?} missing from: {text}");
    }
}

#[test]
fn a_data_directory_whose_socket_path_is_too_long_is_refused() {
    let scratch = Scratch::new();
    let deep = scratch.root.join("d".repeat(100)).join("pg");
    let err = EmbeddedCluster::start(&deep, Binaries::locate().unwrap()).unwrap_err();
    assert!(err.to_string().contains("Unix socket allows"), "{err}");
}

/// What the server sends when a session ends under a query, with our
/// connection settings (`lc_messages = 'C'`), is classified as an outage.
#[tokio::test]
async fn session_ending_errors_from_the_server_are_database_unavailable() {
    let scratch = Scratch::new();
    let data = scratch.data_dir();
    let cluster =
        tokio::task::spawn_blocking(move || EmbeddedCluster::start(&data, Binaries::locate().unwrap()).unwrap())
            .await
            .unwrap();
    let url = cluster.database_url("postgres");

    // 57P01 "administrator command": pg_terminate_backend under a running query.
    let mut victim = yeyak::db::establish(&url).await.unwrap();
    let mut admin = yeyak::db::establish(&url).await.unwrap();
    #[derive(diesel::QueryableByName)]
    struct Pid {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        pid: i32,
    }
    let pid: Pid = diesel::sql_query("SELECT pg_backend_pid() AS pid").get_result(&mut victim).await.unwrap();
    let sleeping = tokio::spawn(async move { diesel::sql_query("SELECT pg_sleep(30)").execute(&mut victim).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    diesel::sql_query(format!("SELECT pg_terminate_backend({})", pid.pid)).execute(&mut admin).await.unwrap();
    let err = sleeping.await.unwrap().unwrap_err();
    assert!(err.to_string().starts_with("terminating connection due to administrator command"), "{err}");
    assert!(matches!(DbError::from(err), DbError::Unavailable(_)));

    // 57P01 "unexpected postmaster exit": what idle sessions of a killed
    // primary send. Read with tokio-postgres, which keeps the SQLSTATE.
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    let ended = tokio::spawn(connection);
    client.batch_execute("SET lc_messages TO 'C'").await.unwrap();
    let postmaster = postmaster_pid(cluster.data_dir()).unwrap();
    assert!(Command::new("kill").args(["-KILL", &postmaster.to_string()]).status().unwrap().success());
    let fatal = tokio::time::timeout(Duration::from_secs(10), ended).await.unwrap().unwrap().unwrap_err();
    let db = fatal.as_db_error().expect("the server said why");
    assert_eq!(db.code(), &tokio_postgres::error::SqlState::ADMIN_SHUTDOWN);
    assert_eq!(db.message(), "terminating connection due to unexpected postmaster exit");
    // diesel-async 0.9 hands that on as `Unknown` with the message only.
    let as_diesel = DieselError::DatabaseError(DatabaseErrorKind::Unknown, Box::new(db.message().to_owned()));
    assert!(matches!(DbError::from(as_diesel), DbError::Unavailable(_)));
    drop(cluster);
}
