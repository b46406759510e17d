//! Every form path of the browser UI through HTTP with a cookie jar.

use reqwest::header::{LOCATION, SET_COOKIE};
use reqwest::StatusCode;

use crate::helpers::*;

pub const ADMIN_USER: &str = "admin";
pub const ADMIN_PASSWORD: &str = "yeyak-admin";

/// A browser without JavaScript: a cookie jar, no automatic redirects.
pub struct Browser<'a> {
    pub app: &'a TestApp,
    pub client: reqwest::Client,
}

pub struct Page {
    pub status: StatusCode,
    pub location: Option<String>,
    pub cookies: Vec<String>,
    pub html: String,
}

impl Page {
    /// The value a Set-Cookie header of this answer gives `name`.
    pub fn cookie_value(&self, name: &str) -> Option<String> {
        let prefix = format!("{name}=");
        self.cookies
            .iter()
            .find(|c| c.starts_with(&prefix))
            .map(|c| c[prefix.len()..].split(';').next().unwrap().to_owned())
    }

    /// The calendar token of the feed address `/account` shows.
    pub fn feed_token(&self) -> String {
        self.html.split("/ical/me.ics?token=").nth(1).expect("a feed address").split('"').next().unwrap().to_owned()
    }

    /// The value of the first `name="…" value="…"` input.
    pub fn field(&self, name: &str) -> String {
        let marker = format!("name=\"{name}\" value=\"");
        let start = self.html.find(&marker).unwrap_or_else(|| panic!("no field {name} in page")) + marker.len();
        self.html[start..].split('"').next().unwrap().to_owned()
    }
}

impl<'a> Browser<'a> {
    pub fn new(app: &'a TestApp) -> Self {
        let client = reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
            // Under actix's 5 s keep-alive: a connection the server may be
            // closing at that moment is never reused (IncompleteMessage).
            .pool_idle_timeout(std::time::Duration::from_secs(3))
            .build()
            .unwrap();
        Browser { app, client }
    }

    async fn page(res: reqwest::Response) -> Page {
        let status = res.status();
        let location = res.headers().get(LOCATION).map(|v| v.to_str().unwrap().to_owned());
        let cookies = res.headers().get_all(SET_COOKIE).iter().map(|v| v.to_str().unwrap().to_owned()).collect();
        Page { status, location, cookies, html: res.text().await.unwrap() }
    }

    pub async fn get(&self, path: &str) -> Page {
        Self::page(self.client.get(self.app.url(path)).send().await.unwrap()).await
    }

    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> Page {
        Self::page(self.client.post(self.app.url(path)).form(form).send().await.unwrap()).await
    }

    pub async fn sign_in(&self, user: &str, password: &str) -> Page {
        let login = self.get("/login").await;
        let csrf = login.field("csrf_token");
        self.post("/login", &[("username", user), ("password", password), ("csrf_token", &csrf)]).await
    }

    /// Loads a day page and books from its form.
    pub async fn book(&self, date: &str, title: &str, start: &str, end: &str, rooms: &[&str]) -> Page {
        let page = self.get(&format!("/rooms?date={date}")).await;
        assert_eq!(page.status, StatusCode::OK);
        let (csrf, key) = (page.field("csrf_token"), page.field("idempotency_key"));
        let mut form = vec![
            ("title", title),
            ("date", date),
            ("start", start),
            ("end", end),
            ("csrf_token", &csrf),
            ("idempotency_key", &key),
        ];
        for r in rooms {
            form.push(("rooms", r));
        }
        self.post("/bookings", &form).await
    }
}

pub fn tomorrow(app: &TestApp) -> String {
    use yeyak::clock::Clock;
    (app.clock.now().with_timezone(&chrono_tz::Asia::Seoul).date_naive() + chrono::Duration::days(1)).to_string()
}

pub fn booked_id(page: &Page) -> i64 {
    let loc = page.location.as_deref().expect("redirect");
    loc.split("booked=").nth(1).unwrap().split(['&', '#']).next().unwrap().parse().unwrap()
}

