//! `X-Forwarded-Host` and `X-Forwarded-Proto` are read only behind a trusted
//! proxy, and `YEYAK_PUBLIC_URL` wins over every header (SPEC §20).

use reqwest::StatusCode;

use crate::helpers::*;
use crate::web::{Browser, Page, ADMIN_PASSWORD, ADMIN_USER};

async fn account_feed(app: &TestApp, headers: &[(&str, &str)]) -> String {
    let b = Browser::new(app);
    assert_eq!(b.sign_in(ADMIN_USER, ADMIN_PASSWORD).await.status, StatusCode::SEE_OTHER);
    let mut req = b.client.get(app.url("/account"));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let res = req.send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let html = res.text().await.unwrap();
    feed_address(&Page { status: StatusCode::OK, location: None, cookies: Vec::new(), html })
}

const SPOOFED: [(&str, &str); 3] = [
    ("X-Forwarded-Host", "evil.example"),
    ("X-Forwarded-Proto", "https"),
    ("Forwarded", "host=evil2.example;proto=https"),
];

#[tokio::test]
async fn forwarded_host_and_proto_are_ignored_without_a_trusted_proxy() {
    let plain = TestApp::spawn().await;
    let feed = account_feed(&plain, &SPOOFED).await;
    let host = plain.address.trim_start_matches("http://");
    assert!(feed.starts_with(&format!("http://{host}/ical/me.ics?token=")), "a client chose the feed host: {feed}");

    // Behind a trusted proxy its headers name the address people use.
    let proxied = TestApp::spawn_with(|c| c.trust_proxy = true).await;
    let feed =
        account_feed(&proxied, &[("X-Forwarded-Host", "rooms.proxy.example"), ("X-Forwarded-Proto", "https")]).await;
    assert!(feed.starts_with("https://rooms.proxy.example/ical/me.ics?token="), "{feed}");

    // YEYAK_PUBLIC_URL wins over every header.
    let public = TestApp::spawn_with(|c| {
        c.trust_proxy = true;
        c.public_url = Some(url::Url::parse("http://rooms.example.com").unwrap());
    })
    .await;
    let feed = account_feed(&public, &SPOOFED).await;
    assert!(feed.starts_with("http://rooms.example.com/ical/me.ics?token="), "{feed}");
}
