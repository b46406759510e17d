//! What every handler shares. Built once at start-up.

use std::sync::Arc;

use chrono::Duration;
use chrono_tz::Tz;

use crate::auth::ApiKeyRegistry;
use crate::clock::Clock;
use crate::db::{DbStats, Pool};
use crate::idempotency::execute::Runner;
use crate::rooms::domain::{BookingRules, RoomCatalog};

pub struct AppState {
    pub pool: Pool,
    pub db_stats: Arc<DbStats>,
    pub clock: Arc<dyn Clock>,
    pub keys: ApiKeyRegistry,
    /// Key of the owner digest (`YEYAK_SECRET_KEY`).
    pub secret: Vec<u8>,
    pub rooms: RoomCatalog,
    pub rules: BookingRules,
    pub timezone: Tz,
    pub idempotency_lease: Duration,
    pub hold_ttl: Duration,
    pub offer_ttl: Duration,
}

impl AppState {
    pub fn runner(&self) -> Runner<'_> {
        Runner {
            pool: &self.pool,
            stats: &self.db_stats,
            clock: &self.clock,
            lease: self.idempotency_lease,
        }
    }
}
