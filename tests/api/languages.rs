//! Korean and English (SPEC §19): both catalogues hold the same keys, and
//! the JSON API's message follows `Accept-Language` (Korean by default)
//! while its code, details and status stay the contract.

use reqwest::StatusCode;
use serde_json::{json, Value};
use yeyak::error::ErrorCode;
use yeyak::i18n::Lang;

use crate::helpers::*;

/// Every key of a language's catalogue files (`key = …` lines).
fn keys(lang: Lang) -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/i18n/locales").join(lang.tag());
    let mut keys = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let source = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in source.lines() {
            let Some((key, _)) = line.split_once(" =") else { continue };
            if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                keys.push(key.to_owned());
            }
        }
    }
    keys.sort();
    keys
}

#[test]
fn both_catalogues_hold_the_same_keys_and_a_message_for_every_error_code() {
    let (ko, en) = (keys(Lang::Ko), keys(Lang::En));
    assert!(!ko.is_empty());
    let only_ko: Vec<&String> = ko.iter().filter(|k| !en.contains(k)).collect();
    let only_en: Vec<&String> = en.iter().filter(|k| !ko.contains(k)).collect();
    assert!(only_ko.is_empty() && only_en.is_empty(), "missing in en: {only_ko:?}; missing in ko: {only_en:?}");
    for code in ErrorCode::ALL {
        let name = serde_json::to_value(code).unwrap().as_str().unwrap().to_owned();
        for lang in Lang::ALL {
            assert!(
                yeyak::i18n::api::message(lang, &name, &json!({}), "").is_some(),
                "{lang:?} has no message for {name} without details"
            );
        }
    }
}

/// Every catalogue key the sources name: `i18n.t…("key"` in the templates,
/// and in the Rust sources every string literal shaped like a key whose
/// first part is one of the catalogues' (`"day-notice-booked"`), so a key
/// chosen by a `match` counts too. Keys made at run time (`api-{code}`) are
/// checked above, code by code.
fn keys_used() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let areas: std::collections::BTreeSet<String> = keys(Lang::Ko)
        .into_iter()
        .filter(|k| !k.starts_with("api-"))
        .map(|k| k.split('-').next().unwrap().to_owned())
        .collect();
    let mut used = Vec::new();
    let mut files = vec![root.join("src"), root.join("templates")];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let name = path.display().to_string();
        let source = std::fs::read_to_string(&path).unwrap_or_default();
        let shaped = |s: &str| {
            s.split('-').count() > 1
                && s.split('-')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
        };
        if name.ends_with(".html") {
            for part in source.split("i18n.t").skip(1) {
                let Some(rest) = part.trim_start_matches(['1', '2', '3']).strip_prefix("(\"") else { continue };
                used.push((rest.split('"').next().unwrap().to_owned(), name.clone()));
            }
        } else if name.ends_with(".rs") && !name.contains("/src/dav/") {
            // (The CalDAV door's literals are XML element names such as
            // `booking-id`; its messages come from the API catalogue by code.)
            for (i, literal) in source.split('"').enumerate() {
                if i % 2 == 1 && shaped(literal) && areas.contains(literal.split('-').next().unwrap()) {
                    used.push((literal.to_owned(), name.clone()));
                }
            }
        }
    }
    used
}

#[test]
fn every_key_the_templates_and_the_code_use_is_in_both_catalogues() {
    let used = keys_used();
    assert!(used.len() > 300, "the sources use the catalogue: {}", used.len());
    assert!(used.iter().any(|(k, f)| k == "day-notice-booked" && f.ends_with("day.rs")));
    assert!(used.iter().any(|(k, f)| k == "nav-logout" && f.ends_with("base.html")));
    for lang in Lang::ALL {
        let known = keys(lang);
        let missing: Vec<&(String, String)> = used.iter().filter(|(k, _)| !known.contains(k)).collect();
        assert!(missing.is_empty(), "missing in {lang:?}: {missing:#?}");
    }
}

async fn conflict(app: &TestApp, idem: &str, accept: Option<&str>) -> (StatusCode, Value, reqwest::header::HeaderMap) {
    let mut req = app
        .request(reqwest::Method::POST, "/api/bookings", TENANT_ONE, Some("bob"))
        .header("Idempotency-Key", idem)
        .json(&booking("겹침", &["A"], &at(1, 9, 0), &at(1, 10, 0)));
    if let Some(accept) = accept {
        req = req.header("Accept-Language", accept);
    }
    let res = req.send().await.unwrap();
    let headers = res.headers().clone();
    let (status, body) = body(res).await;
    (status, body, headers)
}

