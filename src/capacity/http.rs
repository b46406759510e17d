//! JSON routes of SPEC §7.1. Every POST needs `Idempotency-Key` and goes
//! through the idempotency runner; every route but the resource list needs
//! `X-Reservation-Owner`, and reads are for the owner only.

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use scoped_futures::ScopedBoxFuture;
use scoped_futures::ScopedFutureExt;
use serde::Deserialize;
use serde_json::json;

use super::domain::{self, ExtendBy, NewResource, NewResourceBody, Quantity, ResourceView};
use super::holds::{self, HoldRequest};
use super::waitlist::{self, JoinRequest};
use super::{owner_mismatch, resources};
use crate::auth::{Caller, OwnerDigest};
use crate::db::{Conn, DbError};
use crate::error::ApiError;
use crate::http::extract::{AdminCaller, ApiCaller, ApiJson, IdemKey, Owner};
use crate::idempotency::{run_command, CommandError, Fingerprint, Scope, StoredResponse};
use crate::state::AppState;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/resources", web::get().to(list_resources))
        .route("/resources", web::post().to(create_resource))
        .route("/resources/{id}/holds", web::post().to(create_hold))
        .route("/holds/{id}", web::get().to(get_hold))
        .route("/holds/{id}/confirm", web::post().to(confirm_hold))
        .route("/holds/{id}/cancel", web::post().to(cancel_hold))
        .route("/holds/{id}/extend", web::post().to(extend_hold))
        .route("/resources/{id}/waitlist", web::post().to(join_waitlist))
        .route("/waitlist/{id}", web::get().to(get_entry))
        .route("/waitlist/{id}/cancel", web::post().to(leave_waitlist))
        .route("/offers/{id}", web::get().to(get_offer))
        .route("/offers/{id}/accept", web::post().to(accept_offer))
        .route("/offers/{id}/decline", web::post().to(decline_offer));
}

/// Who acts, for whom, under which idempotency key.
struct Acting<'a> {
    state: &'a AppState,
    caller: &'a Caller,
    digest: &'a OwnerDigest,
    key: IdemKey,
}

/// Runs one owner's command once per idempotency scope and answers with
/// `status` and the command's JSON (or its stored rejection).
async fn once<'a, T, F>(
    acting: Acting<'a>,
    operation: &'static str,
    payload: serde_json::Value,
    status: u16,
    command: F,
) -> Result<HttpResponse, ApiError>
where
    T: serde::Serialize + Send + 'a,
    F: for<'r> Fn(&'r mut Conn, DateTime<Utc>) -> ScopedBoxFuture<'a, 'r, Result<T, CommandError>> + Send + Sync + 'a,
{
    let Acting { state, caller, digest, key } = acting;
    let scope = Scope { tenant: caller.tenant.clone(), operation, key: key.required()? };
    let fingerprint = Fingerprint::compute(operation, &payload, digest);
    let command = &command;
    let outcome = run_command(&state.runner(), Some((scope, fingerprint)), move |conn, now| {
        async move { Ok(StoredResponse::json(status, &command(conn, now).await?)) }.scope_boxed()
    })
    .await?;
    if operation == "hold.create" {
        crate::metrics::command_result(&state.metrics.holds, &outcome, "created");
    }
    Ok(outcome.into_response(true))
}

async fn list_resources(state: web::Data<AppState>, _: ApiCaller) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let rows = resources::list(&mut conn).await.map_err(DbError::from)?;
    let views: Vec<ResourceView> = rows.into_iter().map(ResourceView::from).collect();
    Ok(HttpResponse::Ok().json(json!({ "observedAt": state.clock.now(), "resources": views })))
}

