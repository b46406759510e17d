//! The CalDAV door through a real client nobody here wrote: the Python
//! `caldav` library (`tests/caldav_client.py`) discovers the server from
//! `/.well-known/caldav`, subscribes to a room's calendar, books by inviting
//! a room, moves and cancels, books a weekly series and deletes one
//! instance, is refused a conflicting invitation and a conflicting series,
//! asks for free/busy both ways, and syncs bookings made through the JSON
//! API — against the spawned app.

use std::process::Command;

use crate::caldav::Dav;
use crate::helpers::*;

/// The Python of `target/caldav-venv` with `caldav` installed (created on
/// first use, as `.ci/test` does): its own environment, because `caldav`
/// brings `urllib3-future`, which replaces urllib3 for every other tool.
fn caldav_python() -> std::path::PathBuf {
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/caldav-venv");
    let python = venv.join("bin/python");
    let ready = || Command::new(&python).args(["-c", "import caldav, icalendar"]).status().is_ok_and(|s| s.success());
    if !ready() {
        let made = Command::new("python3").args(["-m", "venv"]).arg(&venv).status().expect("python3 runs");
        assert!(made.success(), "python3 -m venv target/caldav-venv");
        let pip = Command::new(venv.join("bin/pip")).args(["install", "-q", "caldav", "icalendar"]).status().unwrap();
        assert!(pip.success(), "pip install caldav icalendar (into target/caldav-venv)");
    }
    python
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_caldav_library_books_rooms_by_invitation_end_to_end() {
    let python = tokio::task::spawn_blocking(caldav_python).await.unwrap();
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    use yeyak::clock::Clock;
    let day =
        (app.clock.now().with_timezone(&chrono_tz::Asia::Seoul).date_naive() + chrono::Duration::days(2)).to_string();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/caldav_client.py");
    let mut run = Command::new(python);
    run.arg(script)
        .env("BASE_URL", &app.address)
        .env("DAV_USER", &dav.user)
        .env("DAV_PASSWORD", &dav.password)
        .env("API_KEY", TENANT_ONE)
        .env("DAY", &day);
    // Off the runtime's threads: the app serves the script meanwhile.
    let out = tokio::task::spawn_blocking(move || run.output()).await.unwrap().expect("python3 runs");
    let log = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && log.contains("scenario passed"), "the caldav scenario failed:\n{log}");
    app.assert_consistent().await;
}