#[tokio::test]
async fn the_api_message_follows_accept_language_and_the_code_stays() {
    let app = TestApp::spawn().await;
    let (status, _) = body(
        app.create_booking(TENANT_ONE, "alice", "first", &booking("먼저", &["A"], &at(1, 9, 0), &at(1, 10, 0))).await,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);

    let (status, korean, headers) = conflict(&app, "k-none", None).await;
    assert_eq!((status, korean["code"].as_str()), (StatusCode::CONFLICT, Some("ROOM_TIME_TAKEN")));
    assert_eq!(korean["message"], "이미 예약된 시간입니다", "Korean when nothing is asked");
    assert_eq!(headers["content-language"], "ko");
    assert!(headers.get_all("vary").iter().any(|v| v.to_str().unwrap().contains("Accept-Language")));

    for (i, (accept, lang, message)) in [
        ("en-US,en;q=0.9", "en", "This time is already booked"),
        ("fr-CH, fr;q=0.9, en;q=0.8", "en", "This time is already booked"),
        ("ko-KR,ko;q=0.9,en;q=0.8", "ko", "이미 예약된 시간입니다"),
        ("en;q=0.3, ko;q=0.7", "ko", "이미 예약된 시간입니다"),
        ("en;q=0", "ko", "이미 예약된 시간입니다"),
        ("de", "ko", "이미 예약된 시간입니다"),
    ]
    .into_iter()
    .enumerate()
    {
        let (status, answer, headers) = conflict(&app, &format!("k-{i}"), Some(accept)).await;
        assert_eq!(status, StatusCode::CONFLICT, "{accept}");
        assert_eq!(answer["message"], message, "{accept}");
        assert_eq!(headers["content-language"], lang, "{accept}");
        assert_eq!((&answer["code"], &answer["details"]), (&korean["code"], &korean["details"]), "{accept}");
    }

    // A refusal replayed from its record answers in the language asked now.
    let (_, first, _) = conflict(&app, "k-replay", None).await;
    let (status, replayed, headers) = conflict(&app, "k-replay", Some("en")).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(headers["idempotency-replayed"], "true");
    assert_eq!(replayed["message"], "This time is already booked");
    assert_eq!((&replayed["code"], &replayed["details"]), (&first["code"], &first["details"]));
}

#[tokio::test]
async fn refusals_made_before_any_handler_follow_it_too() {
    let app = TestApp::spawn().await;
    let ask = |path: &'static str, key: Option<&'static str>, accept: Option<&'static str>| {
        let app = &app;
        async move {
            let mut req = app.http.get(app.url(path));
            if let Some(key) = key {
                req = req.bearer_auth(key);
            }
            if let Some(accept) = accept {
                req = req.header("Accept-Language", accept);
            }
            body(req.send().await.unwrap()).await
        }
    };
    // No key, a wrong key (refused by the authentication middleware), an
    // unknown route, a bad query: Korean by default, English when asked.
    for (path, key) in [
        ("/api/rooms", None),
        ("/api/rooms", Some("yk_wrong")),
        ("/api/nowhere", Some(TENANT_ONE)),
        ("/api/bookings?date=nope", Some(TENANT_ONE)),
    ] {
        let (status, ko) = ask(path, key, None).await;
        let (same, en) = ask(path, key, Some("en")).await;
        assert_eq!(status, same, "{path}");
        assert!(status.is_client_error(), "{path}: {status}");
        assert_eq!((&ko["code"], &ko["details"]), (&en["code"], &en["details"]), "{path}");
        let message = ko["message"].as_str().unwrap();
        assert!(
            message.chars().any(|c| ('\u{AC00}'..='\u{D7A3}').contains(&c)),
            "{path}: Korean by default: {message}"
        );
        let message = en["message"].as_str().unwrap();
        assert!(!message.chars().any(|c| ('\u{AC00}'..='\u{D7A3}').contains(&c)), "{path}: English asked: {message}");
    }
    let (_, unknown) = ask("/api/nowhere", Some(TENANT_ONE), Some("en")).await;
    assert_eq!((unknown["code"].as_str(), unknown["message"].as_str()), (Some("NOT_FOUND"), Some("Not found: route")));
}
