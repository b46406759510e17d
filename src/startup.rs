//! Start-up: prepare the database, build the shared state, bind, serve.
//! actix-web stops gracefully on SIGTERM and Ctrl-C (in-flight requests finish).

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpServer};
use chrono::Duration;

use crate::admission::redis_gate::RedisSettings;
use crate::admission::{Admission, Bulkhead, RedisGate};
use crate::auth::ApiKeyRegistry;
use crate::background::Background;
use crate::clock::{Clock, SystemClock};
use crate::command::Pipeline;
use crate::config::Config;
use crate::db::embedded::{self, EmbeddedCluster};
use crate::db::{self, bootstrap, DbStats};
use crate::outbox::provider::Provider;
use crate::outbox::worker::DeliveryWorker;
use crate::policy::Policy;
use crate::state::AppState;
use crate::sweeper::Sweeper;

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("invalid setting: {0}")]
    Config(String),
    #[error(transparent)]
    Database(#[from] bootstrap::BootstrapError),
    #[error(transparent)]
    Embedded(#[from] embedded::EmbeddedError),
    #[error("cannot listen on {addr}: {cause}. Set YEYAK_BIND to a free address.")]
    Bind { addr: SocketAddr, cause: std::io::Error },
    /// A public bind while something still opens with a development secret.
    #[error("{0}")]
    Unsafe(String),
}

impl StartupError {
    /// The process's exit code: 2 for a refusal of unsafe settings (like
    /// `Config::exposed_defaults`), 1 for everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            StartupError::Unsafe(_) => 2,
            _ => 1,
        }
    }
}

/// A built, bound, not yet awaited server.
pub struct Application {
    pub server: Server,
    pub addr: SocketAddr,
    pub state: web::Data<AppState>,
    /// The sweeper and outbox loops (`None` with `YEYAK_BACKGROUND=false`).
    pub background: Option<Background>,
    /// The private PostgreSQL cluster when `DATABASE_URL` asked for it; stop it
    /// after the server and the background work (dropping it stops it too).
    pub embedded: Option<EmbeddedCluster>,
}

/// How long an idle HTTP/1.1 connection stays open (nginx's default).
const KEEP_ALIVE_SECONDS: u64 = 75;

/// Builds the application on the wall clock.
pub async fn build(config: Config) -> Result<Application, StartupError> {
    build_with_clock(config, Arc::new(SystemClock)).await
}

