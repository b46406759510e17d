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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_caldav_library_books_rooms_by_invitation_end_to_end() {
    let has = Command::new("python3").args(["-c", "import caldav, icalendar"]).status().is_ok_and(|s| s.success());
    if !has {
        let ok = Command::new("python3").args(["-m", "pip", "install", "-q", "caldav", "icalendar"]).status().unwrap();
        assert!(ok.success(), "pip install caldav icalendar");
    }
    let app = TestApp::spawn().await;
    let dav = Dav::person(&app, "kim").await;
    use yeyak::clock::Clock;
    let day =
        (app.clock.now().with_timezone(&chrono_tz::Asia::Seoul).date_naive() + chrono::Duration::days(2)).to_string();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/caldav_client.py");
    let mut run = Command::new("python3");
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
