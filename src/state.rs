//! What every handler shares. Built once at start-up.

use std::sync::Arc;

use chrono::Duration;
use chrono_tz::Tz;

use crate::admission::Admission;
use crate::auth::ApiKeyRegistry;
use crate::catalogue::Catalogue;
use crate::clock::Clock;
use crate::db::{DbStats, Pool};
use crate::idempotency::execute::Runner;
use crate::sweeper::Sweeper;

pub struct AppState {
    pub pool: Pool,
    /// `YEYAK_READ_DATABASE_URL`'s pool (a standby), or `pool` itself when
    /// unset. Only reads that may lag the caller's own writes use it
    /// (docs/SCALING.md §2).
    pub read_pool: Pool,
    pub db_stats: Arc<DbStats>,
    pub clock: Arc<dyn Clock>,
    pub keys: ApiKeyRegistry,
    /// Key of the owner digest (`YEYAK_SECRET_KEY`).
    pub secret: Vec<u8>,
    /// The room catalogue as pages draw it (reloaded within a second).
    pub catalogue: Catalogue,
    pub timezone: Tz,
    /// Host of calendar UIDs and mail Message-IDs.
    pub calendar_host: String,
    /// Quota and check-in window (SPEC §11, §12).
    pub policy: crate::rooms::domain::Policy,
    pub idempotency_lease: Duration,
    pub hold_ttl: Duration,
    /// A hold's longest total life from its creation (`YEYAK_HOLD_MAX_LIFETIME_SECONDS`).
    pub hold_max_lifetime: Duration,
    pub offer_ttl: Duration,
    pub sweep_interval: Duration,
    pub sweeper: Arc<Sweeper>,
    pub admission: Arc<Admission>,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Cookie flags and the client address (`YEYAK_PUBLIC_URL`, `YEYAK_TRUST_PROXY`).
    pub transport: crate::web::transport::Transport,
    /// `YEYAK_PUBLIC_URL`'s origin (`https://rooms.example.com`), for addresses
    /// shown to people (calendar feeds).
    pub public_origin: Option<String>,
    /// Bounds concurrent password hashing, which runs with no database
    /// connection held (SPEC §13).
    pub hashing: Arc<tokio::sync::Semaphore>,
}

impl AppState {
    pub fn check_context(&self) -> crate::consistency::CheckContext {
        let now = self.clock.now();
        crate::consistency::CheckContext {
            overdue_before: now - self.sweep_interval * 2,
            stale_lease_before: now - Duration::minutes(10),
        }
    }

    pub fn runner(&self) -> Runner<'_> {
        Runner {
            admission: &self.admission,
            metrics: &self.metrics,
            pool: &self.pool,
            stats: &self.db_stats,
            clock: &self.clock,
            lease: self.idempotency_lease,
        }
    }
}
