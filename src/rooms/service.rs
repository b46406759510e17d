//! Booking commands as both the JSON API and the browser forms run them:
//! through the idempotency runner (and admission), one transaction each.

use scoped_futures::ScopedFutureExt;
use serde::Serialize;

use super::store::{self, Ctx, MoveBooking, NewBooking};
use crate::command::{Acting, On};
use crate::error::ApiError;
use crate::idempotency::{IdempotencyKey, Outcome};
use crate::state::AppState;

fn ctx<'a>(state: &AppState, acting: &'a Acting, now: chrono::DateTime<chrono::Utc>) -> Ctx<'a> {
    Ctx { actor: acting, policy: state.policy, now }
}

pub async fn create(
    state: &AppState,
    acting: &Acting,
    key: IdempotencyKey,
    new: &NewBooking,
) -> Result<Outcome, ApiError> {
    let outcome = acting
        .run(state, "booking.create", Some(key), new, 201, |conn, now| {
            async move { store::create(conn, new, &ctx(state, acting, now)).await }.scope_boxed()
        })
        .await;
    if let Ok(outcome) = &outcome {
        crate::metrics::command_result(&state.metrics.bookings, outcome, "created");
    }
    outcome
}

pub async fn move_to(
    state: &AppState,
    acting: &Acting,
    key: Option<IdempotencyKey>,
    id: i64,
    change: &MoveBooking,
) -> Result<Outcome, ApiError> {
    acting
        .run(state, "booking.move", key, &On { id, change }, 200, |conn, now| {
            async move { store::move_to(conn, id, change, &ctx(state, acting, now)).await }.scope_boxed()
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
    acting: &Acting,
    key: Option<IdempotencyKey>,
    id: i64,
    change: CancelBooking,
) -> Result<Outcome, ApiError> {
    acting
        .run(state, "booking.cancel", key, &On { id, change: &change }, 200, |conn, now| {
            async move { store::cancel(conn, id, change.expected_version, &ctx(state, acting, now)).await }
                .scope_boxed()
        })
        .await
}

pub async fn check_in(
    state: &AppState,
    acting: &Acting,
    key: Option<IdempotencyKey>,
    id: i64,
) -> Result<Outcome, ApiError> {
    acting
        .run(state, "booking.check_in", key, &id, 200, |conn, now| {
            async move { store::check_in(conn, id, &ctx(state, acting, now)).await }.scope_boxed()
        })
        .await
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub approve: bool,
    pub reason: Option<String>,
}

/// Approves or rejects a pending booking (the caller checked the admin role).
pub async fn decide(
    state: &AppState,
    acting: &Acting,
    key: Option<IdempotencyKey>,
    id: i64,
    decision: &Decision,
) -> Result<Outcome, ApiError> {
    let operation = if decision.approve { "booking.approve" } else { "booking.reject" };
    acting
        .run(state, operation, key, &On { id, change: decision }, 200, |conn, now| {
            async move {
                store::decide(conn, id, decision.approve, decision.reason.as_deref(), &ctx(state, acting, now)).await
            }
            .scope_boxed()
        })
        .await
}
