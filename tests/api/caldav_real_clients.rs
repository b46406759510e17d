//! Real calendar clients nobody here wrote (SPEC §23 "Real clients"):
//! `vdirsyncer` syncs a person's `bookings/` collection and a room's with
//! folders of `.ics` files, both ways, step by step; `caldav-server-tester`
//! grades a person's `bookings/` collection and Radicale (started here, on
//! this machine) and every feature Radicale has `full` must be `full` for
//! yeyak too, except creating, deleting or configuring calendars and
//! `VJOURNAL`. Both tools come from PyPI into `target/caldav-tools-venv`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use reqwest::StatusCode;
use serde_json::Value;

use crate::caldav::Dav;
use crate::helpers::*;

/// The tools and their versions (`.ci/test` installs the same).
const TOOLS: &[(&str, &str)] = &[("vdirsyncer", "0.21.0"), ("caldav-server-tester", "1.7.0"), ("radicale", "3.9.0")];

static INSTALLING: Mutex<()> = Mutex::new(());

/// `target/caldav-tools-venv/bin`, with [`TOOLS`] installed (created on
/// first use, as `.ci/test` does): an environment of its own, because
/// `caldav-server-tester` brings `urllib3-future`, which replaces urllib3.
fn tools() -> PathBuf {
    let _one = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/caldav-tools-venv");
    let bin = venv.join("bin");
    let check: String =
        TOOLS.iter().map(|(name, version)| format!("assert m.version({name:?}) == {version:?}\n")).collect::<String>();
    let ready = || {
        Command::new(bin.join("python"))
            .args(["-c", &format!("import importlib.metadata as m\n{check}")])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ready() {
        let made = Command::new("python3").args(["-m", "venv"]).arg(&venv).status().expect("python3 runs");
        assert!(made.success(), "python3 -m venv target/caldav-tools-venv");
        let pins: Vec<String> = TOOLS.iter().map(|(n, v)| format!("{n}=={v}")).collect();
        let pip = Command::new(bin.join("pip")).args(["install", "-q"]).args(&pins).status().unwrap();
        assert!(pip.success(), "pip install {pins:?} (into target/caldav-tools-venv)");
        assert!(ready(), "{pins:?} importable from target/caldav-tools-venv");
    }
    bin
}

/// A fresh folder under the system's temporary one, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("yeyak-{what}-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs a command off the runtime's threads (the app serves it meanwhile):
/// whether it succeeded, and its stdout and stderr.
async fn run(mut cmd: Command) -> (bool, String, String) {
    let out = tokio::task::spawn_blocking(move || cmd.output()).await.unwrap().expect("the tool runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

// ---------------------------------------------------------------- vdirsyncer

/// `vdirsyncer` with two pairs: the person's `bookings/` and the folder
/// `kim/`, room A's calendar (read-only) and the folder `room-a/`.
struct Vdirsyncer {
    bin: PathBuf,
    dir: Scratch,
}

impl Vdirsyncer {
    fn new(bin: PathBuf, app: &TestApp, dav: &Dav<'_>) -> Vdirsyncer {
        let dir = Scratch::new("vdirsyncer");
        let d = dir.0.display();
        for sub in ["kim", "room-a", "status"] {
            std::fs::create_dir_all(dir.0.join(sub)).unwrap();
        }
        let config = format!(
            r#"[general]
status_path = "{d}/status/"

[pair kim]
a = "kim_local"
b = "kim_remote"
collections = null

[storage kim_local]
type = "filesystem"
path = "{d}/kim/"
fileext = ".ics"

[storage kim_remote]
type = "caldav"
url = "{kim_url}"
username = "{user}"
password = "{password}"

[pair room_a]
a = "room_a_local"
b = "room_a_remote"
collections = null

[storage room_a_local]
type = "filesystem"
path = "{d}/room-a/"
fileext = ".ics"

[storage room_a_remote]
type = "caldav"
url = "{room_url}"
username = "{user}"
password = "{password}"
read_only = true
"#,
            kim_url = app.url(&format!("/dav/calendars/{}/bookings/", dav.user)),
            room_url = app.url("/dav/calendars/rooms/A/"),
            user = dav.user,
            password = dav.password,
        );
        std::fs::write(dir.0.join("config"), config).unwrap();
        Vdirsyncer { bin, dir }
    }

    /// `vdirsyncer discover` or `sync`; panics unless it succeeds. Returns
    /// the lines that report a change (copying, updating, deleting, …):
    /// everything but "Syncing <pair>".
    async fn run(&self, what: &str) -> Vec<String> {
        let mut cmd = Command::new(self.bin.join("vdirsyncer"));
        cmd.arg("-c").arg(self.dir.0.join("config")).arg(what).env("HOME", &self.dir.0);
        let (ok, out, err) = run(cmd).await;
        assert!(ok, "vdirsyncer {what} failed:\n{out}\n{err}");
        if what != "sync" {
            return vec![];
        }
        format!("{out}\n{err}")
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("Syncing "))
            .map(str::to_owned)
            .collect()
    }

    async fn sync(&self) -> Vec<String> {
        self.run("sync").await
    }

    fn folder(&self, which: &str) -> PathBuf {
        self.dir.0.join(which)
    }

    /// Every file of a local folder: name → bytes.
    fn files(&self, which: &str) -> BTreeMap<String, String> {
        std::fs::read_dir(self.folder(which))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "ics"))
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
            .collect()
    }

    /// The one local file of `which` that holds `needle` (unfolded).
    fn file_with(&self, which: &str, needle: &str) -> Option<(String, String)> {
        let found: Vec<_> = self.files(which).into_iter().filter(|(_, text)| unfold(text).contains(needle)).collect();
        assert!(found.len() <= 1, "{needle} in more than one file of {which}: {found:#?}");
        found.into_iter().next()
    }

    fn write(&self, which: &str, name: &str, ics: &str) {
        std::fs::write(self.folder(which).join(name), ics).unwrap();
    }
}

