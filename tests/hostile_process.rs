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
}

impl Yeyak {
    fn start() -> Yeyak {
        let db = format!("yeyak_hostile_{}", uuid::Uuid::new_v4().simple());
        let mut child = Command::new(env!("CARGO_BIN_EXE_yeyak"))
            .env("DATABASE_URL", format!("{PG_BASE}/{db}"))
            .env("YEYAK_BIND", "127.0.0.1:0")
            .env("YEYAK_ADMIN_USER", "admin")
            .env("YEYAK_ADMIN_PASSWORD", ADMIN_PASSWORD)
            .env("YEYAK_API_KEYS", format!("ops:admin:{ADMIN_KEY}"))
            .env("YEYAK_BACKGROUND", "false")
            .env("RUST_LOG", "warn,yeyak=info")
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
                        return Yeyak { child, base: addr, db, log };
                    }
                    seen.push(line);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let _ = child.kill();
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
