//! Configuration from the environment (SPEC §1). Every setting is a clap
//! argument backed by an environment variable, so `yeyak --help` lists them all
//! with their defaults.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser};

use crate::identity::ConfiguredKey;

mod defaults;
mod parse;

pub use defaults::{
    ACCESS_LOG_DAYS, DEFAULT_DATABASE_URL, DEV_ADMIN_PASSWORD, DEV_API_KEYS, DEV_SECRET_KEY, DISCOVERY_RETRY,
    MIN_ADMIN_PASSWORD_CHARS, MIN_API_KEY_SECRET_CHARS, MIN_SECRET_KEY_CHARS,
};
pub use parse::{parse_api_keys, ApiKeyList};
use parse::{parse_password_login, parse_public_url};

#[derive(Debug, Clone, Parser)]
#[command(
    name = "yeyak",
    version,
    about = crate::i18n::I18n::new(crate::i18n::Lang::En).t("cli-about")
)]
pub struct Config {
    /// PostgreSQL URL; the database is created if missing and migrated on start.
    /// Several hosts with `target_session_attrs=read-write` follow a failover
    /// (`postgres://h1:5432,h2:5432/yeyak?target_session_attrs=read-write`).
    /// `embedded` runs a private cluster in YEYAK_DATA_DIR; so does the default
    /// when nothing answers at its address.
    #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL, hide_env_values = true)]
    pub database_url: String,

    /// Whether DATABASE_URL was left unset (then the embedded cluster stands in
    /// when nothing answers at the default address).
    #[arg(skip)]
    pub database_url_defaulted: bool,

    /// Data directory of the embedded PostgreSQL cluster (created on first use;
    /// its Unix socket lives there too).
    #[arg(long, env = "YEYAK_DATA_DIR", default_value = "./.yeyak/pg")]
    pub data_dir: PathBuf,

    /// PostgreSQL URL of a standby that serves the day page and `GET /api/bookings`
    /// (docs/SCALING.md §2); unset reads them from DATABASE_URL.
    #[arg(long, env = "YEYAK_READ_DATABASE_URL", hide_env_values = true)]
    pub read_database_url: Option<String>,

    /// Redis URL for admission control; unset means Redis is off.
    #[arg(long, env = "REDIS_URL")]
    pub redis_url: Option<String>,

    /// Listen address (port 0 picks a free port; the chosen address is logged).
    #[arg(long, env = "YEYAK_BIND", default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,

    /// Time zone that the UI shows and reads times in.
    #[arg(long, env = "YEYAK_TIMEZONE", default_value = "Asia/Seoul")]
    pub timezone: chrono_tz::Tz,

    /// API keys as `tenant:role:secret,…` with role `integration` or `admin`.
    #[arg(long, env = "YEYAK_API_KEYS", default_value = DEV_API_KEYS, value_parser = parse_api_keys, hide_env_values = true)]
    pub api_keys: ApiKeyList,

    /// First admin staff login, created if missing.
    #[arg(long, env = "YEYAK_ADMIN_USER", default_value = "admin")]
    pub admin_user: String,

    /// Password of the first admin staff login.
    #[arg(long, env = "YEYAK_ADMIN_PASSWORD", default_value = DEV_ADMIN_PASSWORD, hide_env_values = true)]
    pub admin_password: String,

    /// Key of the keyed digest of (tenant, owner); the same on every process.
    #[arg(long, env = "YEYAK_SECRET_KEY", default_value = DEV_SECRET_KEY, hide_env_values = true)]
    pub secret_key: String,

    /// Hold lifetime in seconds.
    #[arg(long, env = "YEYAK_HOLD_TTL_SECONDS", default_value_t = 30)]
    pub hold_ttl_seconds: u32,

    /// Offer lifetime in seconds.
    #[arg(long, env = "YEYAK_OFFER_TTL_SECONDS", default_value_t = 20)]
    pub offer_ttl_seconds: u32,

    /// Lease of an in-progress idempotency claim, in seconds.
    #[arg(long, env = "YEYAK_IDEMPOTENCY_LEASE_SECONDS", default_value_t = 90)]
    pub idempotency_lease_seconds: u32,

