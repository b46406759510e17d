//! Hostile bodies against the real `yeyak` binary (SPEC §22), in a test
//! binary of its own: a body that overflowed a worker's stack aborted the
//! whole process, and would abort a test process serving it in-process too.
//! Each door gets the deepest body its size limit allows; every request is
//! answered with a 4xx in the door's format, and `/readyz` stays 200.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const PG_BASE: &str = "postgres://postgres@127.0.0.1:5432";
const ADMIN_PASSWORD: &str = "hostile-admin-password";
const ADMIN_KEY: &str = "hostile-admin-key-000000000001";
/// The CalDAV door's body limit (`dav::BODY_LIMIT`).
const DAV_LIMIT: usize = 256 * 1024;

/// The binary on a database of its own (it creates and migrates it), dropped
/// with the test.
struct Yeyak {
    child: Child,
    base: String,
    db: String,
    log: mpsc::Receiver<String>,
    /// What it wrote before it listened.
    early: Vec<String>,
}

impl Yeyak {
    fn start() -> Yeyak {
        Yeyak::start_with(&[])
    }

    /// The binary with extra environment variables.
    fn start_with(env: &[(&str, &str)]) -> Yeyak {
        let db = format!("yeyak_hostile_{}", uuid::Uuid::new_v4().simple());
        let mut command = Command::new(env!("CARGO_BIN_EXE_yeyak"));
        command.envs(env.iter().copied());
        let mut child = command
            .env("DATABASE_URL", format!("{PG_BASE}/{db}"))
            .env("YEYAK_BIND", "127.0.0.1:0")
            .env("YEYAK_ADMIN_USER", "admin")
            .env("YEYAK_ADMIN_PASSWORD", ADMIN_PASSWORD)
            .env("YEYAK_API_KEYS", format!("ops:admin:{ADMIN_KEY}"))
            .env("YEYAK_BACKGROUND", "false")
            .env("RUST_LOG", env.iter().find(|(k, _)| *k == "RUST_LOG").map_or("warn,yeyak=info", |(_, v)| v))
            .env_remove("YEYAK_READ_DATABASE_URL")
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
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            match log.recv_timeout(Duration::from_millis(200)) {
                Ok(line) => {
                    if let Some(at) = line.find("listening on http://") {
                        let addr = line[at + "listening on ".len()..].split_whitespace().next().unwrap().to_owned();
                        return Yeyak { child, base: addr, db, log, early: seen };
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

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Whether the process still runs, with what it wrote when it does not.
    /// A request without an answer gives a dying process a moment to exit,
    /// so the failure names its cause.
    fn assert_alive(&mut self, after: &str, answered: bool) {
        let deadline = Instant::now() + Duration::from_secs(if answered { 0 } else { 3 });
        let mut exited = self.child.try_wait().unwrap();
        while exited.is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            exited = self.child.try_wait().unwrap();
        }
        if let Some(status) = exited {
            let log: Vec<String> = self.log.try_iter().collect();
            panic!("yeyak exited ({status}) after {after}:\n{}", log.join("\n"));
        }
    }
}

impl Drop for Yeyak {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-qc",
                &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.db),
            ])
            .output();
    }
}

/// `<a>` nested as deep as `limit` bytes allow.
fn deep_xml(limit: usize) -> String {
    let n = (limit - 64) / "<a></a>".len();
    format!("{}{}", "<a>".repeat(n), "</a>".repeat(n))
}

/// A `VCALENDAR` with components nested as deep as `limit` bytes allow.
fn deep_ics(limit: usize) -> String {
    let frame = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n";
    let n = (limit - frame.len() - 64) / "BEGIN:X\r\nEND:X\r\n".len();
    format!("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n{}{}END:VCALENDAR\r\n", "BEGIN:X\r\n".repeat(n), "END:X\r\n".repeat(n))
}

/// JSON arrays nested as deep as `limit` bytes allow.
fn deep_json(limit: usize) -> String {
    let n = (limit - 64) / 2;
    format!("{}{}", "[".repeat(n), "]".repeat(n))
}