/// RFC 5545 content lines unfolded (a line break and one space or tab join).
fn unfold(text: &str) -> String {
    text.replace("\r\n ", "").replace("\r\n\t", "").replace("\n ", "").replace("\n\t", "")
}

/// The unfolded `ATTENDEE` line of `address` in `ics`.
fn attendee(ics: &str, address: &str) -> Option<String> {
    unfold(ics).lines().find(|l| l.starts_with("ATTENDEE") && l.to_lowercase().ends_with(address)).map(str::to_owned)
}

/// `YYYYMMDDTHHMMSSZ` of test day `day` at `hh:mm` UTC.
fn utc(day: i64, hh: u32, mm: u32) -> String {
    chrono::DateTime::parse_from_rfc3339(&at(day, hh, mm)).unwrap().format("%Y%m%dT%H%M%SZ").to_string()
}

fn event(uid: &str, summary: &str, start: &str, end: &str, extra: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//yeyak tests//vdirsyncer//EN\r\nBEGIN:VEVENT\r\nUID:{uid}\r\n\
         DTSTAMP:20300101T000000Z\r\nDTSTART:{start}\r\nDTEND:{end}\r\nSUMMARY:{summary}\r\n{extra}\
         END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

const ROOM_A: &str = "ATTENDEE;CUTYPE=ROOM;ROLE=REQ-PARTICIPANT:mailto:room-a@yeyak.local\r\n";

/// Every booking from yesterday to a month on, cancelled ones too.
async fn bookings(app: &TestApp) -> Vec<Value> {
    let q = |t: String| t.replace('+', "%2B");
    let path = format!("/api/bookings?from={}&to={}&includeCancelled=true", q(at(-1, 0, 0)), q(at(30, 0, 0)));
    let (status, body) = app.get_json(&path, ADMIN).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["bookings"].as_array().unwrap().clone()
}

async fn bookings_titled(app: &TestApp, title: &str) -> Vec<Value> {
    bookings(app).await.into_iter().filter(|b| b["title"] == title).collect()
}

fn instant(v: &Value) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("a time: {v}"))).unwrap()
}

