//! What every request carries: `Accept-Language`, `Authorization`, cookies,
//! and the headers the JSON API reads.

use actix_web::http::header::{self};
use base64::Engine;

use crate::auth::oidc::Pending;
use crate::auth::{staff, throttle, OwnerId};
use crate::i18n::Lang;
use crate::idempotency::IdempotencyKey;
use crate::rooms::booking::PageMark;
use crate::transport::{self, Transport};
use crate::web::{self};

use super::inputs::{now, request_with, text, SECRET};

// ----------------------------------------------------------------- headers

/// `Accept-Language` as the JSON, CalDAV and page doors read it
/// (`Lang::from_accept_language` of the visible-ASCII header), and the
/// page's decision (`web::language::decide`) agreeing with it.
pub fn accept_language(data: &[u8]) {
    if let Some(text) = text(data) {
        let _ = Lang::from_accept_language(text);
        for item in text.split(',') {
            let _ = Lang::parse(item);
        }
    }
    let Some(req) = request_with(header::ACCEPT_LANGUAGE, data) else { return };
    let header = req.headers().get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    let expected = header.and_then(Lang::from_accept_language).unwrap_or(Lang::Ko);
    assert_eq!(web::language::decide(&req), expected, "the page and the API choose alike");
}

/// `Authorization`: CalDAV's Basic (`dav::auth::basic`) and the JSON API's
/// Bearer (`http::extract::bearer`); what each reads, written back, reads
/// the same.
pub fn authorization(data: &[u8]) {
    let Some(req) = request_with(header::AUTHORIZATION, data) else { return };
    if let Some((user, password)) = crate::dav::auth::basic(&req) {
        assert!(!user.contains(':'), "a Basic username holds no colon");
        let _ = staff::valid_username(&user);
        let _ = throttle::Attempt { username: Some(&user), address: None, known_device: false }.turn_keys();
        let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        let again = request_with(header::AUTHORIZATION, format!("Basic {encoded}").as_bytes())
            .and_then(|r| crate::dav::auth::basic(&r));
        assert_eq!(again, Some((user, password)), "Basic credentials read back");
    }
    if let Some(secret) = crate::http::extract::bearer(&req) {
        assert!(!secret.is_empty() && secret.trim() == secret, "a bearer secret is trimmed and not empty");
        let again = request_with(header::AUTHORIZATION, format!("Bearer {secret}").as_bytes())
            .and_then(|r| crate::http::extract::bearer(&r));
        assert_eq!(again, Some(secret), "a bearer secret reads back");
    }
}

/// `Cookie`: the session (`transport::session_token`), the remembered
/// language (`web::language::decide`), the device mark
/// (`throttle::is_device_of`) and the pending company sign-in
/// (`oidc::Pending::open`), each read from every cookie sent.
pub fn cookies(data: &[u8]) {
    let Some(req) = request_with(header::COOKIE, data) else { return };
    for https in [false, true] {
        let _ = transport::session_token(&req, &Transport { https, trust_proxy: false });
    }
    let _ = web::language::decide(&req);
    let Ok(cookies) = req.cookies() else { return };
    for c in cookies.iter() {
        let value = c.value();
        let _ = throttle::is_device_of(SECRET, value, "kim", now());
        let _ = Pending::open(SECRET, value, now());
        let mark = throttle::device_mark(SECRET, value, now());
        assert!(throttle::is_device_of(SECRET, &mark, value, now()), "a fresh device mark is its person's");
    }
}

/// The other request headers the JSON API reads into values:
/// `X-Reservation-Owner`, `Idempotency-Key`, and the client address of a
/// trusted proxy's `Forwarded` / `X-Forwarded-For`; and the list's `cursor`.
pub fn headers(data: &[u8]) {
    if let Some(text) = text(data) {
        let _ = OwnerId::parse(text);
        let _ = IdempotencyKey::parse(text);
        if let Some(mark) = PageMark::decode(text) {
            let again = PageMark::decode(&mark.encode()).map(|m| (m.starts_at, m.id));
            assert_eq!(again, Some((mark.starts_at, mark.id)), "a cursor reads back");
        }
    }
    let trusted = Transport { https: false, trust_proxy: true };
    for name in [header::FORWARDED, header::X_FORWARDED_FOR] {
        if let Some(req) = request_with(name, data) {
            let _ = trusted.client_ip(&req);
        }
    }
}
