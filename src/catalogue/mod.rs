//! The room catalogue (SPEC §8): rooms as data with their areas, suites,
//! equipment and booking rules. `domain` holds the values and the linking
//! rule, `store` the SQL, `cache` the snapshot pages draw from, `http` the
//! JSON routes; the commands below serve the JSON routes and the admin forms.

pub mod cache;
pub mod domain;
pub mod http;
pub mod store;

use scoped_futures::ScopedFutureExt;
use serde::Serialize;

use crate::command::{Acting, On};
use crate::error::ApiError;
use crate::idempotency::{IdempotencyKey, Outcome};
use crate::state::AppState;
use domain::{NewRoom, RoomPatch};

pub use cache::Catalogue;

pub async fn create(
    state: &AppState,
    acting: &Acting,
    key: Option<IdempotencyKey>,
    new: &NewRoom,
) -> Result<Outcome, ApiError> {
    let outcome = acting
        .run(state, "room.create", key, new, 201, |conn, now| {
            async move { store::create(conn, new, now).await }.scope_boxed()
        })
        .await;
    state.catalogue.invalidate();
    outcome
}

pub async fn patch(
    state: &AppState,
    acting: &Acting,
    key: Option<IdempotencyKey>,
    code: &str,
    patch: &RoomPatch,
) -> Result<Outcome, ApiError> {
    let outcome = acting
        .run(state, "room.update", key, &On { id: code, change: patch }, 200, |conn, now| {
            async move { store::patch(conn, code, patch, now).await }.scope_boxed()
        })
        .await;
    state.catalogue.invalidate();
    outcome
}

#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Retire {
    pub cancel_future_bookings: bool,
}

/// Retires a room; with `cancel_future_bookings` its future bookings are
/// cancelled whole in the same transaction.
pub async fn retire(
    state: &AppState,
    acting: &Acting,
    key: Option<IdempotencyKey>,
    code: &str,
    retire: Retire,
) -> Result<Outcome, ApiError> {
    let outcome = acting
        .run(state, "room.retire", key, &On { id: code, change: &retire }, 200, |conn, now| {
            async move {
                let (room, future) = store::retire(conn, code, retire.cancel_future_bookings, now).await?;
                let ctx = crate::rooms::store::Ctx { actor: acting, policy: state.policy, now };
                crate::rooms::store::cancel_many(conn, &future, &ctx, false).await?;
                Ok(room)
            }
            .scope_boxed()
        })
        .await;
    state.catalogue.invalidate();
    outcome
}