/// The members of a collection: href → ETag (PROPFIND, Depth 1).
async fn etags(dav: &Dav<'_>, collection: &str) -> BTreeMap<String, String> {
    let ask = r#"<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>"#;
    let res = dav.send("PROPFIND", collection, &[("Depth", "1")], ask).await;
    assert_eq!(res.status, StatusCode::MULTI_STATUS, "{}", res.body);
    res.body
        .split("<D:response>")
        .skip(1)
        .filter_map(|r| {
            let href = r.split("<D:href>").nth(1)?.split("</D:href>").next()?;
            let etag = r.split("<D:getetag>").nth(1)?.split("</D:getetag>").next()?;
            Some((href.to_owned(), etag.to_owned()))
        })
        .collect()
}

/// The stored member of `collection` that holds `needle`: (href, body).
async fn member_with(dav: &Dav<'_>, collection: &str, needle: &str) -> Option<(String, String)> {
    for href in etags(dav, collection).await.into_keys().filter(|h| h.ends_with(".ics")) {
        let got = dav.send("GET", &href, &[], "").await;
        assert_eq!(got.status, StatusCode::OK, "GET {href}: {}", got.body);
        if unfold(&got.body).contains(needle) {
            return Some((href, got.body));
        }
    }
    None
}

/// Local folders and both collections, to compare before and after a sync.
async fn state(sync: &Vdirsyncer, dav: &Dav<'_>) -> String {
    format!(
        "{:#?}\n{:#?}\n{:#?}\n{:#?}",
        sync.files("kim"),
        sync.files("room-a"),
        etags(dav, "/dav/calendars/kim/bookings/").await,
        etags(dav, "/dav/calendars/rooms/A/").await
    )
}

/// The sync after one that sent a change: the pairs run side by side, so
/// room A's folder may only now catch up, and the person's may fetch the
/// room's answer; nothing goes up again.
async fn catch_up(sync: &Vdirsyncer) -> Vec<String> {
    let changes = sync.sync().await;
    assert!(changes.iter().all(|l| !l.contains("_remote")), "a sync sent changes again: {changes:#?}");
    changes
}

