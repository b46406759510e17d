//! `POST /api/admin/sweep`: one sweep on demand, returning its summary.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use crate::error::ApiError;
use crate::http::extract::{AdminCaller, ApiJson, IdemKey, Owner};
use crate::idempotency::{run_claimed, Fingerprint, Scope, StoredResponse};
use crate::state::AppState;

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
    let max = body.max_resources.unwrap_or(super::MAX_RESOURCES);
    if !(1..=super::MAX_RESOURCES).contains(&max) {
        return Err(ApiError::malformed("maxResources", "must be 1-32"));
    }
    let scope = Scope { tenant: caller.tenant.clone(), operation: "admin.sweep", key: key.required()? };
    let fingerprint =
        Fingerprint::compute(scope.operation, &json!({ "maxResources": max }), &owner.digest(&state, &caller));
    // A sweep commits one transaction per resource, so its claim is committed first.
    let outcome = run_claimed(&state.runner(), scope, fingerprint, || async {
        let summary = state.sweeper.sweep_now(max).await?;
        Ok(StoredResponse::json(200, &summary))
    })
    .await?;
    Ok(outcome.into_response(true))
}
