//! Admin JSON routes of API keys (SPEC §13): `POST /api/admin/keys`,
//! `GET /api/admin/keys`, `POST /api/admin/keys/{id}/revoke`. Key creation
//! does not go through the idempotency store on purpose: a stored answer
//! would keep the secret, which must exist only in the one response.

use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use serde::Deserialize;

use crate::auth::api_key::{Role, Tenant};
use crate::auth::commands::{CreateKey, RevokeKey, CREATE_KEY, REVOKE_KEY};
use crate::auth::keys::{self, KeyEntry, NewKey};
use crate::auth::Caller;
use crate::command::Principal;
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
use crate::http::extract::{AdminCaller, ApiJson};
use crate::http::openapi::{Api, Op, Tag};
use crate::state::AppState;

pub fn routes(api: &mut Api) {
    api.route(
        Method::POST,
        "/admin/keys",
        Op::new::<NewKey>(
            Tag::Admin,
            "createApiKey",
            "create an API key; its secret is shown only in this answer",
            201,
        )
        .admin()
        .body::<NewKeyBody>()
        .errors(&[ErrorCode::ReservedTenant])
        .runs(&CREATE_KEY),
        create,
    )
    .route(
        Method::GET,
        "/admin/keys",
        Op::new::<KeyList>(Tag::Admin, "listApiKeys", "every key with its last use, configured keys included", 200)
            .admin(),
        list,
    )
    .route(
        Method::POST,
        "/admin/keys/{id}/revoke",
        Op::new::<KeyEntry>(
            Tag::Admin,
            "revokeApiKey",
            "revoke a key: its next request gets 401, on every process",
            200,
        )
        .admin()
        .errors(&[ErrorCode::NotFound])
        .runs(&REVOKE_KEY),
        revoke,
    );
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewKeyBody {
    /// `[A-Za-z0-9._-]{1,64}`; not `staff` or `display` (`RESERVED_TENANT`)
    tenant: String,
    /// `integration` or `admin`
    role: String,
    /// Up to 100 characters.
    #[serde(default)]
    label: String,
}

#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct KeyList {
    keys: Vec<KeyEntry>,
}

async fn create(
    state: web::Data<AppState>,
    AdminCaller(caller): AdminCaller,
    ApiJson(body): ApiJson<NewKeyBody>,
) -> Result<HttpResponse, ApiError> {
    let tenant = Tenant::parse(&body.tenant).map_err(|e| ApiError::malformed("tenant", e))?;
    let role: Role = body.role.parse().map_err(|e: String| ApiError::malformed("role", e))?;
    if body.label.chars().count() > keys::LABEL_CHARS {
        return Err(ApiError::malformed("label", "must be at most 100 characters"));
    }
    crate::text::ensure_plain("label", &body.label)?;
    let command = CreateKey { tenant, role, label: body.label };
    let key = state.pipeline.run(&principal(&state, &caller), None, &command).await?;
    Ok(HttpResponse::Created().json(key))
}

async fn list(state: web::Data<AppState>, _: AdminCaller) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let keys = keys::list(&mut conn, &state.keys).await.map_err(DbError::from)?;
    Ok(HttpResponse::Ok().json(KeyList { keys }))
}

async fn revoke(
    state: web::Data<AppState>,
    AdminCaller(caller): AdminCaller,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let command = RevokeKey { id: id.into_inner() };
    match state.pipeline.run(&principal(&state, &caller), None, &command).await? {
        Some(entry) => Ok(HttpResponse::Ok().json(entry)),
        None => Err(ApiError::not_found("key")),
    }
}

/// An admin key acting for its own tenant.
fn principal(state: &AppState, caller: &Caller) -> Principal {
    Principal::api_key(&state.secret, &caller.tenant, caller.is_admin(), None)
}