    /// How long stored responses can be replayed, in hours.
    #[arg(long, env = "YEYAK_IDEMPOTENCY_RETENTION_HOURS", default_value_t = 24)]
    pub idempotency_retention_hours: u32,

    /// Expiry sweeper tick in milliseconds.
    #[arg(long, env = "YEYAK_SWEEP_INTERVAL_MS", default_value_t = 2000)]
    pub sweep_interval_ms: u64,

    /// Longest total life of a hold from its creation, in seconds; an extend past it is refused.
    #[arg(long, env = "YEYAK_HOLD_MAX_LIFETIME_SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u32).range(1..))]
    pub hold_max_lifetime_seconds: u32,

    /// Hours a waitlist entry may wait; then the sweeper expires it and offers the units on.
    #[arg(long, env = "YEYAK_WAITLIST_MAX_WAIT_HOURS", default_value_t = 24, value_parser = clap::value_parser!(u32).range(1..))]
    pub waitlist_max_wait_hours: u32,

    /// Days kept of delivered notifications, delivery attempts, sign-in throttle rows and expired sessions; the sweeper purges older ones.
    #[arg(long, env = "YEYAK_RETENTION_DAYS", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..))]
    pub retention_days: u32,

    /// Days access records (SPEC §26) are kept; the database refuses to delete younger ones, the sweeper purges older ones.
    #[arg(long, env = "YEYAK_ACCESS_LOG_DAYS", default_value_t = defaults::ACCESS_LOG_DAYS, value_parser = clap::value_parser!(u32).range(1..=36_500))]
    pub access_log_days: u32,

    /// Days personal data of a booking is kept after it ends (SPEC §26): then the sweeper takes its title and organizer name; 0 keeps them.
    #[arg(long, env = "YEYAK_PERSONAL_DATA_DAYS", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=36_500))]
    pub personal_data_days: u32,

    /// Rows one purge statement deletes; each sweeper tick runs a few such batches per table.
    #[arg(long, env = "YEYAK_PURGE_BATCH", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub purge_batch: u32,

    /// Notification webhook target; unset uses the log provider.
    #[arg(long, env = "YEYAK_WEBHOOK_URL")]
    pub webhook_url: Option<String>,

    /// PostgreSQL connections per process.
    #[arg(long, env = "YEYAK_DB_POOL_SIZE", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub db_pool_size: u32,

    /// Send `SELECT 1` on every connection checkout (default: a local check of the socket only).
    #[arg(long, env = "YEYAK_DB_VERIFY_CHECKOUT", default_value_t = false, action = clap::ArgAction::Set)]
    pub db_verify_checkout: bool,

    /// Prepare every hot statement once per connection (turn off only to measure what it buys).
    #[arg(long, env = "YEYAK_DB_CACHE_STATEMENTS", default_value_t = true, action = clap::ArgAction::Set)]
    pub db_cache_statements: bool,

    /// Distributed admission permits held in Redis.
    #[arg(long, env = "YEYAK_REDIS_PERMITS", default_value_t = 64)]
    pub redis_permits: u32,

    /// Live future bookings one organizer may hold (unset: no quota; admins are exempt).
    #[arg(long, env = "YEYAK_MAX_ACTIVE_BOOKINGS", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_active_bookings: Option<u32>,

    /// Minutes before its start that a booking may be checked in.
    #[arg(long, env = "YEYAK_CHECK_IN_OPEN_MINUTES", default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=1440))]
    pub check_in_open_minutes: u32,

    /// Minutes after its start that a check-in stays open; then a booking not checked in is released.
    #[arg(long, env = "YEYAK_CHECK_IN_GRACE_MINUTES", default_value_t = 15, value_parser = clap::value_parser!(u32).range(1..=1440))]
    pub check_in_grace_minutes: u32,

    /// Consecutive no-show releases of one series after which the sweeper cancels its future occurrences; 0: never.
    #[arg(long, env = "YEYAK_NO_SHOW_STRIKES", default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub no_show_strikes: u32,

