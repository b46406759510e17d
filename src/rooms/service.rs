//! Booking commands as both the JSON API and the browser forms run them:
//! through the idempotency runner (and admission), one transaction each.

use scoped_futures::ScopedFutureExt;
use serde::Serialize;

use super::store::{self, Actor, MoveBooking, NewBooking};
use crate::auth::api_key::Tenant;
use crate::auth::OwnerDigest;
use crate::error::ApiError;
use crate::idempotency::{run_command, Fingerprint, IdempotencyKey, Outcome, Scope, StoredResponse};
use crate::state::AppState;

/// What the fingerprint of a command on one booking covers.
#[derive(Serialize)]
struct OnBooking<'a, T: Serialize> {
    id: i64,
    change: &'a T,
}

fn guard<P: Serialize>(
    tenant: &Tenant,
    operation: &'static str,
    key: Option<IdempotencyKey>,
    payload: &P,
    digest: &OwnerDigest,
) -> Option<(Scope, Fingerprint)> {
    key.map(|key| {
        let fingerprint = Fingerprint::compute(operation, payload, digest);
        (Scope { tenant: tenant.clone(), operation, key }, fingerprint)
    })
}

pub async fn create(
    state: &AppState,
    tenant: &Tenant,
    key: IdempotencyKey,
    new: &NewBooking,
    digest: &OwnerDigest,
) -> Result<Outcome, ApiError> {
    let guard = guard(tenant, "booking.create", Some(key), new, digest);
    let outcome = run_command(&state.runner(), guard, |conn, now| {
        async move {
            // Inside the command, so that a retry after the start time replays
            // the first answer instead of being judged afresh.
            new.range.ensure_not_past(now)?;
            let booking = store::create(conn, new, now).await?;
            Ok(StoredResponse::json(201, &booking))
        }
        .scope_boxed()
    })
    .await;
    if let Ok(outcome) = &outcome {
        crate::metrics::command_result(&state.metrics.bookings, outcome, "created");
    }
    outcome
}

pub async fn move_to(
    state: &AppState,
    tenant: &Tenant,
    key: Option<IdempotencyKey>,
    id: i64,
    change: &MoveBooking,
    actor: &Actor,
) -> Result<Outcome, ApiError> {
    let guard = guard(tenant, "booking.move", key, &OnBooking { id, change }, &actor.digest);
    run_command(&state.runner(), guard, |conn, now| {
        async move {
            change.range.ensure_not_past(now)?;
            let booking = store::move_to(conn, id, change, actor, now).await?;
            Ok(StoredResponse::json(200, &booking))
        }
        .scope_boxed()
    })
    .await
}

#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelBooking {
    pub expected_version: Option<i32>,
}

pub async fn cancel(
    state: &AppState,
    tenant: &Tenant,
    key: Option<IdempotencyKey>,
    id: i64,
    change: CancelBooking,
    actor: &Actor,
) -> Result<Outcome, ApiError> {
    let guard = guard(tenant, "booking.cancel", key, &OnBooking { id, change: &change }, &actor.digest);
    run_command(&state.runner(), guard, |conn, now| {
        async move {
            let booking = store::cancel(conn, id, change.expected_version, actor, now).await?;
            Ok(StoredResponse::json(200, &booking))
        }
        .scope_boxed()
    })
    .await
}
