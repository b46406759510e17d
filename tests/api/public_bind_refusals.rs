//! On a non-loopback bind yeyak refuses to start (SPEC §20) while a secret
//! is too short or an active admin still has the development password.

use reqwest::StatusCode;

use crate::helpers::*;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

/// Settings that pass every round-two refusal; only `tweak` makes one unsafe.
fn public_config(tweak: impl FnOnce(&mut Vec<String>)) -> yeyak::config::Config {
    use clap::Parser;
    let mut args: Vec<String> = [
        "yeyak",
        "--bind",
        "0.0.0.0:8080",
        "--admin-password",
        "a-real-admin-password",
        "--secret-key",
        "a-real-secret-key-that-is-long-enough-1",
        "--api-keys",
        "ops:admin:a-real-api-key-of-24-chars-or-more",
    ]
    .map(str::to_owned)
    .to_vec();
    tweak(&mut args);
    yeyak::config::Config::try_parse_from(args).expect("parses")
}

fn set(args: &mut [String], flag: &str, value: &str) {
    let i = args.iter().position(|a| a == flag).unwrap();
    args[i + 1] = value.to_owned();
}

#[test]
fn a_public_bind_refuses_short_secrets() {
    assert!(public_config(|_| {}).exposed_defaults().is_empty());
    for (flag, value, var) in [
        ("--admin-password", "elevenchars", "YEYAK_ADMIN_PASSWORD"),
        ("--secret-key", "a-secret-of-thirty-one-chars-xx", "YEYAK_SECRET_KEY"),
        ("--api-keys", "ops:admin:a-key-of-23-characters1", "YEYAK_API_KEYS"),
        ("--api-keys", "ops:admin:a-real-api-key-of-24-chars-or-more,t1:integration:short-but-ok-8", "YEYAK_API_KEYS"),
    ] {
        let config = public_config(|a| set(a, flag, value));
        assert_eq!(config.exposed_defaults(), [var], "{flag} {value}");
        // Loopback keeps working with anything (tests and development).
        let mut local = config.clone();
        local.bind = "127.0.0.1:8080".parse().unwrap();
        assert!(local.exposed_defaults().is_empty());
    }
    // At the limits they pass.
    let config = public_config(|a| {
        set(a, "--admin-password", "twelve-chars");
        set(a, "--secret-key", "a-secret-of-thirty-two-chars-xxx");
        set(a, "--api-keys", "ops:admin:a-key-of-24-characters-x");
    });
    assert!(config.exposed_defaults().is_empty());
}

#[tokio::test]
async fn a_public_bind_refuses_while_an_old_admin_keeps_the_development_password() {
    // The first start made `admin` with the development password; the
    // installation then renamed YEYAK_ADMIN_USER and set real secrets.
    let app = TestApp::spawn().await;
    let db = app.database_url();
    let start = |db: String| {
        tokio::task::spawn_blocking(move || {
            crate::accounts::run_binary(&[
                ("YEYAK_BIND", "0.0.0.0:0"),
                ("DATABASE_URL", &db),
                ("YEYAK_ADMIN_USER", "boss"),
                ("YEYAK_ADMIN_PASSWORD", "a-real-admin-password"),
                ("YEYAK_API_KEYS", "ops:admin:a-real-api-key-of-24-chars-or-more"),
                ("YEYAK_SECRET_KEY", "a-real-secret-key-that-is-long-enough-1"),
                ("YEYAK_BACKGROUND", "false"),
            ])
        })
    };
    let (code, err) = start(db.clone()).await.unwrap();
    assert_eq!(code, Some(2), "it must not listen: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("`admin`") && err.contains("development password"), "{err}");
    // The admin changes that password (on a loopback start): now it starts.
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let account = admin.get("/account").await;
    let changed = admin
        .post(
            "/account/password",
            &[
                ("current_password", ADMIN_PASSWORD),
                ("new_password", "a-better-admin-password"),
                ("csrf_token", &account.field("csrf_token")),
            ],
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK);
    let (code, log) = start(db).await.unwrap();
    assert_eq!(code, None, "it listened: {log}");
}