    /// SMTP server for booking mail, e.g. `smtp://127.0.0.1:2525` or `smtps://user:pass@host`; unset: no mail.
    #[arg(long, env = "YEYAK_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,

    /// SMTP connections each process keeps open at most, reused message after message.
    #[arg(long, env = "YEYAK_SMTP_POOL", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub smtp_pool: u32,

    /// Sender of booking mail.
    #[arg(long, env = "YEYAK_MAIL_FROM", default_value = "yeyak <rooms@yeyak.local>")]
    pub mail_from: String,

    /// Events that calendar apps put in a person's `bookings/` mail their
    /// colleagues invitations and their organizer the rooms' refusals (iMIP;
    /// only with YEYAK_SMTP_URL).
    #[arg(long, env = "YEYAK_IMIP", default_value_t = true, action = clap::ArgAction::Set)]
    pub imip: bool,

    /// Minutes before a booking starts that its organizer gets a reminder (0: none).
    #[arg(long, env = "YEYAK_REMINDER_MINUTES", default_value_t = 15, value_parser = clap::value_parser!(u32).range(0..=10080))]
    pub reminder_minutes: u32,

    /// Run the expiry sweeper and the outbox delivery worker in this process.
    #[arg(long, env = "YEYAK_BACKGROUND", default_value_t = true, action = clap::ArgAction::Set)]
    pub background: bool,

    /// How often the outbox delivery worker looks for due notifications, in milliseconds.
    #[arg(long, env = "YEYAK_OUTBOX_POLL_MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..))]
    pub outbox_poll_ms: u64,

    /// Bound concurrent API commands per process to the pool (turn off only to measure what it prevents).
    #[arg(long, env = "YEYAK_BULKHEAD", default_value_t = true, action = clap::ArgAction::Set)]
    pub bulkhead: bool,

    /// How long an API command may wait for a slot of this process's bulkhead before a 429, in milliseconds.
    #[arg(long, env = "YEYAK_ADMISSION_WAIT_MS", default_value_t = 250)]
    pub admission_wait_ms: u64,

    /// Database connections kept for background work (sweeper, outbox).
    #[arg(long, env = "YEYAK_BACKGROUND_CONNECTIONS", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub background_connections: u32,

    /// Lifetime of a Redis admission permit; a crashed holder's permit returns after it, in milliseconds.
    #[arg(long, env = "YEYAK_REDIS_PERMIT_LEASE_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub redis_permit_lease_ms: u64,

    /// Redis connect and command timeout, in milliseconds.
    #[arg(long, env = "YEYAK_REDIS_TIMEOUT_MS", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    pub redis_timeout_ms: u64,

    /// How long Redis is skipped after repeated failures before it is probed again, in milliseconds.
    #[arg(long, env = "YEYAK_REDIS_BREAKER_OPEN_MS", default_value_t = 5_000)]
    pub redis_breaker_open_ms: u64,

    /// Prefix of this installation's Redis keys.
    #[arg(long, env = "YEYAK_REDIS_PREFIX", default_value = "yeyak")]
    pub redis_prefix: String,

    /// Address people open yeyak at, e.g. `https://rooms.example.com`. Its scheme
    /// decides the cookies: with https every cookie is `Secure` with the `__Host-`
    /// prefix and HSTS is sent. Also the host of calendar UIDs and mail ids.
    #[arg(long, env = "YEYAK_PUBLIC_URL", value_parser = parse_public_url)]
    pub public_url: Option<url::Url>,

    /// Mail domain of the rooms' calendar addresses (`room-{code}@{domain}`,
    /// SPEC §17); default the host of `YEYAK_PUBLIC_URL`, else `yeyak.local`.
    #[arg(long, env = "YEYAK_ROOM_MAIL_DOMAIN")]
    pub room_mail_domain: Option<String>,

    /// Trust `Forwarded` / `X-Forwarded-*` headers for the client address (set only
    /// behind a proxy that overwrites them).
    #[arg(long, env = "YEYAK_TRUST_PROXY", default_value_t = false, action = clap::ArgAction::Set)]
    pub trust_proxy: bool,