#[tokio::test]
async fn the_deepest_body_each_door_allows_is_refused_and_the_server_serves_on() {
    let mut yeyak = Yeyak::start();
    let http = reqwest::Client::new();
    let xml = deep_xml(DAV_LIMIT);
    let ics = deep_ics(DAV_LIMIT);
    let bookings = "/dav/calendars/admin/bookings/";
    let cases: Vec<(&str, String, &str, String)> = vec![
        ("PROPFIND", bookings.to_owned(), "application/xml", xml.clone()),
        ("REPORT", bookings.to_owned(), "application/xml", xml.clone()),
        ("PROPPATCH", bookings.to_owned(), "application/xml", xml.clone()),
        ("PUT", format!("{bookings}deep.ics"), "text/calendar", ics.clone()),
        ("POST", "/dav/calendars/admin/outbox/".to_owned(), "text/calendar", ics.clone()),
    ];
    for (method, path, content_type, body) in cases {
        assert!(body.len() <= DAV_LIMIT, "{method} {path}: {} bytes", body.len());
        let what = format!("{method} {path} ({} bytes of {content_type})", body.len());
        let res = http
            .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), yeyak.url(&path))
            .basic_auth("admin", Some(ADMIN_PASSWORD))
            .header("Content-Type", content_type)
            .header("Depth", "1")
            .body(body)
            .send()
            .await;
        yeyak.assert_alive(&what, res.is_ok());
        let res = res.unwrap_or_else(|e| panic!("{what}: no answer: {e}"));
        let status = res.status();
        let text = res.text().await.unwrap();
        assert_eq!(status, reqwest::StatusCode::BAD_REQUEST, "{what}: {text}");
        assert!(text.contains("error"), "{what}: a DAV:error body: {text}");
        let ready = http.get(yeyak.url("/readyz")).send().await.unwrap().status();
        assert_eq!(ready, reqwest::StatusCode::OK, "/readyz after {what}");
    }
    // The JSON door: serde_json's own recursion limit refuses deep nesting.
    let res = http
        .post(yeyak.url("/api/bookings"))
        .bearer_auth(ADMIN_KEY)
        .header("Idempotency-Key", "deep-json")
        .header("Content-Type", "application/json")
        .body(deep_json(64 * 1024))
        .send()
        .await;
    yeyak.assert_alive("deep JSON", res.is_ok());
    let res = res.expect("an answer to deep JSON");
    assert!(res.status().is_client_error(), "deep JSON: {}", res.status());
    assert_eq!(http.get(yeyak.url("/readyz")).send().await.unwrap().status(), reqwest::StatusCode::OK);
}

/// Every line the process wrote so far (waiting a moment for the last).
fn drain_log(yeyak: &Yeyak) -> Vec<String> {
    let mut lines = yeyak.early.clone();
    while let Ok(line) = yeyak.log.recv_timeout(Duration::from_millis(300)) {
        lines.push(line);
    }
    lines
}

/// How `tokio_postgres` writes a parameter at `debug`: its bytes as a list.
fn as_byte_list(secret: &str) -> String {
    let bytes: Vec<String> = secret.bytes().map(|b| b.to_string()).collect();
    bytes.join(", ")
}

#[tokio::test]
async fn at_trace_level_no_secret_and_no_colour_code_reaches_the_log() {
    let yeyak = Yeyak::start_with(&[("RUST_LOG", "trace")]);
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    // A password sign-in, its session cookie, an API key, CalDAV Basic.
    let login = http.get(yeyak.url("/login")).send().await.unwrap();
    let csrf_cookie = login.cookies().find(|c| c.name() == "yeyak_csrf").unwrap().value().to_owned();
    let html = login.text().await.unwrap();
    let token = html.split("name=\"csrf_token\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    let signed_in = http
        .post(yeyak.url("/login"))
        .header("Cookie", format!("yeyak_csrf={csrf_cookie}"))
        .form(&[("username", "admin"), ("password", ADMIN_PASSWORD), ("csrf_token", &token)])
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), reqwest::StatusCode::SEE_OTHER);
    let session = signed_in.cookies().find(|c| c.name() == "yeyak_session").unwrap().value().to_owned();
    let day = http.get(yeyak.url("/")).header("Cookie", format!("yeyak_session={session}")).send().await.unwrap();
    assert_eq!(day.status(), reqwest::StatusCode::OK);
    let api = http.get(yeyak.url("/api/rooms")).bearer_auth(ADMIN_KEY).send().await.unwrap();
    assert_eq!(api.status(), reqwest::StatusCode::OK);
    let dav = http
        .request(reqwest::Method::from_bytes(b"PROPFIND").unwrap(), yeyak.url("/dav/calendars/admin/bookings/"))
        .basic_auth("admin", Some(ADMIN_PASSWORD))
        .header("Depth", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(dav.status(), reqwest::StatusCode::MULTI_STATUS);
    let log = drain_log(&yeyak);
    assert!(log.len() > 20, "trace logging is on: {log:?}");
    // The stored password hash went to PostgreSQL as a parameter (before:
    // logged as a byte list at debug, like an ID token).
    let mut secrets = vec![ADMIN_PASSWORD, ADMIN_KEY, &session, &csrf_cookie, &token, "$argon2id$"]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<String>>();
    secrets.extend(secrets.clone().iter().map(|s| as_byte_list(s)));
    for secret in &secrets {
        let leaked: Vec<&String> = log.iter().filter(|l| l.contains(secret.as_str())).collect();
        assert!(leaked.is_empty(), "{secret} in the log: {:?}", &leaked[..leaked.len().min(2)]);
    }
    let coloured: Vec<&String> = log.iter().filter(|l| l.contains('\u{1b}')).collect();
    assert!(coloured.is_empty(), "ANSI codes written into a pipe: {:?}", &coloured[..coloured.len().min(3)]);
}

#[test]
fn yeyak_log_unsafe_says_so_at_start() {
    let yeyak = Yeyak::start_with(&[("YEYAK_LOG_UNSAFE", "true")]);
    let log = drain_log(&yeyak);
    assert!(log.iter().any(|l| l.contains("WARN") && l.contains("YEYAK_LOG_UNSAFE")), "{log:?}");
}
