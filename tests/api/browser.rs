//! End to end in headless Chromium (Debian's chromium and chromium-driver),
//! driven over WebDriver: sign in, book A+B by clicking a free cell and
//! filling the form, see the block, try an overlap and read
//! "이미 예약된 시간입니다", cancel and see the time free again; the day, week,
//! door display and sign-in pages in English too. The browser asks for
//! Korean (`intl.accept_languages`). Screenshots go to `target/screenshots/`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use crate::helpers::*;
use crate::web::{tomorrow, ADMIN_PASSWORD, ADMIN_USER};

/// chromedriver on a port of its own; its browser's profile lives in
/// [`profile_dir`] of that port and goes with it.
pub(crate) struct Driver(Child, u16);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        let _ = std::fs::remove_dir_all(profile_dir(self.1));
    }
}

/// The profile of the browser driven through `port`.
fn profile_dir(port: u16) -> PathBuf {
    std::env::temp_dir().join(format!("yeyak-chrome-{port}"))
}

pub(crate) async fn chromedriver() -> (Driver, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let driver = Driver(
        Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver is installed (apt-get install chromium chromium-driver; .ci/run does it)"),
        port,
    );
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return (driver, port);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("chromedriver did not start");
}

pub(crate) async fn browser(port: u16) -> Client {
    // Two TLS back ends are linked into this test binary; pick one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let profile = profile_dir(port);
    let caps = json!({
        "goog:chromeOptions": {
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", "--lang=ko-KR", "--window-size=1280,1100",
                     format!("--user-data-dir={}", profile.display())],
            // Headless Chromium sends its own Accept-Language whatever `--lang` says.
            "prefs": { "intl.accept_languages": "ko-KR,ko" }
        }
    });
    let caps = caps.as_object().unwrap().clone().into_iter().collect();
    ClientBuilder::rustls()
        .expect("tls")
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("WebDriver session")
}

pub(crate) fn shot_path(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{name}.png"))
}

pub(crate) async fn screenshot(c: &Client, name: &str) {
    c.execute("window.scrollTo(0, 0);", vec![]).await.unwrap();
    let png = c.screenshot().await.unwrap();
    std::fs::write(shot_path(name), png).unwrap();
}

/// axe-core's script (npm `axe-core`), installed under `target/node` on first use.
fn axe_source() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/node");
    let file = root.join("node_modules/axe-core/axe.min.js");
    if !file.exists() {
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&root)
            .arg("axe-core@4")
            .status()
            .expect("npm is installed");
        assert!(status.success(), "npm install axe-core");
    }
    std::fs::read_to_string(file).unwrap()
}

static AXE: std::sync::LazyLock<String> = std::sync::LazyLock::new(axe_source);

/// Runs axe-core on the current page and fails on any violation.
pub async fn assert_accessible(c: &Client, page: &str) {
    c.execute(&AXE, vec![]).await.unwrap();
    let result = c
        .execute_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document, { resultTypes: ['violations'] })
                .then(r => done(r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
                                                       nodes: v.nodes.slice(0, 3).map(n => n.html) }))))
                .catch(e => done([{ id: 'axe-error', help: String(e) }]));",
            vec![],
        )
        .await
        .unwrap();
    let violations = result.as_array().cloned().unwrap_or_default();
    assert!(violations.is_empty(), "axe-core found violations on {page}: {violations:#?}");
}