    /// Log format: `text` or `json`.
    #[arg(long, env = "YEYAK_LOG_FORMAT", default_value = "text")]
    pub log_format: String,

    /// Lets the dependencies that log request data (SQL parameters, headers,
    /// tokens) log below `info` when `RUST_LOG` asks; off, they are capped
    /// at `info` whatever it says (SPEC §22). For debugging only.
    #[arg(long, env = "YEYAK_LOG_UNSAFE", default_value_t = false, action = clap::ArgAction::Set)]
    pub log_unsafe: bool,

    /// Who signs in with a password kept by yeyak: `on` (every local
    /// account), `admin-only` (only YEYAK_ADMIN_USER, the break-glass
    /// account) or `off`. Company accounts (OIDC, LDAP) never have one.
    #[arg(long, env = "YEYAK_PASSWORD_LOGIN", default_value = "on", value_parser = parse_password_login)]
    pub password_login: crate::identity::PasswordLogin,

    /// OpenID Connect issuer, e.g. `https://login.example.com/realms/office`;
    /// its discovery document is `{issuer}/.well-known/openid-configuration`.
    /// Unset: no company sign-in by OpenID Connect.
    #[arg(long, env = "YEYAK_OIDC_ISSUER")]
    pub oidc_issuer: Option<String>,

    /// Client id registered at the OpenID provider.
    #[arg(long, env = "YEYAK_OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,

    /// Client secret (sent as `client_secret_basic`, or `client_secret_post`
    /// where the provider offers only that).
    #[arg(long, env = "YEYAK_OIDC_CLIENT_SECRET", hide_env_values = true)]
    pub oidc_client_secret: Option<String>,

    /// Scopes asked of the OpenID provider, separated by spaces.
    #[arg(long, env = "YEYAK_OIDC_SCOPES", default_value = "openid profile email")]
    pub oidc_scopes: String,

    /// Claim (an array of strings, in the ID token or userinfo) that lists a person's groups.
    #[arg(long, env = "YEYAK_OIDC_GROUPS_CLAIM", default_value = "groups")]
    pub oidc_groups_claim: String,

    /// Groups whose members are admins, comma-separated; re-read at every sign-in.
    #[arg(long, env = "YEYAK_OIDC_ADMIN_GROUPS", default_value = "")]
    pub oidc_admin_groups: String,

    /// Groups allowed to sign in at all, comma-separated (unset: everyone the provider signs in).
    #[arg(long, env = "YEYAK_OIDC_ALLOWED_GROUPS")]
    pub oidc_allowed_groups: Option<String>,

    /// How long discovery waits between failed attempts (30–60 s, SPEC §16);
    /// tests shorten it.
    #[arg(skip = DISCOVERY_RETRY)]
    pub oidc_discovery_retry: std::ops::RangeInclusive<std::time::Duration>,

    /// LDAP directory, `ldaps://dc.example.com` or `ldap://…` with
    /// YEYAK_LDAP_STARTTLS=true. Unset: no directory sign-in.
    #[arg(long, env = "YEYAK_LDAP_URL")]
    pub ldap_url: Option<String>,

    /// Upgrade an `ldap://` connection with StartTLS before anything is sent.
    #[arg(long, env = "YEYAK_LDAP_STARTTLS", default_value_t = false, action = clap::ArgAction::Set)]
    pub ldap_starttls: bool,

    /// PEM file of the directory's CA, when it is not in the system's store.
    #[arg(long, env = "YEYAK_LDAP_CA_FILE")]
    pub ldap_ca_file: Option<PathBuf>,

    /// DN of the account that searches the directory.
    #[arg(long, env = "YEYAK_LDAP_BIND_DN", default_value = "")]
    pub ldap_bind_dn: String,

    /// Password of the search account.
    #[arg(long, env = "YEYAK_LDAP_BIND_PASSWORD", default_value = "", hide_env_values = true)]
    pub ldap_bind_password: String,

    /// Where people's entries are searched (subtree).
    #[arg(long, env = "YEYAK_LDAP_USER_BASE", default_value = "")]
    pub ldap_user_base: String,

