//! ID tokens a real provider would never send (SPEC §16): a small issuer of
//! our own serves discovery, its JWKS and a token endpoint that answers with
//! the token each case crafts. Every verification step has its case — `alg:
//! none`, HMAC keyed with the public key, another issuer or audience, an
//! expired token, one issued too far ahead, another nonce, a broken
//! signature, another state, a callback this browser never started — each
//! refused with no session, beside a well-formed token that signs in (so a
//! refusal is the check's doing, not a broken setup). An unknown key id
//! fetches the keys once, so a rotation is followed.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use actix_web::{web, App, HttpResponse, HttpServer};
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, Mac};
use openidconnect::core::{CoreJwsSigningAlgorithm, CoreRsaPrivateSigningKey};
use openidconnect::{JsonWebKeyId, PrivateSigningKey};
use reqwest::StatusCode;
use serde_json::{json, Value};
use sha2::Sha256;
use yeyak::clock::Clock;

use crate::helpers::*;
use crate::sso_support::{oidc_settings, wait_discovered, Browser};

/// An RSA key (PKCS#1 PEM, as the crate reads it) from openssl.
fn rsa_key(kid: &str) -> CoreRsaPrivateSigningKey {
    let out = Command::new("openssl").args(["genrsa", "-traditional", "2048"]).output().expect("openssl is installed");
    assert!(out.status.success());
    CoreRsaPrivateSigningKey::from_pem(&String::from_utf8(out.stdout).unwrap(), Some(JsonWebKeyId::new(kid.into())))
        .unwrap()
}

struct Issuer {
    issuer: String,
    jwks: Mutex<Value>,
    token: Mutex<Option<String>>,
    jwks_fetches: AtomicUsize,
    token_requests: AtomicUsize,
}

/// The hostile issuer: its keys `k1` (published) and `k2` (published only
/// when a case says so).
struct Hostile {
    state: Arc<Issuer>,
    k1: CoreRsaPrivateSigningKey,
    k2: CoreRsaPrivateSigningKey,
}

fn public(key: &CoreRsaPrivateSigningKey) -> Value {
    serde_json::to_value(key.as_verification_key()).unwrap()
}

impl Hostile {
    async fn start() -> Hostile {
        let (k1, k2) = tokio::task::spawn_blocking(|| (rsa_key("k1"), rsa_key("k2"))).await.unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Issuer {
            issuer,
            jwks: Mutex::new(json!({ "keys": [public(&k1)] })),
            token: Mutex::new(None),
            jwks_fetches: AtomicUsize::new(0),
            token_requests: AtomicUsize::new(0),
        });
        let data = web::Data::from(state.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .route("/.well-known/openid-configuration", web::get().to(discovery))
                .route("/jwks", web::get().to(jwks))
                .route("/token", web::post().to(token))
        })
        .workers(1)
        .listen(listener)
        .unwrap()
        .run();
        tokio::spawn(server);
        Hostile { state, k1, k2 }
    }

    fn publish(&self, keys: &[&CoreRsaPrivateSigningKey]) {
        *self.state.jwks.lock().unwrap() = json!({ "keys": keys.iter().map(|k| public(k)).collect::<Vec<_>>() });
    }
}

async fn discovery(s: web::Data<Issuer>) -> HttpResponse {
    let i = &s.issuer;
    HttpResponse::Ok().json(json!({
        "issuer": i, "authorization_endpoint": format!("{i}/authorize"), "token_endpoint": format!("{i}/token"),
        "jwks_uri": format!("{i}/jwks"), "response_types_supported": ["code"], "subject_types_supported": ["public"],
        // Offered, and refused all the same.
        "id_token_signing_alg_values_supported": ["RS256", "HS256", "none"]
    }))
}

async fn jwks(s: web::Data<Issuer>) -> HttpResponse {
    s.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    HttpResponse::Ok().json(s.jwks.lock().unwrap().clone())
}

async fn token(s: web::Data<Issuer>) -> HttpResponse {
    s.token_requests.fetch_add(1, Ordering::SeqCst);
    let id_token = s.token.lock().unwrap().clone();
    HttpResponse::Ok()
        .json(json!({ "access_token": "at-1", "token_type": "Bearer", "expires_in": 300, "id_token": id_token }))
}

/// A compact JWS with any header and claims, signed by `sign`.
fn jws(header: &Value, claims: &Value, sign: impl FnOnce(&[u8]) -> Vec<u8>) -> String {
    let input = format!("{}.{}", B64.encode(header.to_string()), B64.encode(claims.to_string()));
    let signature = sign(input.as_bytes());
    format!("{input}.{}", B64.encode(signature))
}

