//! JSON routes of SPEC §7.1. Every POST needs `Idempotency-Key` and goes
//! through the idempotency runner; every route but the resource list needs
//! `X-Reservation-Owner`, and reads are for the owner only.

use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use scoped_futures::ScopedBoxFuture;
use scoped_futures::ScopedFutureExt;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::domain::{self, Entry, ExtendBy, Hold, NewResource, NewResourceBody, Offer, ResourceView, UnitsAsk};
use super::holds;
use super::waitlist;
use super::{owner_mismatch, resources};
use crate::auth::{Caller, OwnerDigest};
use crate::db::{Conn, DbError};
use crate::error::{ApiError, ErrorCode};
use crate::http::extract::{AdminCaller, AdminCommand, ApiCaller, ApiJson, IdemKey, Owner};
use crate::http::openapi::{Api, Op, Tag};
use crate::idempotency::{run_command, CommandError, Fingerprint, Scope, StoredResponse};
use crate::state::AppState;

pub fn routes(api: &mut Api) {
    use ErrorCode::*;
    let post = |id, summary, status| Op::new::<Hold>(Tag::Capacity, id, summary, status).owner().idempotent(true);
    let hold_rules = [NotFound, OwnerMismatch, InvalidState, StaleRevision, PolicyVersionMismatch, HoldExpired];
    let offer_rules = [NotFound, OwnerMismatch, InvalidState, StaleRevision, OfferExpired];
    api.route(
        Method::GET,
        "/resources",
        Op::new::<ResourcesReply>(Tag::Capacity, "listResources", "all capacity resources", 200),
        list_resources,
    )
    .route(
        Method::POST,
        "/resources",
        Op::new::<ResourceView>(Tag::Capacity, "createResource", "create a resource", 201)
            .admin()
            .owner()
            .idempotent(true)
            .body::<NewResourceBody>()
            .errors(&[ResourceCodeTaken]),
        create_resource,
    )
    .route(
        Method::POST,
        "/resources/{id}/holds",
        post("createHold", "take units with one conditional update", 201).body::<HoldBody>().errors(&[
            NotFound,
            CapacityExhaustedOrStale,
            PolicyVersionMismatch,
            ResourceClosed,
            AdmissionRejected,
        ]),
        create_hold,
    )
    .route(
        Method::GET,
        "/holds/{id}",
        Op::new::<Hold>(Tag::Capacity, "getHold", "one hold (owner only)", 200)
            .owner()
            .errors(&[NotFound, OwnerMismatch]),
        get_hold,
    )
    .route(
        Method::POST,
        "/holds/{id}/confirm",
        post("confirmHold", "confirm a held hold", 200).body::<TransitionBody>().errors(&hold_rules),
        confirm_hold,
    )
    .route(
        Method::POST,
        "/holds/{id}/cancel",
        post("cancelHold", "cancel a hold; units go to the next waiter or back", 200)
            .body::<TransitionBody>()
            .errors(&hold_rules),
        cancel_hold,
    )
    .route(
        Method::POST,
        "/holds/{id}/extend",
        post("extendHold", "extend a held hold, never past its maximum lifetime", 200)
            .body::<ExtendBody>()
            .errors(&hold_rules)
            .errors(&[HoldLifetimeExceeded]),
        extend_hold,
    )
    .route(
        Method::POST,
        "/resources/{id}/waitlist",
        Op::new::<Entry>(Tag::Capacity, "joinWaitlist", "join the FIFO waitlist", 201)
            .owner()
            .idempotent(true)
            .body::<HoldBody>()
            .errors(&[
                NotFound,
                CapacityAvailable,
                StaleRevision,
                PolicyVersionMismatch,
                ResourceClosed,
                QuantityExceedsCapacity,
                AlreadyWaiting,
            ]),
        join_waitlist,
    )
    .route(
        Method::GET,
        "/waitlist/{id}",
        Op::new::<Entry>(Tag::Capacity, "getWaitlistEntry", "a waitlist entry with its place (owner only)", 200)
            .owner()
            .errors(&[NotFound, OwnerMismatch]),
        get_entry,
    )
    .route(
        Method::POST,
        "/waitlist/{id}/cancel",
        Op::new::<Entry>(Tag::Capacity, "leaveWaitlist", "leave the waitlist", 200)
            .owner()
            .idempotent(true)
            .body::<RevisionBody>()
            .errors(&[NotFound, OwnerMismatch, InvalidState, StaleRevision]),
        leave_waitlist,
    )
    .route(
        Method::GET,
        "/offers/{id}",
        Op::new::<Offer>(Tag::Capacity, "getOffer", "an offer (owner only)", 200)
            .owner()
            .errors(&[NotFound, OwnerMismatch]),
        get_offer,
    )
    .route(
        Method::POST,
        "/offers/{id}/accept",
        Op::new::<Offer>(Tag::Capacity, "acceptOffer", "accept an offer: a CONFIRMED hold for the new owner", 200)
            .owner()
            .idempotent(true)
            .body::<RevisionBody>()
            .errors(&offer_rules),
        accept_offer,
    )
    .route(
        Method::POST,
        "/offers/{id}/decline",
        Op::new::<Offer>(Tag::Capacity, "declineOffer", "decline an offer; units go to the next waiter or back", 200)
            .owner()
            .idempotent(true)
            .body::<RevisionBody>()
            .errors(&offer_rules),
        decline_offer,
    )
    .route(
        Method::POST,
        "/admin/waitlist/{id}/evict",
        Op::new::<Entry>(
            Tag::Admin,
            "evictWaitlistEntry",
            "evict a WAITING or OFFERED entry; a live offer is withdrawn and the hand-off runs again",
            200,
        )
        .admin()
        .owner_optional()
        .idempotent(true)
        .body::<RevisionBody>()
        .errors(&[NotFound, InvalidState, StaleRevision]),
        evict_entry,
    );
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesReply {
    observed_at: DateTime<Utc>,
    resources: Vec<ResourceView>,
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
    Ok(HttpResponse::Ok().json(ResourcesReply { observed_at: state.clock.now(), resources: views }))
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

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HoldBody {
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
    let ask = UnitsAsk::parse(body.quantity, body.expected_resource_revision, body.policy_version)?;
    let digest = owner.digest(&state, &caller);
    let payload = ask.payload(resource_id);
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

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransitionBody {
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

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExtendBody {
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
    let (d, max) = (&digest, state.hold_max_lifetime);
    once(
        Acting { state: &state, caller: &caller, digest: &digest, key },
        "hold.extend",
        payload,
        200,
        move |conn, now| async move { holds::extend(conn, id, d, expected, by, max, now).await }.scope_boxed(),
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
    let ask = UnitsAsk::parse(body.quantity, body.expected_resource_revision, body.policy_version)?;
    let digest = owner.digest(&state, &caller);
    let payload = ask.payload(resource_id);
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

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevisionBody {
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

/// `POST /api/admin/waitlist/{id}/evict` (admin key, SPEC §13).
async fn evict_entry(
    state: web::Data<AppState>,
    AdminCommand(cmd): AdminCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<RevisionBody>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let key = cmd.required_key()?;
    let expected = domain::parse_revision("expectedRevision", body.expected_revision)?;
    let payload = json!({ "entryId": id, "expectedRevision": expected });
    let ttl = state.offer_ttl;
    let outcome = cmd
        .acting
        .run(&state, "waitlist.evict", Some(key), &payload, 200, move |conn, now| {
            async move { waitlist::evict(conn, id, expected, now, ttl).await }.scope_boxed()
        })
        .await?;
    Ok(outcome.into_response(true))
}
