//! What the company sign-in tests share: a real OpenID provider (panva's
//! `oidc-provider`, npm, run by `tests/support/oidc/provider.mjs`), a
//! browser made of reqwest and a cookie jar that walks the provider's own
//! login and consent forms, and the settings that point yeyak at it.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use reqwest::cookie::Jar;
use reqwest::redirect::Policy;
use serde_json::{json, Value};

use crate::helpers::*;

/// Where the provider's npm package lives (its own prefix under
/// `target/node`, so it never races the axe-core install of the browser test).
fn node_modules() -> PathBuf {
    static INSTALLED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/node/oidc");
            let modules = root.join("node_modules");
            if !modules.join("oidc-provider/package.json").exists() {
                let status = Command::new("npm")
                    .args(["install", "--no-audit", "--no-fund", "--prefix"])
                    .arg(&root)
                    .arg("oidc-provider@9")
                    .status()
                    .expect("npm is installed");
                assert!(status.success(), "npm install oidc-provider");
            }
            modules
        })
        .clone()
}

/// The people the provider knows, with their groups.
pub fn users() -> Value {
    json!({
        "alice": {"name": "Alice Kim", "preferred_username": "alice", "email": "alice@example.com",
                  "email_verified": true, "groups": ["office", "yeyak-admins"]},
        "bob": {"name": "Bob Lee", "preferred_username": "bob", "email": "bob@example.com",
                "email_verified": false, "groups": ["office"]},
        "mallory": {"name": "Mallory", "preferred_username": "mallory", "email": "mallory@example.com",
                    "email_verified": true, "groups": ["contractors"]},
        "impostor": {"name": "Not the admin", "preferred_username": "admin", "email": "admin@example.com",
                     "email_verified": true, "groups": ["office"]}
    })
}

/// A running provider; dropping it stops it.
pub struct Provider {
    child: Child,
    pub issuer: String,
    http: reqwest::Client,
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub const CLIENT_SECRET: &str = "yeyak-test-client-secret-0123456789";

impl Provider {
    pub async fn start() -> Provider {
        Provider::start_on(0).await
    }

    /// On a given port (0: any free one).
    pub async fn start_on(port: u16) -> Provider {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/oidc/provider.mjs");
        let modules = tokio::task::spawn_blocking(node_modules).await.unwrap();
        let mut child = Command::new("node")
            .arg(script)
            .env("NODE_MODULES", modules)
            .env("OIDC_USERS", users().to_string())
            .env("PORT", port.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node is installed");
        let stdout = child.stdout.take().unwrap();
        let port = tokio::task::spawn_blocking(move || {
            let mut lines = BufReader::new(stdout).lines();
            let line = lines.next().expect("the provider prints its port").unwrap();
            // Keep reading so the provider never blocks on a full pipe.
            std::thread::spawn(move || for _ in lines {});
            line.strip_prefix("listening ").expect("listening <port>").trim().parse::<u16>().unwrap()
        })
        .await
        .unwrap();
        Provider { child, issuer: format!("http://127.0.0.1:{port}"), http: reqwest::Client::new() }
    }

    /// Registers yeyak at `app` as the clients `yeyak` (RS256) and `yeyak-es` (ES256).
    pub async fn register(&self, app: &TestApp) {
        let client = |id: &str, alg: &str| {
            json!({
                "client_id": id, "client_secret": CLIENT_SECRET,
                "redirect_uris": [app.url("/auth/oidc/callback")],
                "post_logout_redirect_uris": [app.url("/login")],
                "id_token_signed_response_alg": alg,
                "token_endpoint_auth_method": "client_secret_basic",
                "grant_types": ["authorization_code"], "response_types": ["code"]
            })
        };
        let res = self
            .http
            .post(format!("{}/__test/clients", self.issuer))
            .json(&json!([client("yeyak", "RS256"), client("yeyak-es", "ES256")]))
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success());
    }

    pub async fn set_users(&self, users: &Value) {
        let res = self.http.post(format!("{}/__test/users", self.issuer)).json(users).send().await.unwrap();
        assert!(res.status().is_success());
    }