#[tokio::test]
async fn sign_in_sets_a_safe_session_cookie_and_rotates_it() {
    let app = TestApp::spawn().await;
    let b = Browser::new(&app);
    let first = b.get("/").await;
    assert_eq!(first.status, StatusCode::SEE_OTHER);
    assert!(first.location.unwrap().starts_with("/login"));

    let wrong = b.sign_in(ADMIN_USER, "nope").await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(wrong.html.contains("아이디 또는 비밀번호가 올바르지 않습니다"));
    let unknown = b.sign_in("nobody", "nope").await;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);

    let ok = b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.html);
    let session = ok.cookies.iter().find(|c| c.starts_with("yeyak_session=")).expect("session cookie").clone();
    assert!(
        session.contains("HttpOnly") && session.contains("SameSite=Lax") && !session.contains("Secure"),
        "{session}"
    );
    let day = b.get("/").await;
    assert_eq!(day.status, StatusCode::OK);
    assert!(day.html.contains("회의실 A") && day.html.contains("예약하기"));

    let again = b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let rotated = again.cookies.iter().find(|c| c.starts_with("yeyak_session=")).unwrap();
    assert_ne!(rotated.split(';').next(), session.split(';').next(), "a new session at each sign-in");
    assert_eq!(app.count("SELECT count(*) FROM staff_session").await, 1, "the old session ended");

    let day = b.get("/").await;
    let out = b.post("/logout", &[("csrf_token", &day.field("csrf_token"))]).await;
    assert_eq!(out.location.as_deref(), Some("/login"));
    assert_eq!(b.get("/").await.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn book_conflict_a_and_c_move_and_cancel_through_forms() {
    let app = TestApp::spawn().await;
    let b = Browser::new(&app);
    b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let date = tomorrow(&app);

    let booked = b.book(&date, "주간 회의", "10:00", "11:00", &["A", "B"]).await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    let id = booked_id(&booked);
    let shown = b.get(booked.location.as_deref().unwrap()).await;
    assert!(
        shown.html.contains("예약했습니다")
            && shown.html.contains("주간 회의")
            && shown.html.contains("10:00–11:00 · A+B")
    );
    assert!(shown.html.contains(&format!("id=\"booking-{id}\"")));

    let taken = b.book(&date, "겹침", "10:30", "11:30", &["B", "C"]).await;
    assert_eq!(taken.status, StatusCode::CONFLICT);
    assert!(taken.html.contains("이미 예약된 시간입니다"));
    assert!(taken.html.contains("value=\"겹침\"") && taken.html.contains("value=\"10:30\""), "input kept");

    let ac = b.book(&date, "A와 C", "12:00", "13:00", &["A", "C"]).await;
    assert_eq!(ac.status, StatusCode::BAD_REQUEST);
    assert!(ac.html.contains("이어진 회의실만 함께 예약할 수 있습니다"));
    assert!(ac.html.contains("value=\"A와 C\""));
    let bad = b.book(&date, "", "12:00", "11:00", &["A"]).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.html.contains("제목을 1~200자로 적어 주세요"));

    // Move: the detail page carries the form.
    let detail = b.get(&format!("/bookings/{id}")).await;
    let form = |d: &super::web::Page| (d.field("csrf_token"), d.field("idempotency_key"));
    let (csrf, key) = form(&detail);
    let moved = b
        .post(
            &format!("/bookings/{id}/move"),
            &[("date", &date), ("start", "14:00"), ("end", "15:30"), ("csrf_token", &csrf), ("idempotency_key", &key)],
        )
        .await;
    assert_eq!(moved.status, StatusCode::SEE_OTHER, "{}", moved.html);
    let after = b.get(moved.location.as_deref().unwrap()).await;
    assert!(after.html.contains("14:00–15:30 · A+B") && after.html.contains("예약 시간을 옮겼습니다"));

    let other = b.book(&date, "다른 회의", "16:00", "17:00", &["B"]).await;
    assert_eq!(other.status, StatusCode::SEE_OTHER);
    let detail = b.get(&format!("/bookings/{id}")).await;
    let (csrf, key) = form(&detail);
    let clash = b
        .post(
            &format!("/bookings/{id}/move"),
            &[("date", &date), ("start", "15:30"), ("end", "16:30"), ("csrf_token", &csrf), ("idempotency_key", &key)],
        )
        .await;
    assert_eq!(clash.status, StatusCode::CONFLICT);
    assert!(clash.html.contains("이미 예약된 시간입니다") && clash.html.contains("value=\"15:30\""));

    // Cancel asks first, then frees the time.
    let confirm = b.get(&format!("/bookings/{id}/cancel")).await;
    assert!(confirm.html.contains("예약을 취소할까요?"));
    let (csrf, key) = form(&confirm);
    let cancelled =
        b.post(&format!("/bookings/{id}/cancel"), &[("csrf_token", &csrf), ("idempotency_key", &key)]).await;
    assert_eq!(cancelled.status, StatusCode::SEE_OTHER);
    let day = b.get(cancelled.location.as_deref().unwrap()).await;
    assert!(day.html.contains("예약을 취소했습니다") && !day.html.contains(&format!("id=\"booking-{id}\"")));
    assert!(day.html.contains("start=14:00&amp;end=14:30&amp;room=A"), "the time is free again");
    app.assert_consistent().await;
}