fn rs256(key: &CoreRsaPrivateSigningKey) -> impl FnOnce(&[u8]) -> Vec<u8> + '_ {
    move |input| key.sign(&CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256, input).unwrap()
}

/// What a case needs to craft its token.
struct Ctx<'a> {
    issuer: &'a str,
    nonce: String,
    now: DateTime<Utc>,
}

impl Ctx<'_> {
    /// Claims a well-behaved provider would send.
    fn claims(&self) -> Value {
        json!({
            "iss": self.issuer, "aud": "yeyak", "sub": "hana-1", "nonce": self.nonce,
            "iat": self.now.timestamp(), "exp": (self.now + Duration::minutes(5)).timestamp(),
            "preferred_username": "hana", "name": "Hana Cho", "email": "hana@example.com", "email_verified": true,
            "groups": ["yeyak-admins"]
        })
    }
}

fn rs_header(kid: &str) -> Value {
    json!({ "alg": "RS256", "typ": "JWT", "kid": kid })
}

/// One sign-in whose token endpoint answers `craft`'s token: yeyak's status.
async fn attempt(app: &TestApp, hostile: &Hostile, craft: impl FnOnce(&Ctx) -> String) -> StatusCode {
    let browser = Browser::new();
    let start = browser.manual.get(app.url("/auth/oidc/start?next=/my")).send().await.unwrap();
    assert_eq!(start.status(), StatusCode::SEE_OTHER);
    let to = url::Url::parse(start.headers()["location"].to_str().unwrap()).unwrap();
    let q: std::collections::HashMap<_, _> = to.query_pairs().into_owned().collect();
    assert_eq!(q["code_challenge_method"], "S256", "PKCE S256");
    let ctx = Ctx { issuer: &hostile.state.issuer, nonce: q["nonce"].clone(), now: app.clock.now() };
    *hostile.state.token.lock().unwrap() = Some(craft(&ctx));
    let callback = format!("/auth/oidc/callback?code=c-1&state={}", q["state"]);
    browser.manual.get(app.url(&callback)).send().await.unwrap().status()
}

async fn hostile_app() -> (Hostile, TestApp) {
    let hostile = Hostile::start().await;
    let issuer = hostile.state.issuer.clone();
    let app = TestApp::spawn_with(|c| oidc_settings(c, &issuer, "yeyak")).await;
    wait_discovered(&app).await;
    (hostile, app)
}

