//! Sign-in throttling in numbers (SPEC §20): per address and per username,
//! a throttled attempt checks and counts nothing, a person's own browser
//! stays open to them, hashing waits in a bounded queue, and wrong current
//! passwords on the account page are throttled like sign-ins.

use reqwest::StatusCode;

use crate::accounts::add_person;
use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

/// A browser at one address (behind a trusted proxy): a cookie jar.
fn browser_client() -> reqwest::Client {
    reqwest::Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

fn field_of(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker).unwrap_or_else(|| panic!("no field {name}")) + marker.len();
    html[start..].split('"').next().unwrap().to_owned()
}

async fn sign_in_from(
    app: &TestApp,
    client: &reqwest::Client,
    addr: &str,
    user: &str,
    password: &str,
) -> reqwest::Response {
    let login = client.get(app.url("/login")).header("X-Forwarded-For", addr).send().await.unwrap();
    let csrf = field_of(&login.text().await.unwrap(), "csrf_token");
    client
        .post(app.url("/login"))
        .header("X-Forwarded-For", addr)
        .form(&[("username", user), ("password", password), ("csrf_token", &csrf)])
        .send()
        .await
        .unwrap()
}

fn retry_after(res: &reqwest::Response) -> u64 {
    let value = res.headers().get("retry-after").unwrap_or_else(|| panic!("429 without Retry-After"));
    value.to_str().unwrap().parse().unwrap()
}

/// Fails sign-ins with wrong passwords until one is refused unchecked;
/// returns how many failed first, and the refusal.
async fn fail_until_throttled(
    app: &TestApp,
    addr: impl Fn(usize) -> String,
    user: &str,
    limit: usize,
) -> (usize, reqwest::Response) {
    for i in 0..limit {
        let res = sign_in_from(app, &browser_client(), &addr(i), user, &format!("wrong-guess-{i}")).await;
        match res.status() {
            StatusCode::UNAUTHORIZED => continue,
            StatusCode::TOO_MANY_REQUESTS => return (i, res),
            other => panic!("attempt {i}: {other}"),
        }
    }
    panic!("{limit} failures for {user} and still no throttle");
}

#[tokio::test]
async fn sign_in_throttles_an_address_and_a_username_in_numbers() {
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    add_person(&admin, "kim", "").await;
    // One address: throttled after 5 to 10 failures.
    let (failures, refused) = fail_until_throttled(&app, |_| "203.0.113.5".into(), "nobody", 12).await;
    assert!((5..=10).contains(&failures), "{failures} failures before the address was throttled");
    assert!(retry_after(&refused) > 0);
    // A throttled attempt checks no password and is not counted.
    let counted =
        || async { app.count("SELECT failures::int8 FROM address_login_throttle WHERE address = '203.0.113.5'").await };
    let before = counted().await;
    let right = sign_in_from(&app, &browser_client(), "203.0.113.5", "kim", "correct-horse-1").await;
    assert_eq!(right.status(), StatusCode::TOO_MANY_REQUESTS, "the right password was checked");
    assert!(retry_after(&right) > 0);
    assert_eq!(counted().await, before, "the throttled attempt was counted");
    // The address lock is the address's: kim signs in from another one, and
    // the name "nobody" was not locked by its failures there.
    let other = sign_in_from(&app, &browser_client(), "203.0.113.6", "kim", "correct-horse-1").await;
    assert_eq!(other.status(), StatusCode::SEE_OTHER, "another address is not locked");
    assert_eq!(
        app.count("SELECT count(*) FROM staff_login_throttle WHERE username = 'nobody' AND locked_until IS NOT NULL")
            .await,
        0,
        "five failures lock the address, not the name"
    );
    // One username from many addresses, one failure each (no address limit
    // is reached): throttled after 10 to 20 failures.
    let (failures, refused) = fail_until_throttled(&app, |i| format!("198.51.100.{}", i + 1), "kim", 25).await;
    assert!((10..=20).contains(&failures), "{failures} failures before the username was throttled");
    assert!(retry_after(&refused) > 0);
    let fresh = sign_in_from(&app, &browser_client(), "198.51.100.200", "kim", "correct-horse-1").await;
    assert_eq!(fresh.status(), StatusCode::TOO_MANY_REQUESTS, "a fresh address is refused for that name");
    // Other names are unaffected, from those same addresses.
    let admin_there = sign_in_from(&app, &browser_client(), "198.51.100.3", ADMIN_USER, ADMIN_PASSWORD).await;
    assert_eq!(admin_there.status(), StatusCode::SEE_OTHER, "the name lock is the name's");
}

