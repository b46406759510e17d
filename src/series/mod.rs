//! Recurring series (SPEC §9): a series row, and each occurrence a normal
//! booking with `seriesId`, so every rule, check and route of a booking
//! applies to it. `domain` expands the recurrence, `store` writes a series
//! in one transaction, `http` holds the routes.

pub mod domain;
pub mod http;
pub mod store;

use scoped_futures::ScopedFutureExt;
use serde::Serialize;

use crate::command::{Acting, On};
use crate::error::ApiError;
use crate::idempotency::{IdempotencyKey, Outcome};
use crate::rooms::store::Ctx;
use crate::state::AppState;
use store::{NewSeries, Series, SeriesChange};

/// `{series, occurrences}`: the answer of a change or a read.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[schemars(rename = "SeriesWithOccurrences")]
pub struct WithOccurrences {
    pub series: Series,
    pub occurrences: Vec<crate::rooms::store::Booking>,
}

pub async fn create(
    state: &AppState,
    acting: &Acting,
    key: IdempotencyKey,
    new: &NewSeries,
) -> Result<Outcome, ApiError> {
    acting
        .run(state, "series.create", Some(key), new, 201, |conn, now| {
            async move {
                let ctx = Ctx { actor: acting, policy: state.policy, now };
                store::create(conn, new, state.timezone, &ctx).await
            }
            .scope_boxed()
        })
        .await
}

pub async fn change(
    state: &AppState,
    acting: &Acting,
    key: Option<IdempotencyKey>,
    id: i64,
    change: &SeriesChange,
) -> Result<Outcome, ApiError> {
    acting
        .run(state, "series.update", key, &On { id, change }, 200, |conn, now| {
            async move {
                let ctx = Ctx { actor: acting, policy: state.policy, now };
                let (series, occurrences) = store::change(conn, id, change, state.timezone, &ctx).await?;
                Ok(WithOccurrences { series, occurrences })
            }
            .scope_boxed()
        })
        .await
}

#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelSeries {
    pub from: Option<chrono::DateTime<chrono::Utc>>,
}

pub async fn cancel(
    state: &AppState,
    acting: &Acting,
    key: Option<IdempotencyKey>,
    id: i64,
    cancel: CancelSeries,
) -> Result<Outcome, ApiError> {
    acting
        .run(state, "series.cancel", key, &On { id, change: &cancel }, 200, |conn, now| {
            async move {
                let ctx = Ctx { actor: acting, policy: state.policy, now };
                let (series, occurrences) = store::cancel(conn, id, cancel.from, &ctx).await?;
                Ok(WithOccurrences { series, occurrences })
            }
            .scope_boxed()
        })
        .await
}