#[tokio::test]
async fn a_form_without_its_csrf_token_is_refused_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let b = Browser::new(&app);
    b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let date = tomorrow(&app);
    let page = b.get(&format!("/rooms?date={date}")).await;
    let key = page.field("idempotency_key");
    let base = [
        ("title", "x"),
        ("date", date.as_str()),
        ("start", "10:00"),
        ("end", "11:00"),
        ("rooms", "A"),
        ("idempotency_key", key.as_str()),
    ];
    let missing = b.post("/bookings", &base).await;
    assert_eq!(missing.status, StatusCode::FORBIDDEN);
    assert!(missing.html.contains("보안 토큰"));
    let mut forged = base.to_vec();
    forged.push(("csrf_token", "00ff"));
    assert_eq!(b.post("/bookings", &forged).await.status, StatusCode::FORBIDDEN);
    // A token from another browser does not fit this browser's cookie.
    let other = Browser::new(&app);
    let other_token = other.get("/login").await.field("csrf_token");
    let mut stolen = base.to_vec();
    stolen.push(("csrf_token", &other_token));
    assert_eq!(b.post("/bookings", &stolen).await.status, StatusCode::FORBIDDEN);
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 0);
    // Sign-in needs one too.
    let no_csrf = b.post("/login", &[("username", ADMIN_USER), ("password", ADMIN_PASSWORD)]).await;
    assert_eq!(no_csrf.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_double_submit_books_once_and_both_answers_show_the_same_booking() {
    let app = TestApp::spawn().await;
    let b = Browser::new(&app);
    b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let date = tomorrow(&app);
    let page = b.get(&format!("/rooms?date={date}")).await;
    let (csrf, key) = (page.field("csrf_token"), page.field("idempotency_key"));
    let form = [
        ("title", "두 번 클릭"),
        ("date", &date),
        ("start", "09:00"),
        ("end", "09:45"),
        ("rooms", "C"),
        ("csrf_token", &csrf),
        ("idempotency_key", &key),
    ];
    let (first, second) = tokio::join!(b.post("/bookings", &form), async {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        b.post("/bookings", &form).await
    });
    // Whichever reaches the server first books (the other may be sent first
    // and still arrive second on a loaded machine); the other lands while
    // it runs (409 in progress) or after it (the same redirect).
    let (won, other) = if first.status == StatusCode::SEE_OTHER { (&first, &second) } else { (&second, &first) };
    assert_eq!(won.status, StatusCode::SEE_OTHER, "{}", won.html);
    let resubmit = b.post("/bookings", &form).await;
    assert_eq!(resubmit.status, StatusCode::SEE_OTHER);
    assert_eq!(resubmit.location, won.location);
    assert!(other.status == StatusCode::SEE_OTHER || other.status == StatusCode::CONFLICT, "{}", other.html);
    if other.status == StatusCode::SEE_OTHER {
        assert_eq!(other.location, won.location);
    }
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 1);
}

