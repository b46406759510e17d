//! JSON routes of SPEC §7.1. Every POST needs `Idempotency-Key` and runs
//! its command through the pipeline; every route but the resource list needs
//! `X-Reservation-Owner`, and reads are for the owner only.

use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::extract::{AdminCaller, AdminCommand, ApiCaller, ApiCommand, ApiJson, IdemKey, Owner};
use super::openapi::{Api, Op, Tag};
use super::run;
use crate::auth::OwnerDigest;
use crate::capacity::commands::*;
use crate::capacity::domain::{
    self, Entry, ExtendBy, Hold, NewResource, NewResourceBody, Offer, ResourceView, UnitsAsk,
};
use crate::capacity::{holds, owner_mismatch, resources, waitlist};
use crate::command::Command;
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
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
            .errors(&[ResourceCodeTaken])
            .runs(&CREATE_RESOURCE),
        create_resource,
    )
    .route(
        Method::POST,
        "/resources/{id}/holds",
        post("createHold", "take units with one conditional update", 201)
            .body::<HoldBody>()
            .errors(&[NotFound, CapacityExhaustedOrStale, PolicyVersionMismatch, ResourceClosed, AdmissionRejected])
            .runs(&CREATE_HOLD),
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
        post("confirmHold", "confirm a held hold", 200)
            .body::<TransitionBody>()
            .errors(&hold_rules)
            .runs(&CONFIRM_HOLD),
        confirm_hold,
    )
    .route(
        Method::POST,
        "/holds/{id}/cancel",
        post("cancelHold", "cancel a hold; units go to the next waiter or back", 200)
            .body::<TransitionBody>()
            .errors(&hold_rules)
            .runs(&CANCEL_HOLD),
        cancel_hold,
    )
    .route(
        Method::POST,
        "/holds/{id}/extend",
        post("extendHold", "extend a held hold, never past its maximum lifetime", 200)
            .body::<ExtendBody>()
            .errors(&hold_rules)
            .errors(&[HoldLifetimeExceeded])
            .runs(&EXTEND_HOLD),
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
            ])
            .runs(&JOIN_WAITLIST),
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
            .errors(&[NotFound, OwnerMismatch, InvalidState, StaleRevision])
            .runs(&LEAVE_WAITLIST),
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
            .errors(&offer_rules)
            .runs(&ACCEPT_OFFER),
        accept_offer,
    )
    .route(
        Method::POST,
        "/offers/{id}/decline",
        Op::new::<Offer>(Tag::Capacity, "declineOffer", "decline an offer; units go to the next waiter or back", 200)
            .owner()
            .idempotent(true)
            .body::<RevisionBody>()
            .errors(&offer_rules)
            .runs(&DECLINE_OFFER),
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
        .errors(&[NotFound, InvalidState, StaleRevision])
        .runs(&EVICT_ENTRY),
        evict_entry,
    );
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesReply {
    observed_at: DateTime<Utc>,
    resources: Vec<ResourceView>,
}

/// Runs a capacity command (every one needs a key) and answers with its
/// stored response.
async fn keyed<C: Command>(state: &AppState, cmd: ApiCommand, command: C) -> Result<HttpResponse, ApiError> {
    let key = cmd.required_key()?;
    run(&state.pipeline, &cmd.principal, Some(key), &command).await
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
    let command = CreateResource(NewResource::parse(body)?);
    let principal = owner.principal(&state, &caller);
    keyed(&state, ApiCommand { principal, key: key.0, caller }, command).await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HoldBody {
    pub expected_resource_revision: Option<i64>,
    pub policy_version: Option<i64>,
    pub quantity: Option<i64>,
}

async fn create_hold(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<HoldBody>,
) -> Result<HttpResponse, ApiError> {
    let ask = UnitsAsk::parse(body.quantity, body.expected_resource_revision, body.policy_version)?;
    keyed(&state, cmd, CreateHold { resource_id: id.into_inner(), ask }).await
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

impl TransitionBody {
    pub fn parse(self, hold_id: i64) -> Result<HoldTransition, ApiError> {
        Ok(HoldTransition {
            hold_id,
            expected_revision: domain::parse_revision("expectedRevision", self.expected_revision)?,
            policy_version: domain::parse_policy(self.policy_version)?,
        })
    }
}

async fn confirm_hold(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<TransitionBody>,
) -> Result<HttpResponse, ApiError> {
    keyed(&state, cmd, ConfirmHold(body.parse(id.into_inner())?)).await
}

async fn cancel_hold(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<TransitionBody>,
) -> Result<HttpResponse, ApiError> {
    keyed(&state, cmd, CancelHold(body.parse(id.into_inner())?)).await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExtendBody {
    pub expected_revision: Option<i64>,
    pub extend_by_seconds: i64,
}

async fn extend_hold(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<ExtendBody>,
) -> Result<HttpResponse, ApiError> {
    let command = ExtendHold {
        hold_id: id.into_inner(),
        expected_revision: domain::parse_revision("expectedRevision", body.expected_revision)?,
        by: ExtendBy::parse(body.extend_by_seconds)?,
    };
    keyed(&state, cmd, command).await
}

async fn join_waitlist(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<HoldBody>,
) -> Result<HttpResponse, ApiError> {
    let ask = UnitsAsk::parse(body.quantity, body.expected_resource_revision, body.policy_version)?;
    keyed(&state, cmd, JoinWaitlist { resource_id: id.into_inner(), ask }).await
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

impl RevisionBody {
    pub fn revision(&self) -> Result<Option<i64>, ApiError> {
        domain::parse_revision("expectedRevision", self.expected_revision)
    }
}

async fn leave_waitlist(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<RevisionBody>,
) -> Result<HttpResponse, ApiError> {
    keyed(&state, cmd, LeaveWaitlist { entry_id: id.into_inner(), expected_revision: body.revision()? }).await
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
    cmd: ApiCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<RevisionBody>,
) -> Result<HttpResponse, ApiError> {
    keyed(&state, cmd, AcceptOffer { offer_id: id.into_inner(), expected_revision: body.revision()? }).await
}

async fn decline_offer(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<RevisionBody>,
) -> Result<HttpResponse, ApiError> {
    keyed(&state, cmd, DeclineOffer { offer_id: id.into_inner(), expected_revision: body.revision()? }).await
}

/// `POST /api/admin/waitlist/{id}/evict` (admin key, SPEC §13).
async fn evict_entry(
    state: web::Data<AppState>,
    AdminCommand(cmd): AdminCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<RevisionBody>,
) -> Result<HttpResponse, ApiError> {
    keyed(&state, cmd, EvictEntry { entry_id: id.into_inner(), expected_revision: body.revision()? }).await
}
