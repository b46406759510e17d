//! Admin JSON routes of operations (SPEC §13, §18): the consistency report,
//! an on-demand sweep, a booking's deliveries and the re-drive of an
//! exhausted one.

use actix_web::{web, HttpResponse};
use serde::Deserialize;

use super::extract::{AdminCaller, ApiJson, IdemKey, Owner};
use super::run;
use crate::command::Principal;
use crate::consistency;
use crate::db::DbError;
use crate::error::ApiError;
use crate::outbox::Redrive;
use crate::state::AppState;
use crate::sweeper::{SweepNow, MAX_RESOURCES};

pub async fn consistency(state: web::Data<AppState>, _: AdminCaller) -> Result<HttpResponse, ApiError> {
    // Two connections: the checks share one snapshot and two cores.
    let mut first = state.pool.get().await.map_err(DbError::from)?;
    let mut second = state.pool.get().await.map_err(DbError::from)?;
    let report = consistency::run_on_two(&mut first, &mut second, state.check_context()).await?;
    Ok(HttpResponse::Ok().json(report))
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SweepBody {
    max_resources: Option<i64>,
}

pub async fn sweep(
    state: web::Data<AppState>,
    AdminCaller(caller): AdminCaller,
    owner: Owner,
    key: IdemKey,
    ApiJson(body): ApiJson<SweepBody>,
) -> Result<HttpResponse, ApiError> {
    let max_resources = body.max_resources.unwrap_or(MAX_RESOURCES);
    if !(1..=MAX_RESOURCES).contains(&max_resources) {
        return Err(ApiError::malformed("maxResources", "must be 1-32"));
    }
    let key = key.required()?;
    let principal = owner.principal(&state, &caller);
    let command = SweepNow { sweeper: &state.sweeper, max_resources };
    run(&state.pipeline, &principal, Some(key), &command).await
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxQuery {
    booking_id: Option<String>,
}

/// `GET /api/admin/outbox?bookingId=`: what became of a booking's notices.
pub async fn outbox(
    state: web::Data<AppState>,
    _: AdminCaller,
    query: web::Query<OutboxQuery>,
) -> Result<HttpResponse, ApiError> {
    let id = query
        .booking_id
        .as_deref()
        .and_then(|id| id.parse::<i64>().ok())
        .ok_or_else(|| ApiError::malformed("bookingId", "must be a booking id"))?;
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let deliveries = crate::outbox::list::of_booking(&mut conn, id).await.map_err(DbError::from)?;
    if deliveries.is_empty() && crate::rooms::booking::find(&mut conn, id).await.map_err(DbError::from)?.is_none() {
        return Err(ApiError::not_found("booking"));
    }
    Ok(HttpResponse::Ok().json(crate::outbox::list::Deliveries { deliveries }))
}

pub async fn redrive(
    state: web::Data<AppState>,
    AdminCaller(caller): AdminCaller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let principal = Principal::api_key(&state.secret, &caller.tenant, caller.is_admin(), None);
    let command = Redrive { delivery_id: id.into_inner() };
    run(&state.pipeline, &principal, None, &command).await
}