#[tokio::test]
async fn only_the_organizer_or_an_admin_changes_a_booking() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let staff_page = admin.get("/admin/staff").await;
    for (user, name) in [("kim", "김민지"), ("lee", "이서준")] {
        let added = admin
            .post(
                "/admin/staff",
                &[
                    ("username", user),
                    ("display_name", name),
                    ("password", "correct-horse-1"),
                    ("csrf_token", &staff_page.field("csrf_token")),
                ],
            )
            .await;
        assert_eq!(added.status, StatusCode::OK, "{}", added.html);
        assert!(added.html.contains(&format!("{user} 계정을 만들었습니다")));
    }
    let date = tomorrow(&app);
    let kim = Browser::new(&app);
    kim.sign_in("kim", "correct-horse-1").await;
    let id = booked_id(&kim.book(&date, "민지의 회의", "10:00", "11:00", &["A"]).await);
    let shown = kim.get(&format!("/rooms?date={date}")).await;
    assert!(shown.html.contains("김민지"), "the organizer's name is shown");

    let lee = Browser::new(&app);
    lee.sign_in("lee", "correct-horse-1").await;
    let detail = lee.get(&format!("/bookings/{id}")).await;
    assert!(!detail.html.contains("시간 옮기기"), "no move form for others");
    let csrf = detail.field("csrf_token");
    let key = "lee-tries";
    let moved = lee
        .post(
            &format!("/bookings/{id}/move"),
            &[("date", &date), ("start", "12:00"), ("end", "13:00"), ("csrf_token", &csrf), ("idempotency_key", key)],
        )
        .await;
    assert_eq!(moved.status, StatusCode::FORBIDDEN);
    assert!(moved.html.contains("예약한 사람(또는 관리자)만 바꿀 수 있습니다"));
    let cancelled =
        lee.post(&format!("/bookings/{id}/cancel"), &[("csrf_token", &csrf), ("idempotency_key", "lee-2")]).await;
    assert_eq!(cancelled.status, StatusCode::FORBIDDEN);
    assert_eq!(app.count("SELECT count(*) FROM reservation WHERE cancelled_at IS NULL AND version = 1").await, 1);

    // Non-admins do not see admin pages; the admin may change Kim's booking.
    assert_eq!(lee.get("/admin/consistency").await.status, StatusCode::FORBIDDEN);
    let detail = admin.get(&format!("/bookings/{id}")).await;
    assert!(detail.html.contains("시간 옮기기"));
    let ok = admin
        .post(
            &format!("/bookings/{id}/move"),
            &[
                ("date", &date),
                ("start", "12:00"),
                ("end", "13:00"),
                ("csrf_token", &detail.field("csrf_token")),
                ("idempotency_key", &detail.field("idempotency_key")),
            ],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn titles_are_shown_as_text_and_admin_pages_work() {
    let app = TestApp::spawn().await;
    let b = Browser::new(&app);
    b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let date = tomorrow(&app);
    let evil = "<script>alert('x')</script> & \"'; DROP TABLE reservation;--";
    let booked = b.book(&date, evil, "08:00", "08:30", &["C"]).await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER);
    let day = b.get(&format!("/rooms?date={date}")).await;
    assert!(!day.html.contains("<script>alert"));
    let shown = day.html.split("<strong>").nth(1).unwrap().split("</strong>").next().unwrap();
    assert_eq!(
        shown,
        "&#60;script&#62;alert(&#39;x&#39;)&#60;/script&#62; &#38; &#34;&#39;; DROP TABLE reservation;--"
    );
    let (_, api) = app.get_json(&format!("/api/bookings?date={date}"), TENANT_ONE).await;
    assert_eq!(api["bookings"][0]["title"], evil, "stored literally");

    let report = b.get("/admin/consistency").await;
    assert_eq!(report.status, StatusCode::OK);
    assert!(report.html.contains("모두 0") && report.html.contains("reservation_room_copy_mismatch"));
    app.db().await.execute("UPDATE reservation SET cancelled_at = now(), status = 'CANCELLED'", &[]).await.unwrap();
    let red = b.get("/admin/consistency").await;
    assert!(red.html.contains("문제 있음") && red.html.contains("class=\"bad\""));

    let staff = b.get("/admin/staff").await;
    let made = b
        .post(
            "/admin/keys",
            &[
                ("tenant", "partner"),
                ("role", "integration"),
                ("label", "test"),
                ("csrf_token", &staff.field("csrf_token")),
            ],
        )
        .await;
    assert_eq!(made.status, StatusCode::OK);
    let key = made.html.split("<code>").nth(1).unwrap().split("</code>").next().unwrap().to_owned();
    assert!(key.starts_with("yk_"));
    assert_eq!(app.count("SELECT count(*) FROM api_key WHERE tenant = 'partner'").await, 1);
    let (status, _) = app.get_json("/api/rooms", &key).await;
    assert_eq!(status, StatusCode::OK, "the new key works");
    let again = b.get("/admin/staff").await;
    assert!(!again.html.contains(&key), "shown once");
}

#[tokio::test]
async fn repeated_failed_sign_ins_from_one_browser_lock_its_address_for_a_while() {
    // One browser, one address: its fifth failure locks the address (the
    // per-name limit is higher; `sign_in_throttling` tests both limits apart).
    let app = TestApp::spawn().await;
    let b = Browser::new(&app);
    for i in 0..5 {
        assert_eq!(b.sign_in(ADMIN_USER, &format!("guess-{i}")).await.status, StatusCode::UNAUTHORIZED);
    }
    // Now even the right password is not checked.
    let locked = b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    assert_eq!(locked.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(locked.html.contains("로그인 시도가 너무 많습니다"));
    // The address is locked whatever the name.
    assert_eq!(b.sign_in("nobody", "x").await.status, StatusCode::TOO_MANY_REQUESTS);
    app.clock.advance(chrono::Duration::seconds(61));
    let ok = b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "unlocked after the pause");
    assert_eq!(
        app.count("SELECT count(*) FROM staff_login_throttle WHERE username = 'admin'").await,
        0,
        "success clears the count"
    );
}