    /// New signing keys: the old ones leave the JWKS at once.
    pub async fn rotate_keys(&self) -> Vec<String> {
        let res = self.http.post(format!("{}/__test/rotate", self.issuer)).send().await.unwrap();
        let body: Value = res.json().await.unwrap();
        body["kids"].as_array().unwrap().iter().map(|k| k.as_str().unwrap().to_owned()).collect()
    }
}

/// yeyak's settings for a provider at `issuer` as client `client_id`.
pub fn oidc_settings(config: &mut yeyak::config::Config, issuer: &str, client_id: &str) {
    config.oidc_issuer = Some(issuer.to_owned());
    config.oidc_client_id = Some(client_id.to_owned());
    config.oidc_client_secret = Some(CLIENT_SECRET.to_owned());
    config.oidc_scopes = "openid profile email groups".into();
    config.oidc_admin_groups = "yeyak-admins".into();
    config.oidc_discovery_retry = std::time::Duration::from_millis(100)..=std::time::Duration::from_millis(200);
}

/// yeyak with company sign-in at `provider` (registered, discovery done).
pub async fn app_with(provider: &Provider, client_id: &str, tweak: impl FnOnce(&mut yeyak::config::Config)) -> TestApp {
    let issuer = provider.issuer.clone();
    let client_id = client_id.to_owned();
    let app = TestApp::spawn_with(move |c| {
        oidc_settings(c, &issuer, &client_id);
        tweak(c);
    })
    .await;
    provider.register(&app).await;
    wait_discovered(&app).await;
    app
}

pub async fn wait_discovered(app: &TestApp) {
    for _ in 0..200 {
        if app.state.oidc.as_ref().is_some_and(|o| o.is_ready()) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("discovery did not succeed");
}

/// A browser: a cookie jar shared by a client that follows redirects and
/// one that does not (to read a `Location`).
pub struct Browser {
    pub follow: reqwest::Client,
    pub manual: reqwest::Client,
}

impl Browser {
    pub fn new() -> Browser {
        let jar = Arc::new(Jar::default());
        let build = |policy| reqwest::Client::builder().cookie_provider(jar.clone()).redirect(policy).build().unwrap();
        Browser { follow: build(Policy::limited(20)), manual: build(Policy::none()) }
    }

    /// Signs in at the provider as `login` from yeyak's start, through the
    /// provider's login and consent pages; the last answer (yeyak's, after
    /// the callback and its redirect).
    pub async fn sign_in(&self, app: &TestApp, login: &str, next: &str) -> reqwest::Response {
        let start = app.url(&format!("/auth/oidc/start?next={next}"));
        let mut res = self.follow.get(start).send().await.unwrap();
        for _ in 0..4 {
            if res.url().as_str().starts_with(&app.address) {
                return res;
            }
            let url = res.url().clone();
            let page = res.text().await.unwrap();
            let action = attribute(&page, "action").expect("a form on the provider's page");
            let prompt = if page.contains("name=\"prompt\" value=\"login\"") { "login" } else { "consent" };
            let form = [("prompt", prompt), ("login", login), ("password", "any")];
            res = self.follow.post(url.join(&action).unwrap()).form(&form).send().await.unwrap();
        }
        panic!("the provider's pages did not lead back to yeyak");
    }
}

/// The first `name="…"` attribute value in an HTML page.
pub fn attribute(page: &str, name: &str) -> Option<String> {
    let start = page.find(&format!("{name}=\""))? + name.len() + 2;
    let end = page[start..].find('"')? + start;
    Some(page[start..end].replace("&amp;", "&"))
}

/// The value of the first `name="…" value="…"` input of a page.
pub fn field(page: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = page.find(&marker).unwrap_or_else(|| panic!("no field {name} in {page}")) + marker.len();
    page[start..].split('"').next().unwrap().to_owned()
}

/// A password sign-in's status (303 signed in, 401 refused).
pub async fn password(app: &TestApp, user: &str, password: &str) -> reqwest::StatusCode {
    crate::web::Browser::new(app).sign_in(user, password).await.status
}

/// The account yeyak keeps for a company subject: (username, admin, email, source).
pub async fn linked_account(app: &TestApp, subject: &str) -> Option<(String, bool, Option<String>, String)> {
    app.db()
        .await
        .query_opt(
            "SELECT u.username, u.is_admin, u.email, u.source FROM staff_user u
             JOIN staff_identity i ON i.user_id = u.id WHERE i.subject = $1",
            &[&subject],
        )
        .await
        .unwrap()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
}
