//! What every door shares: handles built once at start-up (pools, the
//! pipeline, the catalogue snapshot, keys, clock, metrics). Capabilities
//! never take this; doors hand them what they need.

use std::sync::Arc;

use chrono::{Duration, Utc};

use crate::admission::Admission;
use crate::auth::ApiKeyRegistry;
use crate::catalogue::Catalogue;
use crate::clock::Clock;
use crate::command::Pipeline;
use crate::consistency::CheckContext;
use crate::db::{DbStats, Pool};
use crate::policy::Policy;
use crate::sweeper::Sweeper;

pub struct AppState {
    pub pool: Pool,
    /// `YEYAK_READ_DATABASE_URL`'s pool (a standby), or `pool` itself when
    /// unset. Only reads that may lag the caller's own writes use it
    /// (docs/SCALING.md §2).
    pub read_pool: Pool,
    pub db_stats: Arc<DbStats>,
    pub clock: Arc<dyn Clock>,
    /// Runs every command, whichever door it comes from.
    pub pipeline: Arc<Pipeline>,
    pub keys: ApiKeyRegistry,
    /// Key of the owner digest (`YEYAK_SECRET_KEY`).
    pub secret: Vec<u8>,
    /// The room catalogue as pages draw it (reloaded within a second).
    pub catalogue: Arc<Catalogue>,
    /// Host of calendar UIDs and mail Message-IDs.
    pub calendar_host: String,
    /// Domain of the rooms' calendar addresses (`YEYAK_ROOM_MAIL_DOMAIN`).
    pub room_mail_domain: String,
    /// Base of addresses in calendars (principal URLs): `YEYAK_PUBLIC_URL`,
    /// else `http://{the bound address}`; no trailing slash.
    pub public_base: String,
    pub sweep_interval: Duration,
    pub sweeper: Arc<Sweeper>,
    pub admission: Arc<Admission>,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Cookie flags and the client address (`YEYAK_PUBLIC_URL`, `YEYAK_TRUST_PROXY`).
    pub transport: crate::transport::Transport,
    /// `YEYAK_PUBLIC_URL`'s origin (`https://rooms.example.com`), for addresses
    /// shown to people (calendar feeds).
    pub public_origin: Option<String>,
    /// Bounds concurrent password hashing, which runs with no database
    /// connection held, behind a bounded queue (SPEC §13, §20).
    pub hashing: Arc<crate::auth::hashing::HashingGate>,
    /// Company sign-in by OpenID Connect (`YEYAK_OIDC_ISSUER`), when configured.
    pub oidc: Option<Arc<crate::auth::oidc::OidcProvider>>,
    /// Company sign-in against a directory (`YEYAK_LDAP_URL`), when configured.
    pub ldap: Option<Arc<crate::auth::ldap::Directory>>,
    /// Who signs in with a local password (`YEYAK_PASSWORD_LOGIN`).
    pub password_login: crate::auth::PasswordLogin,
    /// `YEYAK_ADMIN_USER`: the break-glass account of `admin-only`.
    pub admin_user: String,
}

impl AppState {
    /// The rules from configuration (SPEC §3, §11, §12; `YEYAK_TIMEZONE` is
    /// `policy().timezone`), as the pipeline hands them to commands.
    pub fn policy(&self) -> &Policy {
        self.pipeline.policy()
    }

    /// The zone in which times for these rooms are read and shown: the
    /// first room's area's (SPEC §24), from the catalogue's snapshot; the
    /// installation's for rooms it does not know.
    pub async fn zone_of_rooms<S: AsRef<str>>(&self, rooms: &[S]) -> chrono_tz::Tz {
        let home = self.policy().timezone;
        match (self.catalogue.current().await, rooms.first()) {
            (Ok(catalogue), Some(code)) => catalogue.zone_of_room(code.as_ref(), home),
            _ => home,
        }
    }

    /// What the consistency report counts as overdue now.
    pub fn check_context(&self) -> CheckContext {
        let now: chrono::DateTime<Utc> = self.clock.now();
        CheckContext { overdue_before: now - self.sweep_interval * 2, stale_lease_before: now - Duration::minutes(10) }
    }
}
