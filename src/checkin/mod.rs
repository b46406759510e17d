//! No-shows (SPEC §11): bookings of check-in rooms that nobody checked in
//! before their grace ended are released by the sweeper's leader — shortened
//! to the release time on every room copy in one transaction per batch, so
//! the rest of the slot is bookable at once, recorded and announced once
//! however many processes run (the status test in the UPDATE, plus
//! `SKIP LOCKED` against a check-in in flight).

use std::sync::Arc;

use scoped_futures::ScopedFutureExt;

use crate::auth::api_key::Tenant;
use crate::auth::OwnerDigest;
use crate::clock::Clock;
use crate::command::Acting;
use crate::db::{self, DbError, DbStats, Pool};
use crate::idempotency::CommandError;
use crate::rooms::domain::Policy;

/// Bookings released per transaction.
pub const BATCH: i64 = 500;
/// Batches per sweeper tick (the rest waits for the next tick).
const MAX_BATCHES: usize = 20;

/// Who the history names for a release.
pub fn sweeper_actor() -> Acting {
    Acting {
        tenant: Tenant::parse("system").expect("valid tenant"),
        digest: OwnerDigest::from_stored(String::new()),
        is_admin: true,
        name: "yeyak (체크인 없어 자동 반납)".to_owned(),
        staff_id: None,
    }
}

/// Releases every due no-show (in batches); returns how many.
pub async fn release_due(
    pool: &Pool,
    stats: &DbStats,
    clock: &Arc<dyn Clock>,
    policy: Policy,
) -> Result<usize, DbError> {
    let actor = sweeper_actor();
    let mut total = 0;
    for _ in 0..MAX_BATCHES {
        let now = clock.now();
        let actor = &actor;
        let released = db::transaction(pool, stats, |conn| {
            async move { crate::rooms::store::release_no_shows(conn, policy, BATCH, actor, now).await }.scope_boxed()
        })
        .await
        .map_err(|e| match e {
            CommandError::Db(e) => e,
            CommandError::Reject(r) | CommandError::Invalid(r) => DbError::Unavailable(r.message),
        })?;
        total += released;
        if released < BATCH as usize {
            break;
        }
    }
    Ok(total)
}