#[tokio::test]
async fn a_malformed_username_counts_against_its_address() {
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let (failures, refused) = fail_until_throttled(&app, |_| "192.0.2.77".into(), "not a name!", 12).await;
    assert!((5..=10).contains(&failures), "{failures}");
    assert!(retry_after(&refused) > 0);
    // The address is throttled for well-formed names too.
    let res = sign_in_from(&app, &browser_client(), "192.0.2.77", ADMIN_USER, ADMIN_PASSWORD).await;
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn strangers_on_many_addresses_cannot_lock_a_person_out_of_their_own_browser() {
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    add_person(&admin, "kim", "").await;
    add_person(&admin, "mallory", "").await;
    // Kim signs in on her laptop: it gets a device cookie (HttpOnly, no password in it).
    let laptop = browser_client();
    let res = sign_in_from(&app, &laptop, "10.9.9.9", "kim", "correct-horse-1").await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let device: Vec<String> = res
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .filter(|c| c.contains("device"))
        .collect();
    // Mallory signs in as herself: her browser is a device of hers only.
    let mallorys = browser_client();
    assert_eq!(
        sign_in_from(&app, &mallorys, "10.6.6.6", "mallory", "correct-horse-1").await.status(),
        StatusCode::SEE_OTHER
    );
    // Strangers, one guess each from 25 addresses, lock the name.
    let (_, refused) = fail_until_throttled(&app, |i| format!("10.0.0.{}", i + 1), "kim", 25).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let elsewhere = sign_in_from(&app, &browser_client(), "10.8.8.8", "kim", "correct-horse-1").await;
    assert_eq!(elsewhere.status(), StatusCode::TOO_MANY_REQUESTS, "the lock holds for other browsers");
    let as_mallory = sign_in_from(&app, &mallorys, "10.6.6.6", "kim", "correct-horse-1").await;
    assert_eq!(as_mallory.status(), StatusCode::TOO_MANY_REQUESTS, "another person's device cookie is no pass");
    // Kim's own laptop still signs her in.
    let res = sign_in_from(&app, &laptop, "10.9.9.9", "kim", "correct-horse-1").await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER, "the strangers locked kim out of her own laptop");
    assert_eq!(device.len(), 1, "one device cookie");
    assert!(device[0].contains("HttpOnly") && !device[0].contains("correct-horse"), "{}", device[0]);
}

#[tokio::test]
async fn a_crowd_of_sign_ins_beyond_the_hashing_queue_gets_503_at_once() {
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let login = Browser::new(&app).get("/login").await;
    let (csrf, nonce) = (login.field("csrf_token"), login.cookie_value("yeyak_csrf").unwrap());
    let crowd = (0..150).map(|i| {
        let (app, csrf, nonce) = (&app, csrf.clone(), nonce.clone());
        async move {
            let res = app
                .http
                .post(app.url("/login"))
                .header("Cookie", format!("yeyak_csrf={nonce}"))
                .header("X-Forwarded-For", format!("10.2.{}.{}", i / 100, i % 100 + 1))
                .form(&[
                    ("username", format!("person{i}")),
                    ("password", "wrong-password".into()),
                    ("csrf_token", csrf),
                ])
                .send()
                .await
                .unwrap();
            let retry = res.headers().contains_key("retry-after");
            (res.status(), retry)
        }
    });
    let answers = futures_util::future::join_all(crowd).await;
    let busy = answers.iter().filter(|(s, _)| *s == StatusCode::SERVICE_UNAVAILABLE).count();
    let checked = answers.iter().filter(|(s, _)| *s == StatusCode::UNAUTHORIZED).count();
    assert_eq!(busy + checked, answers.len(), "{answers:?}");
    assert!(busy > 0, "150 sign-ins at once all waited for a hashing slot");
    assert!(checked >= 2, "{answers:?}");
    assert!(answers.iter().filter(|(s, _)| *s == StatusCode::SERVICE_UNAVAILABLE).all(|(_, retry)| *retry));
}

#[tokio::test]
async fn wrong_current_passwords_on_the_account_page_are_throttled() {
    let app = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    add_person(&admin, "kim", "").await;
    // Someone holding kim's session (not her password) guesses it.
    let stolen = browser_client();
    assert_eq!(sign_in_from(&app, &stolen, "10.7.7.7", "kim", "correct-horse-1").await.status(), StatusCode::SEE_OTHER);
    let change = |current: String, new: &'static str| {
        let (app, stolen) = (&app, &stolen);
        async move {
            let page = stolen.get(app.url("/account")).header("X-Forwarded-For", "10.7.7.7").send().await.unwrap();
            let csrf = field_of(&page.text().await.unwrap(), "csrf_token");
            stolen
                .post(app.url("/account/password"))
                .header("X-Forwarded-For", "10.7.7.7")
                .form(&[("current_password", current.as_str()), ("new_password", new), ("csrf_token", &csrf)])
                .send()
                .await
                .unwrap()
        }
    };
    let mut failures = 0;
    let refused = loop {
        let res = change(format!("guess-number-{failures}"), "taken-over-password").await;
        match res.status() {
            StatusCode::BAD_REQUEST => failures += 1,
            StatusCode::TOO_MANY_REQUESTS => break res,
            other => panic!("{other}"),
        }
        assert!(failures <= 12, "{failures} wrong current passwords and no throttle");
    };
    assert!((5..=10).contains(&failures), "{failures}");
    assert!(retry_after(&refused) > 0);
    // Even the right one is not checked now, and nothing changed.
    let right = change("correct-horse-1".into(), "taken-over-password").await;
    assert_eq!(right.status(), StatusCode::TOO_MANY_REQUESTS);
    let elsewhere = sign_in_from(&app, &browser_client(), "10.5.5.5", "kim", "correct-horse-1").await;
    assert_eq!(elsewhere.status(), StatusCode::SEE_OTHER, "the password is still kim's");
}