async fn create_resource(
    state: web::Data<AppState>,
    AdminCaller(caller): AdminCaller,
    owner: Owner,
    key: IdemKey,
    ApiJson(body): ApiJson<NewResourceBody>,
) -> Result<HttpResponse, ApiError> {
    let new = NewResource::parse(body)?;
    let digest = owner.digest(&state, &caller);
    let payload = serde_json::to_value(&new).unwrap_or_default();
    let new = &new;
    once(
        Acting { state: &state, caller: &caller, digest: &digest, key },
        "resource.create",
        payload,
        201,
        move |conn, now| async move { resources::create(conn, new, now).await.map(ResourceView::from) }.scope_boxed(),
    )
    .await
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HoldBody {
    expected_resource_revision: Option<i64>,
    policy_version: Option<i64>,
    quantity: Option<i64>,
}

async fn create_hold(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    key: IdemKey,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<HoldBody>,
) -> Result<HttpResponse, ApiError> {
    let resource_id = id.into_inner();
    let ask = HoldRequest {
        quantity: Quantity::parse(body.quantity)?,
        expected_resource_revision: domain::parse_revision(
            "expectedResourceRevision",
            body.expected_resource_revision,
        )?,
        policy_version: domain::parse_policy(body.policy_version)?,
    };
    let digest = owner.digest(&state, &caller);
    let payload = json!({
        "resourceId": resource_id,
        "quantity": ask.quantity.get(),
        "expectedResourceRevision": ask.expected_resource_revision,
        "policyVersion": ask.policy_version,
    });
    let (d, ttl) = (&digest, state.hold_ttl);
    once(
        Acting { state: &state, caller: &caller, digest: &digest, key },
        "hold.create",
        payload,
        201,
        move |conn, now| async move { holds::create(conn, resource_id, d, ask, now, ttl).await }.scope_boxed(),
    )
    .await
}

/// Answers an owner-only read: 404 when missing, 403 for anyone else.
fn owned<T: serde::Serialize>(
    found: Option<T>,
    what: &str,
    owner_of: impl Fn(&T) -> &str,
    digest: &OwnerDigest,
) -> Result<HttpResponse, ApiError> {
    let item = found.ok_or_else(|| ApiError::not_found(what))?;
    if owner_of(&item) != digest.as_str() {
        return Err(owner_mismatch());
    }
    Ok(HttpResponse::Ok().json(item))
}

async fn get_hold(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let found = holds::find(&mut conn, id.into_inner()).await.map_err(DbError::from)?;
    owned(found, "hold", |h| &h.owner_digest, &owner.digest(&state, &caller))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TransitionBody {
    expected_revision: Option<i64>,
    policy_version: Option<i64>,
}

async fn confirm_hold(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    key: IdemKey,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<TransitionBody>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let expected = domain::parse_revision("expectedRevision", body.expected_revision)?;
    let policy = domain::parse_policy(body.policy_version)?;
    let digest = owner.digest(&state, &caller);
    let payload = json!({ "holdId": id, "expectedRevision": expected, "policyVersion": policy });
    let d = &digest;
    once(
        Acting { state: &state, caller: &caller, digest: &digest, key },
        "hold.confirm",
        payload,
        200,
        move |conn, now| async move { holds::confirm(conn, id, d, expected, policy, now).await }.scope_boxed(),
    )
    .await
}

async fn cancel_hold(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    key: IdemKey,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<TransitionBody>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let expected = domain::parse_revision("expectedRevision", body.expected_revision)?;
    let policy = domain::parse_policy(body.policy_version)?;
    let digest = owner.digest(&state, &caller);
    let payload = json!({ "holdId": id, "expectedRevision": expected, "policyVersion": policy });
    let (d, ttl) = (&digest, state.offer_ttl);
    once(
        Acting { state: &state, caller: &caller, digest: &digest, key },
        "hold.cancel",
        payload,
        200,
        move |conn, now| async move { holds::cancel(conn, id, d, expected, policy, now, ttl).await }.scope_boxed(),
    )
    .await
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExtendBody {
    expected_revision: Option<i64>,
    extend_by_seconds: i64,
}

async fn extend_hold(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    key: IdemKey,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<ExtendBody>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let expected = domain::parse_revision("expectedRevision", body.expected_revision)?;
    let by = ExtendBy::parse(body.extend_by_seconds)?;
    let digest = owner.digest(&state, &caller);
    let payload = json!({ "holdId": id, "expectedRevision": expected, "extendBySeconds": by.seconds() });
    let d = &digest;
    once(
        Acting { state: &state, caller: &caller, digest: &digest, key },
        "hold.extend",
        payload,
        200,
        move |conn, now| async move { holds::extend(conn, id, d, expected, by, now).await }.scope_boxed(),
    )
    .await
}

async fn join_waitlist(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    key: IdemKey,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<HoldBody>,
) -> Result<HttpResponse, ApiError> {
    let resource_id = id.into_inner();
    let ask = JoinRequest {
        quantity: Quantity::parse(body.quantity)?,
        expected_resource_revision: domain::parse_revision(
            "expectedResourceRevision",
            body.expected_resource_revision,
        )?,
        policy_version: domain::parse_policy(body.policy_version)?,
    };
    let digest = owner.digest(&state, &caller);
    let payload = json!({
        "resourceId": resource_id,
        "quantity": ask.quantity.get(),
        "expectedResourceRevision": ask.expected_resource_revision,
        "policyVersion": ask.policy_version,
    });
    let d = &digest;
    once(
        Acting { state: &state, caller: &caller, digest: &digest, key },
        "waitlist.join",
        payload,
        201,
        move |conn, now| async move { waitlist::join(conn, resource_id, d, ask, now).await }.scope_boxed(),
    )
    .await
}

async fn get_entry(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let found = waitlist::find_entry(&mut conn, id.into_inner()).await.map_err(DbError::from)?;
    owned(found, "waitlist entry", |e| &e.owner_digest, &owner.digest(&state, &caller))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RevisionBody {
    expected_revision: Option<i64>,
}

async fn leave_waitlist(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    key: IdemKey,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<RevisionBody>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let expected = domain::parse_revision("expectedRevision", body.expected_revision)?;
    let digest = owner.digest(&state, &caller);
    let payload = json!({ "entryId": id, "expectedRevision": expected });
    let (d, ttl) = (&digest, state.offer_ttl);
    once(
        Acting { state: &state, caller: &caller, digest: &digest, key },
        "waitlist.cancel",
        payload,
        200,
        move |conn, now| async move { waitlist::leave(conn, id, d, expected, now, ttl).await }.scope_boxed(),
    )
    .await
}

async fn get_offer(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let found = waitlist::find_offer(&mut conn, id.into_inner()).await.map_err(DbError::from)?;
    owned(found, "offer", |o| &o.owner_digest, &owner.digest(&state, &caller))
}

async fn accept_offer(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    key: IdemKey,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<RevisionBody>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let expected = domain::parse_revision("expectedRevision", body.expected_revision)?;
    let digest = owner.digest(&state, &caller);
    let payload = json!({ "offerId": id, "expectedRevision": expected });
    let d = &digest;
    once(
        Acting { state: &state, caller: &caller, digest: &digest, key },
        "offer.accept",
        payload,
        200,
        move |conn, now| async move { waitlist::accept(conn, id, d, expected, now).await }.scope_boxed(),
    )
    .await
}

async fn decline_offer(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    owner: Owner,
    key: IdemKey,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<RevisionBody>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let expected = domain::parse_revision("expectedRevision", body.expected_revision)?;
    let digest = owner.digest(&state, &caller);
    let payload = json!({ "offerId": id, "expectedRevision": expected });
    let (d, ttl) = (&digest, state.offer_ttl);
    once(
        Acting { state: &state, caller: &caller, digest: &digest, key },
        "offer.decline",
        payload,
        200,
        move |conn, now| async move { waitlist::decline(conn, id, d, expected, now, ttl).await }.scope_boxed(),
    )
    .await
}