/// Two syncs in a row change nothing on either side: vdirsyncer reports no
/// copy, update or deletion, the local files keep their bytes and the
/// server's members their ETags.
async fn settled(sync: &Vdirsyncer, dav: &Dav<'_>, when: &str) {
    for round in 1..=2 {
        let before = state(sync, dav).await;
        let changes = sync.sync().await;
        assert!(changes.is_empty(), "{when}: sync {round} in a row still changed things: {changes:#?}");
        assert_eq!(state(sync, dav).await, before, "{when}: sync {round} in a row changed files or ETags");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vdirsyncer_syncs_a_persons_bookings_and_a_rooms_calendar_both_ways() {
    let bin = tokio::task::spawn_blocking(tools).await.unwrap();
    let app = TestApp::spawn().await;
    let page = crate::app_passwords::person(&app, "kim").await;
    let (_, password) = crate::app_passwords::make_app_password(&page, "vdirsyncer").await;
    let dav = Dav { app: &app, user: "kim".into(), password };
    let sync = Vdirsyncer::new(bin, &app, &dav);

    // A booking made on a page arrives on the first sync, in both folders.
    let tomorrow = crate::web::tomorrow(&app);
    let booked = page.book(&tomorrow, "페이지 예약", "10:00", "11:00", &["A"]).await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    sync.run("discover").await;
    let first = sync.sync().await;
    assert!(sync.file_with("kim", "SUMMARY:페이지 예약").is_some(), "{first:#?}\n{:#?}", sync.files("kim"));
    let (room_file, room_copy) = sync
        .file_with("room-a", "페이지 예약")
        .unwrap_or_else(|| panic!("room A's folder: {:#?}", sync.files("room-a")));
    settled(&sync, &dav, "after the first download").await;

    // A new event inviting a room and a colleague, with a description:
    // uploaded, it books the room; the next sync brings the room's answer
    // and keeps everything else.
    let team = event(
        "team-sync@vdirsyncer.test",
        "Team sync",
        &utc(2, 5, 0),
        &utc(2, 6, 0),
        &format!(
            "DESCRIPTION:Bring the roadmap\r\nORGANIZER:mailto:kim@example.com\r\n{ROOM_A}\
             ATTENDEE;CN=Lee;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:lee@example.com\r\n"
        ),
    );
    sync.write("kim", "team-sync.ics", &team);
    let up = sync.sync().await;
    assert!(up.iter().any(|l| l.contains("uploading") && l.contains("team-sync@vdirsyncer.test")), "{up:#?}");
    let made = bookings_titled(&app, "Team sync").await;
    assert_eq!(made.len(), 1, "one booking of room A: {made:#?}");
    assert_eq!(made[0]["status"], "CONFIRMED", "{made:#?}");
    assert_eq!(made[0]["rooms"], serde_json::json!(["A"]), "{made:#?}");
    assert_eq!(made[0]["organizer"], "kim", "{made:#?}");
    assert_eq!(instant(&made[0]["startsAt"]), instant(&Value::from(at(2, 5, 0))));
    let answered = catch_up(&sync).await;
    let (_, local) = sync.file_with("kim", "UID:team-sync@vdirsyncer.test").expect("the event is still local");
    let room = attendee(&local, "mailto:room-a@yeyak.local").unwrap_or_else(|| panic!("{local}"));
    assert!(room.contains("PARTSTAT=ACCEPTED"), "the room's answer came down ({answered:#?}): {local}");
    assert!(unfold(&local).contains("DESCRIPTION:Bring the roadmap"), "{local}");
    assert!(attendee(&local, "mailto:lee@example.com").is_some_and(|l| l.contains("CN=Lee")), "{local}");
    assert!(sync.file_with("room-a", "Team sync").is_some(), "room A's calendar shows it: {:#?}", sync.files("room-a"));
    settled(&sync, &dav, "after booking by invitation").await;

    // A refused invitation stays on both sides, the room DECLINED.
    let taken =
        post(&app, "/api/bookings", TENANT_ONE, "o", "taken", booking("먼저", &["A"], &at(3, 5, 0), &at(3, 6, 0)))
            .await;
    assert_eq!(taken.0, StatusCode::CREATED, "{}", taken.1);
    let refused = event("refused@vdirsyncer.test", "Refused", &utc(3, 5, 0), &utc(3, 6, 0), ROOM_A);
    sync.write("kim", "refused.ics", &refused);
    let up = sync.sync().await;
    assert!(up.iter().any(|l| l.contains("uploading") && l.contains("refused@vdirsyncer.test")), "{up:#?}");
    catch_up(&sync).await;
    let (_, local) = sync.file_with("kim", "UID:refused@vdirsyncer.test").expect("a refused event stays local");
    let room = attendee(&local, "mailto:room-a@yeyak.local").unwrap_or_else(|| panic!("{local}"));
    assert!(room.contains("PARTSTAT=DECLINED") && room.contains("X-YEYAK-CODE=ROOM_TIME_TAKEN"), "{local}");
    let (_, stored) = member_with(&dav, "/dav/calendars/kim/bookings/", "UID:refused@vdirsyncer.test")
        .await
        .expect("a refused event stays on the server");
    assert!(attendee(&stored, "mailto:room-a@yeyak.local").is_some_and(|l| l.contains("PARTSTAT=DECLINED")));
    assert!(bookings_titled(&app, "Refused").await.is_empty(), "nothing booked");
    settled(&sync, &dav, "after a refused invitation").await;

    // An edited time goes up and moves the booking.
    let (name, local) = sync.file_with("kim", "UID:team-sync@vdirsyncer.test").unwrap();
    let moved = local.replace(&utc(2, 5, 0), &utc(2, 7, 0)).replace(&utc(2, 6, 0), &utc(2, 8, 0));
    assert_ne!(moved, local);
    sync.write("kim", &name, &moved);
    let up = sync.sync().await;
    assert!(up.iter().any(|l| l.contains("team-sync@vdirsyncer.test") && l.contains("kim_remote")), "{up:#?}");
    let after = bookings_titled(&app, "Team sync").await;
    assert_eq!(after.len(), 1, "{after:#?}");
    assert_eq!(after[0]["id"], made[0]["id"], "the same booking moved: {after:#?}");
    assert_eq!(instant(&after[0]["startsAt"]), instant(&Value::from(at(2, 7, 0))), "{after:#?}");
    assert_eq!(after[0]["status"], "CONFIRMED");
    catch_up(&sync).await;
    let (_, local) = sync.file_with("kim", "UID:team-sync@vdirsyncer.test").unwrap();
    assert!(unfold(&local).contains("DESCRIPTION:Bring the roadmap"), "{local}");
    settled(&sync, &dav, "after a move").await;

    // To-dos sync both ways and book nothing.
    let todo = format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//yeyak tests//vdirsyncer//EN\r\nBEGIN:VTODO\r\n\
         UID:todo-local@vdirsyncer.test\r\nDTSTAMP:20300101T000000Z\r\nDUE:{}\r\nSUMMARY:Order snacks\r\n\
         STATUS:NEEDS-ACTION\r\nEND:VTODO\r\nEND:VCALENDAR\r\n",
        utc(2, 4, 0)
    );
    sync.write("kim", "todo-local.ics", &todo);
    let server_todo = todo.replace("todo-local@", "todo-server@").replace("Order snacks", "Book the venue");
    let put = dav.put("todo-server.ics", &server_todo, &[]).await;
    assert_eq!(put.status, StatusCode::CREATED, "{}", put.body);
    let both = sync.sync().await;
    catch_up(&sync).await;
    assert!(
        member_with(&dav, "/dav/calendars/kim/bookings/", "UID:todo-local@vdirsyncer.test").await.is_some(),
        "a local to-do went up: {both:#?}"
    );
    assert!(sync.file_with("kim", "UID:todo-server@vdirsyncer.test").is_some(), "a server to-do came down: {both:#?}");
    assert!(
        bookings_titled(&app, "Order snacks").await.is_empty()
            && bookings_titled(&app, "Book the venue").await.is_empty()
    );
    settled(&sync, &dav, "after to-dos").await;

    // A series with an EXDATE keeps its identity: booked without the
    // excluded day, and once its room's answer came down, later syncs
    // change nothing.
    let series = event(
        "standup@vdirsyncer.test",
        "Daily standup",
        &utc(4, 6, 0),
        &utc(4, 7, 0),
        &format!("RRULE:FREQ=DAILY;COUNT=3\r\nEXDATE:{}\r\n{ROOM_A}", utc(5, 6, 0)),
    );
    sync.write("kim", "standup.ics", &series);
    let up = sync.sync().await;
    assert!(up.iter().any(|l| l.contains("uploading") && l.contains("standup@vdirsyncer.test")), "{up:#?}");
    let mut days: Vec<_> = bookings_titled(&app, "Daily standup")
        .await
        .into_iter()
        .filter(|b| b["status"] == "CONFIRMED")
        .map(|b| instant(&b["startsAt"]))
        .collect();
    days.sort();
    let want: Vec<_> = [at(4, 6, 0), at(6, 6, 0)].map(|t| instant(&Value::from(t))).to_vec();
    assert_eq!(days, want, "two occurrences, the excluded day left out");
    catch_up(&sync).await;
    let (_, local) = sync.file_with("kim", "UID:standup@vdirsyncer.test").unwrap();
    assert!(unfold(&local).contains("RRULE:FREQ=DAILY;COUNT=3") && unfold(&local).contains("EXDATE"), "{local}");
    settled(&sync, &dav, "after a series").await;

    // Room A's calendar is read-only here: a local edit stays local
    // (vdirsyncer's `partial_sync = "revert"`) and changes nothing in yeyak.
    let room_before = etags(&dav, "/dav/calendars/rooms/A/").await;
    sync.write("room-a", &room_file, &room_copy.replace("페이지 예약", "고친 제목"));
    let edited = sync.sync().await;
    assert!(edited.iter().all(|l| !l.contains("_remote")), "{edited:#?}");
    assert_eq!(etags(&dav, "/dav/calendars/rooms/A/").await, room_before);
    assert_eq!(bookings_titled(&app, "페이지 예약").await.len(), 1);
    assert!(bookings_titled(&app, "고친 제목").await.is_empty());
    sync.write("room-a", &room_file, &room_copy);
    sync.sync().await;

    // A deleted event cancels its booking and leaves room A's calendar.
    let (name, _) = sync.file_with("kim", "UID:team-sync@vdirsyncer.test").unwrap();
    std::fs::remove_file(sync.folder("kim").join(name)).unwrap();
    let gone = sync.sync().await;
    assert!(gone.iter().any(|l| l.contains("Deleting") && l.contains("team-sync@vdirsyncer.test")), "{gone:#?}");
    let after = bookings_titled(&app, "Team sync").await;
    assert!(after.iter().all(|b| b["status"] == "CANCELLED"), "{after:#?}");
    assert!(member_with(&dav, "/dav/calendars/kim/bookings/", "team-sync@vdirsyncer.test").await.is_none());
    catch_up(&sync).await;
    assert!(sync.file_with("room-a", "Team sync").is_none(), "{:#?}", sync.files("room-a"));
    settled(&sync, &dav, "at the end").await;
    app.assert_consistent().await;
}

// ------------------------------------------------------ caldav-server-tester

/// Radicale on a free port of this machine, with a password file and an
/// empty storage folder; stopped when dropped.
struct Radicale {
    child: std::process::Child,
    url: String,
    dir: Scratch,
}

impl Radicale {
    async fn start(bin: &Path) -> Radicale {
        let dir = Scratch::new("radicale");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let d = dir.0.display();
        std::fs::write(dir.0.join("users"), "tester:tester-secret\n").unwrap();
        std::fs::write(
            dir.0.join("config"),
            format!(
                "[server]\nhosts = 127.0.0.1:{port}\n[auth]\ntype = htpasswd\nhtpasswd_filename = {d}/users\n\
                 htpasswd_encryption = plain\n[storage]\nfilesystem_folder = {d}/collections\n\
                 [rights]\ntype = owner_only\n[logging]\nlevel = warning\n"
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.0.join("log")).unwrap();
        let child = Command::new(bin.join("python"))
            .args(["-m", "radicale", "--config"])
            .arg(dir.0.join("config"))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("radicale starts");
        // Stopped by `drop` from here on, whatever happens.
        let radicale = Radicale { child, url: format!("http://127.0.0.1:{port}/"), dir };
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return radicale;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("radicale did not listen: {}", std::fs::read_to_string(radicale.dir.0.join("log")).unwrap_or_default());
    }
}

impl Drop for Radicale {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `caldav-server-tester` against `url`: every feature it observed, with
/// its `support` (and `behaviour` where it gave one).
async fn features(
    bin: &Path,
    url: &str,
    user: &str,
    password: &str,
    calendar: Option<&str>,
) -> BTreeMap<String, Value> {
    let home = Scratch::new("caldav-server-tester");
    let mut cmd = Command::new(bin.join("caldav-server-tester"));
    cmd.args(["--caldav-url", url, "--caldav-username", user, "--caldav-password", password, "--format", "hints"])
        // No one's caldav configuration file or variables.
        .env("HOME", &home.0)
        .env_remove("CALDAV_URL")
        .env_remove("CALDAV_USERNAME")
        .env_remove("CALDAV_PASSWORD");
    if let Some(name) = calendar {
        cmd.args(["--caldav-calendar", name]);
    }
    let (ok, out, err) = run(cmd).await;
    assert!(ok, "caldav-server-tester {url} failed:\n{out}\n{err}");
    // The report is a Python literal; Python turns it into JSON.
    let literal = &out[out.find('{').expect("a report")..=out.rfind('}').expect("a report")];
    std::fs::write(home.0.join("report"), literal).unwrap();
    let mut to_json = Command::new(bin.join("python"));
    to_json.args(["-c", "import ast, json, sys; print(json.dumps(ast.literal_eval(open(sys.argv[1]).read())))"]);
    to_json.arg(home.0.join("report"));
    let (ok, json, err) = run(to_json).await;
    assert!(ok, "{err}\n{literal}");
    serde_json::from_str(&json).unwrap()
}

fn support(f: Option<&Value>) -> String {
    match f {
        None => "-".into(),
        Some(v) => v["support"].as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()),
    }
}

/// Why a feature is not compared (SPEC §23: creating, deleting or
/// configuring calendars, and `VJOURNAL`), or None.
fn not_compared(feature: &str, yeyak: Option<&Value>) -> Option<&'static str> {
    let about = |prefixes: &[&str]| prefixes.iter().any(|p| feature == *p || feature.starts_with(&format!("{p}.")));
    if about(&[
        "create-calendar",
        "delete-calendar",
        "synchronous-write.create-calendar",
        "synchronous-write.delete-calendar",
    ]) {
        return Some("creating or deleting calendars");
    }
    if about(&["calendar-color", "calendar-order", "synchronous-write.proppatch"]) {
        return Some("configuring calendars");
    }
    if feature.contains("journal") {
        return Some("VJOURNAL");
    }
    // Probes that need a calendar of their own, which the tool could not
    // make: only while the tool says so.
    let behaviour = yeyak.and_then(|v| v["behaviour"].as_str()).unwrap_or("");
    if support(yeyak) == "unknown"
        && ["create-calendar not supported", "creating and deleting calendars", "only one calendar"]
            .iter()
            .any(|why| behaviour.contains(why))
    {
        return Some("needs a calendar the tool creates");
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caldav_server_tester_finds_every_feature_radicale_has_in_a_persons_bookings() {
    let bin = tokio::task::spawn_blocking(tools).await.unwrap();
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    let radicale = Radicale::start(&bin).await;
    let yeyak_url = app.url("/dav/");
    let (theirs, ours) = tokio::join!(
        features(&bin, &radicale.url, "tester", "tester-secret", None),
        features(&bin, &yeyak_url, &dav.user, &dav.password, Some("kim의 회의실 예약")),
    );
    drop(radicale);

    let mut table = format!("{:<52} {:<12} {:<12} {}\n", "feature", "Radicale", "yeyak", "");
    let mut failing = Vec::new();
    let names: std::collections::BTreeSet<&String> = theirs.keys().chain(ours.keys()).collect();
    for name in names {
        let (r, y) = (theirs.get(name), ours.get(name));
        let note = match not_compared(name, y) {
            Some(why) => format!("(not compared: {why})"),
            None if support(r) == "full" && support(y) != "full" => {
                failing.push(format!("{name}: Radicale full, yeyak {}", y.map(Value::to_string).unwrap_or("-".into())));
                "<< FAILS".into()
            }
            None => String::new(),
        };
        table.push_str(&format!("{name:<52} {:<12} {:<12} {note}\n", support(r), support(y)));
    }
    eprintln!("caldav-server-tester, Radicale 3.9.0 beside yeyak's bookings/:\n{table}");
    assert!(
        failing.is_empty(),
        "{} feature(s) Radicale has in full and yeyak not:\n{}",
        failing.len(),
        failing.join("\n")
    );
}