/// Builds the application on a given clock (tests move time with `ManualClock`).
pub async fn build_with_clock(mut config: Config, clock: Arc<dyn Clock>) -> Result<Application, StartupError> {
    let (database_url, embedded) =
        embedded::resolve(&config.database_url, config.database_url_defaulted, &config.data_dir).await?;
    config.database_url = database_url;
    bootstrap::prepare(&config.database_url).await?;
    let db_stats = Arc::new(DbStats::default());
    db::cached::set_enabled(config.db_cache_statements);
    let pool = db::build_pool(&config.database_url, config.db_pool_size, config.db_verify_checkout, db_stats.clone());
    // A standby for pages and lists (docs/SCALING.md §2), else the primary's pool.
    let read_pool = match &config.read_database_url {
        Some(url) => db::build_pool(url, config.db_pool_size, config.db_verify_checkout, db_stats.clone()),
        None => pool.clone(),
    };
    {
        let shown = bootstrap::redact(&config.database_url);
        let unreachable = |cause: String| bootstrap::BootstrapError::Unreachable { url: shown.clone(), cause };
        let mut conn = pool.get().await.map_err(|e| unreachable(e.to_string()))?;
        crate::auth::staff::ensure_admin(&mut conn, &config.admin_user, &config.admin_password)
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        crate::catalogue::areas::settle_zones(&mut conn, config.timezone)
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        crate::privacy::access::set_retention(&mut conn, config.access_log_days)
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        if !config.bind.ip().is_loopback() {
            refuse_development_admins(&mut conn, &config).await.map_err(|e| match e {
                Refused::Db(e) => StartupError::from(unreachable(e.to_string())),
                Refused::Unsafe(line) => StartupError::Unsafe(line),
            })?;
        }
    }
    if config.secret_key == crate::config::DEV_SECRET_KEY {
        tracing::warn!("YEYAK_SECRET_KEY has its development default; set it in production");
    }
    let policy = Policy {
        timezone: config.timezone,
        max_active_bookings: config.max_active_bookings,
        check_in_open: Duration::minutes(i64::from(config.check_in_open_minutes)),
        check_in_grace: Duration::minutes(i64::from(config.check_in_grace_minutes)),
        no_show_strikes: config.no_show_strikes,
        mail: config.smtp_url.is_some(),
        imip: config.imip,
        reminder_ahead: (config.smtp_url.is_some() && config.reminder_minutes > 0)
            .then(|| Duration::minutes(i64::from(config.reminder_minutes))),
        // A hold never starts with more life than it may ever have.
        hold_ttl: Duration::seconds(i64::from(config.hold_ttl_seconds.min(config.hold_max_lifetime_seconds))),
        hold_max_lifetime: Duration::seconds(i64::from(config.hold_max_lifetime_seconds)),
        offer_ttl: Duration::seconds(i64::from(config.offer_ttl_seconds)),
        waitlist_max_wait: Duration::hours(i64::from(config.waitlist_max_wait_hours)),
    };
    let calendar_host = crate::calendar::host(config.public_url.as_ref().map(url::Url::as_str));
    let room_mail_domain = config.room_mail_domain.clone().unwrap_or_else(|| calendar_host.clone());
    let mailer = match &config.smtp_url {
        Some(url) => Some(Arc::new(
            crate::mail::smtp::Mailer::new(url, &config.mail_from, config.timezone, &calendar_host)
                .map_err(StartupError::Config)?
                .with_pool(config.smtp_pool as usize)
                .with_room_domain(&room_mail_domain)
                .with_links(config.public_url.as_ref().map(|u| u.origin().ascii_serialization()).as_deref()),
        )),
        None => None,
    };
    let admission = Arc::new(build_admission(&config)?);
    let metrics = Arc::new(crate::metrics::Metrics::new());
    let catalogue = Arc::new(crate::catalogue::Catalogue::new(pool.clone()));
    let pipeline = Arc::new(
        Pipeline::new(
            pool.clone(),
            db_stats.clone(),
            admission.clone(),
            clock.clone(),
            metrics.clone(),
            Duration::seconds(i64::from(config.idempotency_lease_seconds)),
            policy,
        )
        .on_catalogue_change({
            let catalogue = catalogue.clone();
            move || catalogue.invalidate()
        }),
    );
    let sweeper = Arc::new(
        Sweeper::of(pipeline.clone(), &config.database_url)
            .releasing_no_shows()
            .with_purge(crate::sweeper::purge::Purge {
                retention: Duration::days(i64::from(config.retention_days)),
                idempotency_retention: Duration::hours(i64::from(config.idempotency_retention_hours)),
                access_log: crate::privacy::access::retention(config.access_log_days),
                personal_data: (config.personal_data_days > 0)
                    .then(|| Duration::days(i64::from(config.personal_data_days))),
                batch: i64::from(config.purge_batch),
            })
            .with_reminders(policy.reminder_ahead),
    );
    let background = config.background.then(|| {
        let provider = match &config.webhook_url {
            Some(url) => Provider::webhook(url),
            None => Provider::Log,
        };
        Background::spawn(
            sweeper.clone(),
            std::time::Duration::from_millis(config.sweep_interval_ms.max(10)),
            {
                let worker = DeliveryWorker::new(pool.clone(), clock.clone(), provider)
                    .with_bulkhead(admission.bulkhead.clone())
                    .with_metrics(metrics.clone())
                    .with_stats(db_stats.clone());
                match &mailer {
                    Some(m) => worker.with_mail(Provider::Smtp(m.clone())),
                    None => worker,
                }
            },
            std::time::Duration::from_millis(config.outbox_poll_ms),
        )
    });
    let listener = TcpListener::bind(config.bind).map_err(|cause| StartupError::Bind { addr: config.bind, cause })?;
    let addr = listener.local_addr().map_err(|cause| StartupError::Bind { addr: config.bind, cause })?;
    // `{base}` of SPEC §16 and §18 (sign-in redirects, principal URLs in
    // calendars): the public address, else the address bound.
    let base = match &config.public_url {
        Some(url) => url.as_str().trim_end_matches('/').to_owned(),
        None => format!("http://{addr}"),
    };
    let oidc = company_oidc(&config, &base, clock.clone())?;
    let ldap = company_directory(&config)?;
    if config.password_login == crate::auth::PasswordLogin::Off && oidc.is_none() && ldap.is_none() {
        tracing::warn!("YEYAK_PASSWORD_LOGIN=off with neither OpenID Connect nor LDAP configured: nobody can sign in");
    }
    let state = web::Data::new(AppState {
        catalogue,
        pool,
        read_pool,
        db_stats,
        clock,
        pipeline,
        keys: ApiKeyRegistry::new(&config.api_keys.0),
        secret: config.secret_key.as_bytes().to_vec(),
        room_mail_domain,
        public_base: base,
        calendar_host,
        sweep_interval: Duration::milliseconds(config.sweep_interval_ms as i64),
        sweeper,
        admission,
        metrics,
        public_origin: config.public_url.as_ref().map(|u| u.origin().ascii_serialization()),
        transport: crate::transport::Transport::new(config.public_url.as_ref(), config.trust_proxy),
        hashing: {
            use crate::auth::hashing::{HashingGate, HASHING_QUEUE, HASHING_SLOTS};
            Arc::new(HashingGate::new(HASHING_SLOTS, HASHING_QUEUE))
        },
        oidc,
        ldap,
        password_login: config.password_login,
        admin_user: config.admin_user.clone(),
    });

    let app_state = state.clone();
    let panics = app_state.metrics.panics.clone();
    let server = HttpServer::new(move || {
        let app = App::new()
            .app_data(app_state.clone())
            .wrap(from_fn(crate::web::pages::in_their_language))
            .wrap(from_fn(crate::http::response_headers))
            .configure(crate::routes::configure);
        crate::panic_boundary::around(app, panics.clone())
    })
    // Idle connections stay open longer than clients that reuse them
    // usually wait (calendar apps, proxies, test clients idle for seconds
    // under load): at actix's 5 s a request sent on a connection the server
    // is closing at that instant is lost, and a non-browser client sees the
    // connection end without an answer.
    .keep_alive(std::time::Duration::from_secs(KEEP_ALIVE_SECONDS))
    .listen(listener)
    .map_err(|cause| StartupError::Bind { addr, cause })?
    .shutdown_timeout(10)
    .run();
    Ok(Application { server, addr, state, background, embedded })
}