async fn sessions(app: &TestApp) -> i64 {
    app.count("SELECT count(*) FROM staff_session").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_forged_or_wrong_id_token_is_refused_with_no_session() {
    let (hostile, app) = hostile_app().await;
    let ok = |c: &Ctx| jws(&rs_header("k1"), &c.claims(), rs256(&hostile.k1));
    assert_eq!(attempt(&app, &hostile, ok).await, StatusCode::SEE_OTHER, "control: a well-formed token signs in");
    assert_eq!(sessions(&app).await, 1);
    app.db().await.execute("DELETE FROM staff_session", &[]).await.unwrap();

    type Craft<'a> = Box<dyn FnOnce(&Ctx) -> String + 'a>;
    let (k1, k2) = (&hostile.k1, &hostile.k2);
    let with = |change: fn(&mut Value, &Ctx)| -> Craft {
        Box::new(move |c: &Ctx| {
            let mut claims = c.claims();
            change(&mut claims, c);
            jws(&rs_header("k1"), &claims, rs256(k1))
        })
    };
    let public_jwk = public(&hostile.k1).to_string();
    let cases: Vec<(&str, Craft)> = vec![
        ("alg none", Box::new(|c: &Ctx| jws(&json!({"alg": "none", "typ": "JWT"}), &c.claims(), |_| Vec::new()))),
        (
            "HS256 keyed with the provider's public key",
            Box::new(|c: &Ctx| {
                jws(&json!({"alg": "HS256", "typ": "JWT", "kid": "k1"}), &c.claims(), |input| {
                    let mut mac = Hmac::<Sha256>::new_from_slice(public_jwk.as_bytes()).unwrap();
                    mac.update(input);
                    mac.finalize().into_bytes().to_vec()
                })
            }),
        ),
        ("another issuer", with(|v, _| v["iss"] = json!("https://evil.example"))),
        ("another audience", with(|v, _| v["aud"] = json!(["someone-else"]))),
        ("expired", with(|v, c| v["exp"] = json!((c.now - Duration::seconds(1)).timestamp()))),
        ("issued two minutes ahead", with(|v, c| v["iat"] = json!((c.now + Duration::seconds(120)).timestamp()))),
        ("another nonce", with(|v, _| v["nonce"] = json!("not-the-nonce"))),
        (
            "no nonce",
            with(|v, _| {
                v.as_object_mut().unwrap().remove("nonce");
            }),
        ),
        (
            "signed by a key that is not the provider's",
            Box::new(|c: &Ctx| jws(&rs_header("k1"), &c.claims(), rs256(k2))),
        ),
        (
            "a claim changed after signing",
            Box::new(|c: &Ctx| {
                let token = jws(&rs_header("k1"), &c.claims(), rs256(k1));
                let parts: Vec<&str> = token.split('.').collect();
                let mut claims = c.claims();
                claims["sub"] = json!("someone-else");
                format!("{}.{}.{}", parts[0], B64.encode(claims.to_string()), parts[2])
            }),
        ),
    ];
    for (case, craft) in cases {
        let status = attempt(&app, &hostile, craft).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{case}");
        assert_eq!(sessions(&app).await, 0, "{case}: no session");
    }
    assert_eq!(
        app.count("SELECT count(*) FROM staff_user WHERE source = 'oidc'").await,
        1,
        "only the control's account"
    );
    // A little clock skew is fine.
    let skewed = with(|v, c| v["iat"] = json!((c.now + Duration::seconds(30)).timestamp()));
    assert_eq!(attempt(&app, &hostile, skewed).await, StatusCode::SEE_OTHER, "30 s ahead is within the 60 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_with_another_state_or_from_another_browser_never_reaches_the_token_endpoint() {
    let (hostile, app) = hostile_app().await;
    let browser = Browser::new();
    let start = browser.manual.get(app.url("/auth/oidc/start")).send().await.unwrap();
    let to = url::Url::parse(start.headers()["location"].to_str().unwrap()).unwrap();
    let state = to.query_pairs().find(|(k, _)| k == "state").unwrap().1.into_owned();
    let res = browser.manual.get(app.url("/auth/oidc/callback?code=c-1&state=forged")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert!(res.text().await.unwrap().contains("로그인하지 못했습니다"));
    // The real state, but in a browser that never started this sign-in.
    let stranger = Browser::new();
    let res =
        stranger.manual.get(app.url(&format!("/auth/oidc/callback?code=c-1&state={state}"))).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    // The provider's own refusal.
    let res = browser
        .manual
        .get(app.url(&format!("/auth/oidc/callback?error=access_denied&state={state}")))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert_eq!(hostile.state.token_requests.load(Ordering::SeqCst), 0, "no code was exchanged");
    assert_eq!(sessions(&app).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_key_id_fetches_the_keys_once() {
    let (hostile, app) = hostile_app().await;
    assert_eq!(hostile.state.jwks_fetches.load(Ordering::SeqCst), 1, "discovery fetched the keys");
    // The provider rotates to k2 after yeyak cached k1.
    hostile.publish(&[&hostile.k1, &hostile.k2]);
    let rotated = |c: &Ctx| jws(&rs_header("k2"), &c.claims(), rs256(&hostile.k2));
    assert_eq!(attempt(&app, &hostile, rotated).await, StatusCode::SEE_OTHER);
    assert_eq!(hostile.state.jwks_fetches.load(Ordering::SeqCst), 2);
    // Cached now: no further fetch.
    let again = |c: &Ctx| jws(&rs_header("k2"), &c.claims(), rs256(&hostile.k2));
    assert_eq!(attempt(&app, &hostile, again).await, StatusCode::SEE_OTHER);
    assert_eq!(hostile.state.jwks_fetches.load(Ordering::SeqCst), 2);
    // A key id nobody publishes: one more fetch, then refused.
    let unknown = |c: &Ctx| jws(&rs_header("k9"), &c.claims(), rs256(&hostile.k1));
    assert_eq!(attempt(&app, &hostile, unknown).await, StatusCode::UNAUTHORIZED);
    assert_eq!(hostile.state.jwks_fetches.load(Ordering::SeqCst), 3, "once, not in a loop");
    // Groups in the ID token itself (no userinfo here) made hana an admin.
    assert_eq!(
        crate::sso_support::linked_account(&app, "hana-1").await,
        Some(("hana".into(), true, Some("hana@example.com".into()), "oidc".into()))
    );
}