/// Clicks what submits a form or follows a link, and returns once the
/// browser shows another address: a wait for an element that the old page
/// may also have (a notice, a grid) proves nothing until then.
async fn click_and_wait_for_the_next_page(c: &Client, what: Locator<'_>) -> Result<(), fantoccini::error::CmdError> {
    let before = c.current_url().await?;
    c.find(what).await?.click().await?;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while c.current_url().await? == before {
        assert!(std::time::Instant::now() < deadline, "the click left {before} open for 30 s");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Ok(())
}

pub(crate) async fn set_value(c: &Client, css: &str, value: &str) {
    c.execute("document.querySelector(arguments[0]).value = arguments[1];", vec![json!(css), json!(value)])
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_books_sees_a_conflict_and_cancels_in_a_real_browser() {
    let app = TestApp::spawn().await;
    let (_driver, port) = chromedriver().await;
    let c = browser(port).await;
    c.goto(&app.url("/login")).await.unwrap();
    assert_accessible(&c, "sign-in page").await;
    let result = scenario(&app, &c).await;
    let _ = c.close().await;
    result.unwrap();
}

async fn scenario(app: &TestApp, c: &Client) -> Result<(), fantoccini::error::CmdError> {
    let date = tomorrow(app);
    c.goto(&app.url("/")).await?;
    assert!(c.current_url().await?.path().starts_with("/login"));
    c.find(Locator::Css("#username")).await?.send_keys(ADMIN_USER).await?;
    c.find(Locator::Css("#password")).await?.send_keys(ADMIN_PASSWORD).await?;
    c.find(Locator::Css("form[action='/login'] button")).await?.click().await?;
    c.wait().for_element(Locator::Css(".grid")).await?;
    assert_accessible(c, "day page").await;

    // A neighbour's booking so the grid shows more than ours.
    app.create_booking(
        TENANT_ONE,
        "ops",
        "seed",
        &booking("팀 스탠드업", &["C"], &format!("{date}T09:00:00+09:00"), &format!("{date}T09:30:00+09:00")),
    )
    .await;

    // Click the free 10:00 cell of room A (the script fills the form), add B, name it, submit.
    c.goto(&app.url(&format!("/rooms?date={date}"))).await?;
    c.find(Locator::Css("a.free[href*='start=10:00'][href*='room=A']")).await?.click().await?;
    assert_eq!(c.find(Locator::Css("#start")).await?.prop("value").await?.as_deref(), Some("10:00"));
    c.find(Locator::Css("input[name=rooms][value=B]")).await?.click().await?;
    set_value(c, "#end", "11:30").await;
    c.find(Locator::Css("#title")).await?.send_keys("분기 계획 회의").await?;
    c.find(Locator::Css("#book button[type=submit]")).await?.click().await?;
    let block = c.wait().for_element(Locator::Css("a.block.new")).await?;
    let text = block.text().await?;
    assert!(text.contains("분기 계획 회의") && text.contains("10:00–11:30") && text.contains("A+B"), "{text}");
    assert!(c.source().await?.contains("예약했습니다"));
    screenshot(c, "day-desktop").await;
    assert_accessible(c, "day page with bookings").await;

    // The same day at 375 px.
    c.set_window_size(375, 900).await?;
    c.refresh().await?;
    c.wait().for_element(Locator::Css(".grid")).await?;
    screenshot(c, "day-375").await;
    assert_accessible(c, "day page at 375 px").await;
    c.set_window_size(1280, 1100).await?;

    // An overlapping booking on B is refused with the message, input kept.
    c.goto(&app.url(&format!("/rooms?date={date}"))).await?;
    c.find(Locator::Css("a.free[href*='start=10:00'][href*='room=C']")).await?.click().await?;
    c.find(Locator::Css("input[name=rooms][value=B]")).await?.click().await?;
    set_value(c, "#start", "10:30").await;
    set_value(c, "#end", "11:00").await;
    c.find(Locator::Css("#title")).await?.send_keys("겹치는 회의").await?;
    c.find(Locator::Css("#book button[type=submit]")).await?.click().await?;
    let error = c.wait().for_element(Locator::Css("#form-error")).await?;
    assert_eq!(error.text().await?, "이미 예약된 시간입니다");
    assert_eq!(c.find(Locator::Css("#title")).await?.prop("value").await?.as_deref(), Some("겹치는 회의"));
    screenshot(c, "conflict").await;
    assert_accessible(c, "refused booking form").await;

    // Cancel through the booking page and its confirmation.
    c.goto(&app.url(&format!("/rooms?date={date}"))).await?;
    c.find(Locator::XPath("//a[contains(@class,'block')][contains(., '분기 계획 회의')]")).await?.click().await?;
    assert_accessible(c, "booking page").await;
    c.find(Locator::Css("a.danger")).await?.click().await?;
    assert_accessible(c, "cancel confirmation").await;
    c.find(Locator::Css("button.danger")).await?.click().await?;
    c.wait().for_element(Locator::Css(".notice.ok")).await?;
    let page = c.source().await?;
    assert!(page.contains("예약을 취소했습니다"));
    assert!(!page.contains("분기 계획 회의"));
    c.find(Locator::Css("a.free[href*='start=10:00'][href*='room=A']")).await?;
    c.find(Locator::Css("a.free[href*='start=11:00'][href*='room=B']")).await?;
    Ok(())
}

pub(crate) async fn sign_in(app: &TestApp, c: &Client) -> Result<(), fantoccini::error::CmdError> {
    c.goto(&app.url("/login")).await?;
    c.find(Locator::Css("#username")).await?.send_keys(ADMIN_USER).await?;
    c.find(Locator::Css("#password")).await?.send_keys(ADMIN_PASSWORD).await?;
    c.find(Locator::Css("form[action='/login'] button")).await?.click().await?;
    c.wait().for_element(Locator::Css(".grid")).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalogue_pages_in_a_real_browser() {
    let app = TestApp::spawn().await;
    let date = tomorrow(&app);
    let tags = ["projector", "video", "whiteboard"];
    for i in 1..=40 {
        let equipment: Vec<&str> = tags.iter().copied().take(i % 4).collect();
        let suite = if i <= 4 { Some("T1-4") } else { None };
        add_room(
            &app,
            json!({"code": format!("T{i:02}"), "name": format!("타워 {i:02}"), "area": "타워",
                               "capacity": 4 + (i % 5) * 2, "equipment": equipment, "suite": suite}),
        )
        .await;
    }
    // A busy tower: linked, touching and overlapping-looking bookings.
    let seoul = |h: u32, m: u32| format!("{date}T{h:02}:{m:02}:00+09:00");
    let mut n = 0;
    for i in 1..=40 {
        for (s, e) in [((9, 0), (10, 0)), ((10, 0), (11, 30)), ((13, 0), (14, 0))] {
            if (i + s.0) % 3 == 0 {
                continue;
            }
            n += 1;
            let rooms = if i <= 3 && s.0 == 13 {
                vec![format!("T{i:02}"), format!("T{:02}", i + 1)]
            } else {
                vec![format!("T{i:02}")]
            };
            let rooms: Vec<&str> = rooms.iter().map(String::as_str).collect();
            app.create_booking(
                TENANT_ONE,
                "ops",
                &format!("t{n}"),
                &booking(&format!("회의 {n}"), &rooms, &seoul(s.0, s.1), &seoul(e.0, e.1)),
            )
            .await;
        }
    }
    let (_driver, port) = chromedriver().await;
    let c = browser(port).await;
    let result = catalogue_pages(&app, &c, &date).await;
    let _ = c.close().await;
    result.unwrap();
}

async fn catalogue_pages(app: &TestApp, c: &Client, date: &str) -> Result<(), fantoccini::error::CmdError> {
    sign_in(app, c).await?;
    c.goto(&app.url(&format!("/rooms?date={date}"))).await?;
    c.wait().for_element(Locator::Css(".areas")).await?;
    screenshot(c, "day-3-rooms").await;
    assert_accessible(c, "day page, 3 rooms").await;

    c.find(Locator::LinkText("타워")).await?.click().await?;
    c.wait().for_element(Locator::Css(".grid.cols40")).await?;
    assert_eq!(c.find_all(Locator::Css(".room-head")).await?.len(), 40);
    screenshot(c, "day-40-rooms").await;
    assert_accessible(c, "day page, 40 rooms").await;
    // The grid scrolls sideways; the time column stays.
    let scrolled = c
        .execute(
            "const w = document.querySelector('.grid-wrap'); w.scrollLeft = 2000;
             const h = document.querySelector('.hour').getBoundingClientRect();
             return [w.scrollWidth > w.clientWidth, w.scrollLeft > 0, h.left >= w.getBoundingClientRect().left - 1,
                     h.left, w.getBoundingClientRect().left, getComputedStyle(document.querySelector('.hour')).position,
                     getComputedStyle(document.querySelector('.hour')).gridColumnEnd];",
            vec![],
        )
        .await?;
    assert_eq!(
        scrolled.as_array().unwrap()[..3],
        [json!(true), json!(true), json!(true)],
        "sideways scroll with a sticky time column: {scrolled}"
    );

    c.goto(&app.url(&format!("/find?date={date}&start=10:00&end=11:00&capacity=8&equipment=projector"))).await?;
    c.wait().for_element(Locator::Css("#found")).await?;
    screenshot(c, "find").await;
    assert_accessible(c, "find page").await;
    c.find(Locator::Css("table.list a")).await?.click().await?;
    c.wait().for_element(Locator::Css("#book")).await?;
    let checked = c.find_all(Locator::Css("input[name=rooms]:checked")).await?.len();
    assert_eq!(checked, 1, "the found room is chosen in the form");

    c.goto(&app.url("/admin/rooms")).await?;
    screenshot(c, "admin-rooms").await;
    assert_accessible(c, "admin rooms").await;
    c.goto(&app.url("/admin/rooms/T01")).await?;
    assert_accessible(c, "admin room").await;
    for page in ["/admin/staff", "/admin/consistency", "/account"] {
        c.goto(&app.url(page)).await?;
        assert_accessible(c, page).await;
    }
    c.goto(&app.url("/admin/staff")).await?;
    screenshot(c, "admin-staff").await;
    c.goto(&app.url("/account")).await?;
    screenshot(c, "account").await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_door_display_in_both_orientations() {
    let app = TestApp::spawn().await;
    add_room(
        &app,
        json!({"code": "DOOR", "name": "3층 큰 회의실", "capacity": 12,
                           "equipment": ["projector", "video"], "checkInRequired": true}),
    )
    .await;
    let admin = crate::web::Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let url = crate::display::display_url(&admin, "DOOR").await;
    // Later today: two bookings, shown as the next ones.
    use yeyak::clock::Clock;
    let now = app.clock.now();
    use chrono::DurationRound;
    let hour = now.duration_trunc(chrono::Duration::hours(1)).unwrap();
    for (i, (title, h)) in [("디자인 리뷰", 2), ("채용 면접 (2차)", 3)].iter().enumerate() {
        let s = hour + chrono::Duration::hours(*h);
        app.create_booking(
            TENANT_ONE,
            "kim",
            &format!("d{i}"),
            &booking(title, &["DOOR"], &s.to_rfc3339(), &(s + chrono::Duration::minutes(50)).to_rfc3339()),
        )
        .await;
    }
    let (_driver, port) = chromedriver().await;
    let c = browser(port).await;
    let result = door(&app, &c, &url).await;
    let _ = c.close().await;
    result.unwrap();
}

async fn door(app: &TestApp, c: &Client, url: &str) -> Result<(), fantoccini::error::CmdError> {
    for (w, h, name) in [(800, 1280, "portrait"), (1280, 800, "landscape")] {
        c.set_window_size(w, h).await?;
        c.goto(&app.url(url)).await?;
        c.wait().for_element(Locator::Css("body.free")).await?;
        screenshot(c, &format!("display-free-{name}")).await;
        assert_accessible(c, &format!("display, free, {name}")).await;
    }
    // Book now for 30 minutes at the door: busy, with a check-in button.
    c.find(Locator::Css("button[name=minutes][value='30']")).await?.click().await?;
    c.wait().for_element(Locator::Css("body.busy")).await?;
    assert!(c.source().await?.contains("체크인 (바로 예약)"));
    for (w, h, name) in [(800, 1280, "portrait"), (1280, 800, "landscape")] {
        c.set_window_size(w, h).await?;
        c.refresh().await?;
        c.wait().for_element(Locator::Css("body.busy")).await?;
        screenshot(c, &format!("display-busy-{name}")).await;
        assert_accessible(c, &format!("display, busy, {name}")).await;
    }
    // The page before the click already shows a `.notice.ok` ("예약했습니다",
    // from `done=booked` in its address): only the new page is evidence.
    click_and_wait_for_the_next_page(c, Locator::Css(".check-in button")).await?;
    c.wait().for_element(Locator::Css(".notice.ok")).await?;
    assert!(c.source().await?.contains("체크인 완료"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeat_bookings_the_week_my_bookings_and_approvals_in_a_real_browser() {
    let app = TestApp::spawn().await;
    add_room(&app, json!({"code": "BOARD", "name": "임원 회의실", "approvalRequired": true})).await;
    let date = tomorrow(&app);
    // Someone holds C two weeks from tomorrow at 10:00 (Seoul).
    let day = |weeks: i64| {
        (chrono::NaiveDate::parse_from_str(&date, "%Y-%m-%d").unwrap() + chrono::Duration::weeks(weeks)).to_string()
    };
    app.create_booking(
        TENANT_ONE,
        "bob",
        "blocker",
        &booking("선약", &["C"], &format!("{}T10:00:00+09:00", day(2)), &format!("{}T11:00:00+09:00", day(2))),
    )
    .await;
    let (_driver, port) = chromedriver().await;
    let c = browser(port).await;
    let result = repeat_and_week(&app, &c, &date, &day(2), &day(5)).await;
    let _ = c.close().await;
    result.unwrap();
}

async fn repeat_and_week(
    app: &TestApp,
    c: &Client,
    date: &str,
    taken: &str,
    until: &str,
) -> Result<(), fantoccini::error::CmdError> {
    sign_in(app, c).await?;
    c.goto(&app.url(&format!("/rooms?date={date}"))).await?;
    c.find(Locator::Css("#title")).await?.send_keys("주간 스탠드업").await?;
    set_value(c, "#start", "10:00").await;
    set_value(c, "#end", "10:30").await;
    c.find(Locator::Css("input[name=rooms][value=C]")).await?.click().await?;
    c.find(Locator::Css("#repeat option[value=weekly]")).await?.click().await?;
    set_value(c, "#repeat_until", until).await;
    c.find(Locator::Css("#book button[type=submit]:not([name])")).await?.click().await?;
    // One date is taken: the page lists it and offers to book the rest.
    let taken_list = c.wait().for_element(Locator::Css("#series-conflicts")).await?;
    assert!(taken_list.text().await?.contains(taken), "{}", taken_list.text().await?);
    assert!(c.find(Locator::Css("#form-error")).await?.text().await?.contains("이미 예약된 날짜가 1개"));
    screenshot(c, "series-conflict").await;
    assert_accessible(c, "series conflict").await;
    c.find(Locator::Css("button[name=on_conflict][value=skip]")).await?.click().await?;
    let notice = c.wait().for_element(Locator::Css(".notice.ok")).await?;
    assert!(
        notice.text().await?.contains("반복 예약 5건을 만들었습니다. 이미 예약된 1건은 건너뛰었습니다"),
        "{}",
        notice.text().await?
    );
    assert_eq!(app.count("SELECT count(*) FROM reservation WHERE series_id IS NOT NULL").await, 5);

    // The week page shows the series, previous and next weeks move by seven days.
    c.goto(&app.url(&format!("/rooms/week?date={date}"))).await?;
    c.wait().for_element(Locator::Css("table.week")).await?;
    assert!(c.source().await?.contains("주간 스탠드업"));
    screenshot(c, "week").await;
    assert_accessible(c, "week page").await;
    // Both weeks have a `table.week`: wait for the next address first.
    click_and_wait_for_the_next_page(c, Locator::Css("a[rel=next]")).await?;
    c.wait().for_element(Locator::Css("table.week")).await?;
    assert!(c.current_url().await?.as_str().contains("date="));

    // My bookings lists the occurrences and the series.
    c.goto(&app.url("/my")).await?;
    let page = c.source().await?;
    assert!(page.contains("주간 스탠드업") && page.contains("내 반복 예약") && page.contains("앞으로 5회"));
    screenshot(c, "my").await;
    assert_accessible(c, "my bookings").await;

    // Cancel this and the following from the second occurrence.
    c.find(Locator::XPath("(//a[contains(., '주간 스탠드업')])[2]")).await?.click().await?;
    assert_accessible(c, "occurrence page").await;
    c.find(Locator::Css("a.danger")).await?.click().await?;
    assert_accessible(c, "cancel scope").await;
    c.find(Locator::Css("input[name=scope][value=following]")).await?.click().await?;
    c.find(Locator::Css("button.danger")).await?.click().await?;
    c.wait().for_element(Locator::Css(".notice.ok")).await?;
    assert_eq!(
        app.count("SELECT count(*) FROM reservation WHERE series_id IS NOT NULL AND status = 'CONFIRMED'").await,
        1
    );

    // A pending booking in a room that needs approval, approved on its page.
    app.create_booking(
        TENANT_ONE,
        "bob",
        "pending",
        &booking("임원 보고", &["BOARD"], &format!("{date}T15:00:00+09:00"), &format!("{date}T16:00:00+09:00")),
    )
    .await;
    c.goto(&app.url("/admin/approvals")).await?;
    assert!(c.source().await?.contains("임원 보고"));
    screenshot(c, "approvals").await;
    assert_accessible(c, "approvals").await;
    c.find(Locator::Css("form[action$='/approve'] button")).await?.click().await?;
    let done = c.wait().for_element(Locator::Css(".notice.ok")).await?;
    assert!(done.text().await?.contains("승인했습니다"));
    assert_eq!(app.count("SELECT count(*) FROM reservation WHERE status = 'PENDING'").await, 0);
    // The booking page shows the history written by each of those changes.
    let id = app.count("SELECT max(id) FROM reservation WHERE title = '임원 보고'").await;
    c.goto(&app.url(&format!("/bookings/{id}"))).await?;
    let page = c.source().await?;
    assert!(page.contains("변경 기록") && page.contains("승인") && page.contains("승인 대기 → 확정"), "{page}");
    screenshot(c, "booking-history").await;
    assert_accessible(c, "booking page with history").await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reports_page_in_a_real_browser() {
    let app = TestApp::spawn().await;
    for (i, name) in ["소회의실", "대회의실", "\"창가\" 방, 3층"].iter().enumerate() {
        add_room(&app, json!({"code": format!("R{i}"), "name": name, "area": "신관"})).await;
    }
    let first = chrono::NaiveDate::parse_from_str(&tomorrow(&app), "%Y-%m-%d").unwrap();
    let mut n = 0;
    for day in 0..14 {
        let date = first + chrono::Duration::days(day);
        for (room, slots) in [("A", 4), ("B", 2), ("C", 1), ("R0", 3), ("R1", 5)] {
            for s in 0..slots {
                n += 1;
                let (start, end) =
                    (format!("{date}T{:02}:00:00+09:00", 9 + s), format!("{date}T{:02}:50:00+09:00", 9 + s));
                app.create_booking(TENANT_ONE, "ops", &format!("r{n}"), &booking("회의", &[room], &start, &end)).await;
            }
        }
    }
    let to = first + chrono::Duration::days(13);
    let (_driver, port) = chromedriver().await;
    let c = browser(port).await;
    let result = async {
        sign_in(&app, &c).await?;
        c.goto(&app.url(&format!("/admin/reports?from={first}&to={to}"))).await?;
        c.wait().for_element(Locator::Css("figure.chart svg[role=img]")).await?;
        assert_eq!(c.find_all(Locator::Css("table.report tbody tr")).await?.len(), 6);
        c.find(Locator::Css("a[href^='/api/admin/reports/utilisation.csv']")).await?;
        c.find(Locator::Css("a[href^='/api/admin/reports/bookings.csv']")).await?;
        screenshot(&c, "reports").await;
        assert_accessible(&c, "reports page").await;
        c.goto(&app.url("/admin/reports?from=2026-02-30")).await?;
        assert_accessible(&c, "reports page with a refused range").await;
        Ok::<_, fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_day_week_door_and_sign_in_pages_in_english_in_a_real_browser() {
    let app = TestApp::spawn().await;
    let world = crate::languages_pages::world(&app).await;
    // Later today at the door: a booking, shown as the next one.
    use chrono::DurationRound;
    use yeyak::clock::Clock;
    let hour = app.clock.now().duration_trunc(chrono::Duration::hours(1)).unwrap() + chrono::Duration::hours(2);
    app.create_booking(
        TENANT_ONE,
        "ops",
        "door-next",
        &json!({"title": "Design review", "rooms": ["A"], "startsAt": hour.to_rfc3339(),
                "endsAt": (hour + chrono::Duration::minutes(50)).to_rfc3339(), "organizerName": "Dana"}),
    )
    .await;
    let (_driver, port) = chromedriver().await;
    let c = browser(port).await;
    let result = english_pages(&app, &c, &world.date, &world.display).await;
    let _ = c.close().await;
    result.unwrap();
}

async fn english_pages(
    app: &TestApp,
    c: &Client,
    date: &str,
    display: &str,
) -> Result<(), fantoccini::error::CmdError> {
    let lang = || async { c.find(Locator::Css("html")).await?.attr("lang").await };
    c.goto(&app.url("/login")).await?;
    assert_eq!(lang().await?.as_deref(), Some("ko"), "the browser asks for Korean");
    // The switch: English, remembered from here on.
    c.find(Locator::Css(".lang a[hreflang=en]")).await?.click().await?;
    c.wait().for_element(Locator::Css("html[lang=en]")).await?;
    assert!(c.source().await?.contains("<h1>Sign in</h1>"));
    screenshot(c, "login-en").await;
    assert_accessible(c, "sign-in page in English").await;
    c.find(Locator::Css("#username")).await?.send_keys(ADMIN_USER).await?;
    c.find(Locator::Css("#password")).await?.send_keys(ADMIN_PASSWORD).await?;
    c.find(Locator::Css("form[action='/login'] button")).await?.click().await?;
    c.wait().for_element(Locator::Css(".grid")).await?;
    c.goto(&app.url(&format!("/rooms?date={date}"))).await?;
    c.wait().for_element(Locator::Css(".grid")).await?;
    assert_eq!(lang().await?.as_deref(), Some("en"));
    let heading = c.find(Locator::Css("h1")).await?.text().await?;
    let day = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").unwrap();
    assert_eq!(heading, yeyak::i18n::I18n::new(yeyak::i18n::Lang::En).date(day), "a natural English date");
    screenshot(c, "day-en").await;
    assert_accessible(c, "day page in English").await;
    c.goto(&app.url(&format!("/rooms/week?date={date}"))).await?;
    c.wait().for_element(Locator::Css("table.week")).await?;
    assert!(c.source().await?.contains("Standup"));
    screenshot(c, "week-en").await;
    assert_accessible(c, "week page in English").await;
    for (w, h, name) in [(800, 1280, "portrait"), (1280, 800, "landscape")] {
        c.set_window_size(w, h).await?;
        c.goto(&app.url(display)).await?;
        c.wait().for_element(Locator::Css("body.free")).await?;
        assert_eq!(lang().await?.as_deref(), Some("en"));
        assert!(c.source().await?.contains("Design review"));
        screenshot(c, &format!("display-en-{name}")).await;
        assert_accessible(c, &format!("door display in English, {name}")).await;
    }
    c.set_window_size(1280, 1100).await?;
    Ok(())
}
/// SPEC §16: the sign-in page offers both ways, and the company one goes
/// through the real provider's pages and back, signed in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_in_with_the_company_account_in_a_real_browser() {
    let provider = crate::sso_support::Provider::start().await;
    let app = crate::sso_support::app_with(&provider, "yeyak", |_| {}).await;
    let (_driver, port) = chromedriver().await;
    let c = browser(port).await;
    let result = async {
        c.goto(&app.url("/login?next=/my")).await?;
        c.find(Locator::Css("form[action='/login'] #password")).await?;
        let link = c.find(Locator::Css("a.sso")).await?;
        assert_eq!(link.text().await?, "회사 계정으로 로그인");
        screenshot(&c, "login").await;
        assert_accessible(&c, "sign-in page with the company sign-in").await;
        // The same page in English (SPEC §19), then back to Korean.
        c.goto(&app.url("/login?next=/my&lang=en")).await?;
        c.find(Locator::Css("form[action='/login'] #password")).await?;
        assert_eq!(c.find(Locator::Css("a.sso")).await?.text().await?, "Sign in with your company account");
        screenshot(&c, "login-sso-en").await;
        assert_accessible(&c, "sign-in page with the company sign-in, in English").await;
        c.goto(&app.url("/login?next=/my&lang=ko")).await?;
        let link = c.find(Locator::Css("a.sso")).await?;
        link.click().await?;
        // The provider's own pages: any login name, then consent.
        c.wait().for_element(Locator::Css("input[name=login]")).await?.send_keys("alice").await?;
        c.find(Locator::Css("input[name=password]")).await?.send_keys("any").await?;
        c.find(Locator::Css("button[type=submit]")).await?.click().await?;
        c.wait().for_element(Locator::Css("input[name=prompt][value=consent]")).await?;
        c.find(Locator::Css("button[type=submit]")).await?.click().await?;
        c.wait().for_element(Locator::Css(".who")).await?;
        assert_eq!(c.current_url().await?.path(), "/my");
        assert!(c.find(Locator::Css(".who")).await?.text().await?.contains("Alice Kim"));
        // Sign-out goes on to the provider's own sign-out page (the form's
        // redirect is allowed by the page's form-action).
        c.find(Locator::Css("form[action='/logout'] button")).await?.click().await?;
        c.wait().for_element(Locator::Css("button[name=logout]")).await?;
        assert!(c.current_url().await?.as_str().starts_with(&provider.issuer));
        c.find(Locator::Css("button[name=logout]")).await?.click().await?;
        c.wait().for_element(Locator::Css("form[action='/login']")).await?;
        assert_eq!(c.current_url().await?.path(), "/login");
        Ok::<_, fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.unwrap();
}

/// The day page with a room's setup and cleanup time (SPEC §24): bands
/// labelled in words beside the meeting, axe-core clean.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buffers_on_the_day_page_in_a_real_browser() {
    let app = TestApp::spawn().await;
    let body = json!({ "bufferBeforeMinutes": 15, "bufferAfterMinutes": 30 });
    let (status, _) = send(&app, reqwest::Method::PATCH, "/api/rooms/A", ADMIN, None, body).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    let date = tomorrow(&app);
    let (start, end) = (format!("{date}T10:00:00+09:00"), format!("{date}T11:00:00+09:00"));
    let res =
        app.create_booking(TENANT_ONE, "ops", "buffered", &booking("준비가 필요한 회의", &["A"], &start, &end)).await;
    assert_eq!(res.status(), reqwest::StatusCode::CREATED);
    let (_driver, port) = chromedriver().await;
    let c = browser(port).await;
    let result = async {
        sign_in(&app, &c).await?;
        c.goto(&app.url(&format!("/rooms?date={date}"))).await?;
        c.wait().for_element(Locator::Css(".band.cleanup")).await?;
        assert_eq!(c.find(Locator::Css(".band.setup")).await?.text().await?, "준비 시간");
        assert_eq!(c.find(Locator::Css(".band.cleanup")).await?.text().await?, "정리 시간");
        c.execute("document.getElementById('booking-1')?.scrollIntoView({block: 'center'});", vec![]).await?;
        let png = c.screenshot().await?;
        std::fs::write(shot_path("day-buffers"), png).unwrap();
        assert_accessible(&c, "day page with buffers").await;
        // Longer cleanup now: the room's page lists the two bookings it would not have allowed.
        let (later_start, later_end) = (format!("{date}T11:45:00+09:00"), format!("{date}T12:15:00+09:00"));
        let res = app
            .create_booking(TENANT_ONE, "ops", "later", &booking("다음 회의", &["A"], &later_start, &later_end))
            .await;
        assert_eq!(res.status(), reqwest::StatusCode::CREATED);
        let body = json!({ "bufferBeforeMinutes": 0, "bufferAfterMinutes": 60 });
        assert_eq!(
            send(&app, reqwest::Method::PATCH, "/api/rooms/A", ADMIN, None, body).await.0,
            reqwest::StatusCode::OK
        );
        c.goto(&app.url("/admin/rooms/A")).await?;
        let listed = c.find_all(Locator::Css("#buffer-conflicts li")).await?;
        assert_eq!(listed.len(), 2);
        assert!(listed[0].text().await?.contains("10:00–11:00 · 준비가 필요한 회의"));
        assert_accessible(&c, "room page with buffer conflicts").await;
        Ok::<_, fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.unwrap();
}

/// The floor plan (SPEC §28) in Korean and English, at desktop width and
/// 375 px: marks in an SVG layer over the image with their states in words
/// and shapes, the list below, axe-core clean; screenshots `plan` and
/// `plan-375` (copied to docs/screenshots/).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floor_plan_in_a_real_browser() {
    let app = TestApp::spawn().await;
    let mut plan = image::RgbImage::from_pixel(1200, 800, image::Rgb([250, 250, 248]));
    for x in 0..1200 {
        for y in [0, 1, 399, 400, 798, 799] {
            plan.put_pixel(x, y, image::Rgb([90, 90, 90]));
        }
    }
    for y in 0..800 {
        for x in [0, 1, 600, 601, 1198, 1199] {
            plan.put_pixel(x, y, image::Rgb([90, 90, 90]));
        }
    }
    let mut png = std::io::Cursor::new(Vec::new());
    plan.write_to(&mut png, image::ImageFormat::Png).unwrap();
    let res = app
        .request(reqwest::Method::PUT, "/api/areas/본관/plan", ADMIN, None)
        .header("Content-Type", "image/png")
        .body(png.into_inner())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), reqwest::StatusCode::OK);
    for (i, (x, y)) in [(0.15, 0.25), (0.3, 0.25), (0.15, 0.7), (0.3, 0.7), (0.75, 0.3)].iter().enumerate() {
        let body = json!({ "code": format!("D{i}"), "name": format!("Desk {i}"), "kind": "desk", "x": x, "y": y });
        add_room(&app, body).await;
    }
    let body = json!({ "x": 0.75, "y": 0.75 });
    assert_eq!(send(&app, reqwest::Method::PATCH, "/api/rooms/A", ADMIN, None, body).await.0, reqwest::StatusCode::OK);
    let date = tomorrow(&app);
    let booked = json!({ "rooms": ["D1"], "date": date, "unit": "am" });
    assert_eq!(
        post(&app, "/api/bookings", TENANT_ONE, "lee", "plan-desk", booked).await.0,
        reqwest::StatusCode::CREATED
    );
    let (_driver, port) = chromedriver().await;
    let c = browser(port).await;
    let result = async {
        sign_in(&app, &c).await?;
        for lang in ["ko", "en"] {
            c.set_window_size(1280, 1100).await?;
            c.goto(&app.url(&format!("/areas/%EB%B3%B8%EA%B4%80/plan?date={date}&lang={lang}"))).await?;
            c.wait().for_element(Locator::Css("#plan-svg a.mark")).await?;
            assert_eq!(c.find_all(Locator::Css("#plan-svg a.mark")).await?.len(), 6);
            assert_eq!(c.find_all(Locator::Css("ul.places li")).await?.len(), 6);
            assert_accessible(&c, &format!("floor plan ({lang})")).await;
            if lang == "ko" {
                screenshot(&c, "plan").await;
            }
            c.set_window_size(375, 900).await?;
            let wide: bool = c
                .execute("return document.documentElement.scrollWidth > window.innerWidth;", vec![])
                .await?
                .as_bool()
                .unwrap_or(true);
            assert!(!wide, "nothing scrolls sideways at 375 px ({lang})");
            assert_accessible(&c, &format!("floor plan at 375 px ({lang})")).await;
            if lang == "ko" {
                screenshot(&c, "plan-375").await;
            }
        }
        c.set_window_size(1280, 1100).await?;
        c.goto(&app.url("/admin/areas/%EB%B3%B8%EA%B4%80")).await?;
        assert_accessible(&c, "area page with the plan upload").await;
        Ok::<_, fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.unwrap();
}