    /// Filter that finds one person; `{username}` is replaced by the typed
    /// username, escaped as RFC 4515 says.
    #[arg(long, env = "YEYAK_LDAP_USER_FILTER", default_value = "(uid={username})")]
    pub ldap_user_filter: String,

    /// Attribute with the person's display name.
    #[arg(long, env = "YEYAK_LDAP_NAME_ATTR", default_value = "cn")]
    pub ldap_name_attr: String,

    /// Attribute with the person's email address.
    #[arg(long, env = "YEYAK_LDAP_EMAIL_ATTR", default_value = "mail")]
    pub ldap_email_attr: String,

    /// DN of a group whose members (`member`/`uniqueMember`, or `memberOf`
    /// on the entry) are admins; re-read at every sign-in.
    #[arg(long, env = "YEYAK_LDAP_ADMIN_GROUP")]
    pub ldap_admin_group: Option<String>,
}

impl Config {
    /// The process's settings from its arguments and environment.
    pub fn load() -> Self {
        let matches = Config::command().get_matches();
        let mut config = Config::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
        config.database_url_defaulted = matches.value_source("database_url") == Some(ValueSource::DefaultValue);
        config
    }

    /// Defaults plus the given overrides, without reading the process environment
    /// or arguments; used by tests and benchmarks.
    pub fn for_database(database_url: &str) -> Self {
        let mut cfg = Config::parse_from(["yeyak"]);
        cfg.database_url = database_url.to_owned();
        cfg
    }
}

impl Config {
    /// The variables still at a development default or too short, when the
    /// bind address is not loopback; yeyak refuses to start then (exit code 2).
    pub fn exposed_defaults(&self) -> Vec<&'static str> {
        if self.bind.ip().is_loopback() {
            return Vec::new();
        }
        let dev_key = ConfiguredKey::from_str(DEV_API_KEYS).expect("the dev key parses").key_hash;
        let mut exposed = Vec::new();
        if self.admin_password == DEV_ADMIN_PASSWORD || self.admin_password.chars().count() < MIN_ADMIN_PASSWORD_CHARS {
            exposed.push("YEYAK_ADMIN_PASSWORD");
        }
        if self.api_keys.0.iter().any(|k| k.key_hash == dev_key || k.secret_chars < MIN_API_KEY_SECRET_CHARS) {
            exposed.push("YEYAK_API_KEYS");
        }
        if self.secret_key == DEV_SECRET_KEY || self.secret_key.chars().count() < MIN_SECRET_KEY_CHARS {
            exposed.push("YEYAK_SECRET_KEY");
        }
        exposed
    }

    /// The one line of a refused start: what to set, and how long.
    pub fn refusal(&self, exposed: &[&str]) -> String {
        let wanted: Vec<String> = exposed
            .iter()
            .map(|var| match *var {
                "YEYAK_ADMIN_PASSWORD" => format!("{var} ({MIN_ADMIN_PASSWORD_CHARS}+ characters)"),
                "YEYAK_API_KEYS" => format!("{var} (secrets of {MIN_API_KEY_SECRET_CHARS}+ characters)"),
                "YEYAK_SECRET_KEY" => format!("{var} ({MIN_SECRET_KEY_CHARS}+ characters)"),
                other => other.to_owned(),
            })
            .collect();
        format!(
            "refusing to listen on {} with development defaults or short secrets; set {}",
            self.bind,
            wanted.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_defaults_are_refused_only_off_loopback() {
        let mut cfg = Config::for_database("postgres://x/y");
        assert!(cfg.exposed_defaults().is_empty());
        cfg.bind = "0.0.0.0:8080".parse().unwrap();
        assert_eq!(cfg.exposed_defaults(), ["YEYAK_ADMIN_PASSWORD", "YEYAK_API_KEYS", "YEYAK_SECRET_KEY"]);
        // Real values, long enough for §20 (32 / 24 / 12 characters at least).
        cfg.admin_password = "a-real-password".into();
        cfg.secret_key = "a-real-secret-of-some-length-and-more".into();
        cfg.api_keys = parse_api_keys("ops:admin:a-real-key-123-of-some-length").unwrap();
        assert!(cfg.exposed_defaults().is_empty());
    }
}