/// The OpenID provider when `YEYAK_OIDC_ISSUER` is set (discovery starts in
/// the background; a provider that is down does not stop the start).
fn company_oidc(
    config: &Config,
    base: &str,
    clock: Arc<dyn Clock>,
) -> Result<Option<Arc<crate::auth::oidc::OidcProvider>>, StartupError> {
    use crate::auth::oidc::{GroupRules, OidcProvider, Settings};
    let Some(issuer) = &config.oidc_issuer else { return Ok(None) };
    let client_id = config
        .oidc_client_id
        .clone()
        .ok_or_else(|| StartupError::Config("YEYAK_OIDC_ISSUER is set but YEYAK_OIDC_CLIENT_ID is not".into()))?;
    let settings = Settings {
        issuer: issuer.clone(),
        client_id,
        client_secret: config.oidc_client_secret.clone(),
        scopes: config.oidc_scopes.split_whitespace().map(str::to_owned).collect(),
        groups_claim: config.oidc_groups_claim.clone(),
        groups: GroupRules::parse(&config.oidc_admin_groups, config.oidc_allowed_groups.as_deref()),
        redirect_uri: format!("{base}/auth/oidc/callback"),
        post_logout_uri: format!("{base}/login"),
        retry: config.oidc_discovery_retry.clone(),
    };
    Ok(Some(OidcProvider::start(settings, clock)))
}

/// The directory when `YEYAK_LDAP_URL` is set; settings that would send
/// passwords in the clear stop the start.
fn company_directory(config: &Config) -> Result<Option<Arc<crate::auth::ldap::Directory>>, StartupError> {
    let Some(url) = &config.ldap_url else { return Ok(None) };
    let settings = crate::auth::ldap::Settings {
        url: url.clone(),
        starttls: config.ldap_starttls,
        ca_file: config.ldap_ca_file.clone(),
        bind_dn: config.ldap_bind_dn.clone(),
        bind_password: config.ldap_bind_password.clone(),
        user_base: config.ldap_user_base.clone(),
        user_filter: config.ldap_user_filter.clone(),
        name_attr: config.ldap_name_attr.clone(),
        email_attr: config.ldap_email_attr.clone(),
        admin_group: config.ldap_admin_group.clone(),
    };
    crate::auth::ldap::Directory::new(settings).map(|d| Some(Arc::new(d))).map_err(StartupError::Config)
}

enum Refused {
    Db(diesel::result::Error),
    Unsafe(String),
}

/// SPEC §20: no public bind while an active admin account still signs in
/// with the development password (an admin made under another
/// `YEYAK_ADMIN_USER` keeps it after a rename of the setting).
async fn refuse_development_admins(conn: &mut crate::db::Conn, config: &Config) -> Result<(), Refused> {
    let dev = crate::config::DEV_ADMIN_PASSWORD;
    let names = crate::auth::staff::admins_signing_in_with(conn, dev).await.map_err(Refused::Db)?;
    if names.is_empty() {
        return Ok(());
    }
    let names = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    Err(Refused::Unsafe(format!(
        "refusing to listen on {}: admin account {names} still signs in with the development password; \
         change it on /account (started on a loopback YEYAK_BIND) or disable the account",
        config.bind
    )))
}

/// The bulkhead always; the Redis gate when `REDIS_URL` is set (it connects
/// lazily, so an unreachable Redis does not stop the boot).
fn build_admission(config: &Config) -> Result<Admission, StartupError> {
    use std::time::Duration as Std;
    let wait = Std::from_millis(config.admission_wait_ms);
    let bulkhead = Arc::new(if config.bulkhead {
        Bulkhead::new(config.db_pool_size, config.background_connections, wait)
    } else {
        Bulkhead::unbounded(config.background_connections, wait)
    });
    let redis = match &config.redis_url {
        None => None,
        Some(url) => Some(
            RedisGate::new(RedisSettings {
                url: url.clone(),
                permits: config.redis_permits,
                permit_lease: Std::from_millis(config.redis_permit_lease_ms),
                inflight_ttl: Std::from_secs(30),
                timeout: Std::from_millis(config.redis_timeout_ms),
                breaker_threshold: 3,
                breaker_open_for: Std::from_millis(config.redis_breaker_open_ms),
                prefix: config.redis_prefix.clone(),
            })
            .map_err(StartupError::Config)?,
        ),
    };
    Ok(Admission { bulkhead, redis, stats: Arc::default() })
}
