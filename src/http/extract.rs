//! Request extractors: they turn headers and bodies into domain values or a
//! documented 4xx before a handler runs.

use std::future::Future;
use std::pin::Pin;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use crate::auth::{Caller, OwnerDigest, OwnerId};
use crate::command::Principal;
use crate::error::{ApiError, ErrorCode};
use crate::idempotency::IdempotencyKey;
use crate::rooms::domain::Title;
use crate::state::AppState;

/// Largest JSON body accepted; anything bigger is 413 before parsing.
pub const JSON_LIMIT: usize = 64 * 1024;

fn state(req: &HttpRequest) -> web::Data<AppState> {
    req.app_data::<web::Data<AppState>>().cloned().expect("AppState is registered")
}

/// The bearer secret of `Authorization: Bearer <secret>`, when one is sent.
pub fn bearer(req: &HttpRequest) -> Option<String> {
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

fn unauthenticated() -> ApiError {
    ApiError::new(ErrorCode::Unauthenticated, "a valid `Authorization: Bearer <api key>` is required")
}

/// The key a bearer secret names, if any.
async fn resolve_key(state: &AppState, secret: &str) -> Result<Option<Caller>, ApiError> {
    if let Some(caller) = state.keys.resolve_configured(secret) {
        return Ok(Some(caller));
    }
    // Stored keys are read inside the bulkhead: unknown keys cannot take the pool.
    let _slot = state.admission.read_slot().await?;
    let mut conn = state.pool.get().await.map_err(crate::db::DbError::from)?;
    Ok(state.keys.resolve(&mut conn, secret).await?)
}

/// What [`authenticate_first`] found for the request's bearer.
#[derive(Clone)]
struct Authenticated(Option<Caller>);

/// Middleware of the JSON scope: the bearer is resolved before any
/// extractor runs. Actix polls a handler's extractors together and answers
/// the first error of any, so without this a malformed body or a missing
/// header would answer 400 while the key lookup was still on its way — and
/// tell a caller without a valid key which of its fields were wrong. With
/// the key known, the caller extractor is ready at once and, listed first,
/// answers first.
pub async fn authenticate_first(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    if let Some(secret) = bearer(req.request()) {
        let state = state(req.request());
        match resolve_key(&state, &secret).await {
            Ok(found) => {
                req.extensions_mut().insert(Authenticated(found));
            }
            // Answered here as a response, so the layers outside (the
            // message's language) see it like any other refusal.
            Err(err) => return Ok(req.error_response(err).map_into_right_body()),
        }
    }
    Ok(next.call(req).await?.map_into_left_body())
}

/// An integration authenticated by `Authorization: Bearer <key>`.
#[derive(Debug, Clone)]
pub struct ApiCaller(pub Caller);

impl FromRequest for ApiCaller {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        if let Some(Authenticated(found)) = req.extensions().get::<Authenticated>().cloned() {
            return Box::pin(std::future::ready(found.map(ApiCaller).ok_or_else(unauthenticated)));
        }
        let state = state(req);
        let secret = bearer(req);
        Box::pin(async move {
            let secret = secret.ok_or_else(unauthenticated)?;
            resolve_key(&state, &secret).await?.map(ApiCaller).ok_or_else(unauthenticated)
        })
    }
}

/// An API caller whose key has the admin role.
#[derive(Debug, Clone)]
pub struct AdminCaller(pub Caller);

impl FromRequest for AdminCaller {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let caller = ApiCaller::from_request(req, payload);
        Box::pin(async move {
            let ApiCaller(caller) = caller.await?;
            if !caller.is_admin() {
                return Err(ApiError::new(ErrorCode::Forbidden, "this route needs an admin API key"));
            }
            Ok(AdminCaller(caller))
        })
    }
}

/// Who may download an admin report: an admin API key, or — without an
/// `Authorization` header — the session cookie of a signed-in admin, so the
/// links on `/admin/reports` work in a browser. Read-only GET routes only:
/// a session is never enough for a command (those need the CSRF token of a form).
#[derive(Debug, Clone)]
pub struct AdminReader;

impl FromRequest for AdminReader {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        if req.headers().contains_key(header::AUTHORIZATION) {
            let admin = AdminCaller::from_request(req, payload);
            return Box::pin(async move { admin.await.map(|_| AdminReader) });
        }
        let state = state(req);
        let session = crate::transport::session_token(req, &state.transport);
        Box::pin(async move {
            let unauthenticated = || {
                ApiError::new(
                    ErrorCode::Unauthenticated,
                    "an admin `Authorization: Bearer <api key>` or an admin's signed-in session is required",
                )
            };
            let token = session.ok_or_else(unauthenticated)?;
            let mut conn = state.pool.get().await.map_err(crate::db::DbError::from)?;
            let user = crate::auth::staff::find_session(&mut conn, &token, state.clock.now())
                .await
                .map_err(crate::db::DbError::from)?
                .ok_or_else(unauthenticated)?;
            if !user.is_admin {
                return Err(ApiError::new(ErrorCode::Forbidden, "this report is for admins"));
            }
            Ok(AdminReader)
        })
    }
}

/// `X-Reservation-Owner`, required.
#[derive(Debug, Clone)]
pub struct Owner(pub OwnerId);

pub const OWNER_HEADER: &str = "X-Reservation-Owner";

impl FromRequest for Owner {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let parsed = match req.headers().get(OWNER_HEADER) {
            None => Err(ApiError::malformed(OWNER_HEADER, "header is required")),
            Some(v) => std::str::from_utf8(v.as_bytes())
                .map_err(|_| "must be UTF-8".to_owned())
                .and_then(OwnerId::parse)
                .map(Owner)
                .map_err(|reason| ApiError::malformed(OWNER_HEADER, reason)),
        };
        std::future::ready(parsed)
    }
}

impl Owner {
    pub fn digest(&self, state: &AppState, caller: &Caller) -> OwnerDigest {
        OwnerDigest::of_owner(&state.secret, &caller.tenant, &self.0)
    }

    /// The caller's key acting for this owner.
    pub fn principal(&self, state: &AppState, caller: &Caller) -> Principal {
        principal(state, caller, Some(&self.0))
    }
}

/// `X-Reservation-Owner` where it may be left out (admin routes): without it
/// the key's tenant acts for itself.
#[derive(Debug, Clone)]
pub struct MaybeOwner(pub Option<OwnerId>);

impl FromRequest for MaybeOwner {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        if req.headers().get(OWNER_HEADER).is_none() {
            return std::future::ready(Ok(MaybeOwner(None)));
        }
        std::future::ready(Owner::extract_now(req, payload).map(|o| MaybeOwner(Some(o.0))))
    }
}

impl Owner {
    fn extract_now(req: &HttpRequest, payload: &mut Payload) -> Result<Owner, ApiError> {
        futures_util::FutureExt::now_or_never(Owner::from_request(req, payload)).expect("ready")
    }
}

/// The common head of a JSON command: the caller, the owner acted for and
/// the optional idempotency key, as the [`Principal`] a command runs for.
pub struct ApiCommand {
    pub principal: Principal,
    pub key: Option<IdempotencyKey>,
    pub caller: Caller,
}

impl ApiCommand {
    /// The key, or `IDEMPOTENCY_KEY_REQUIRED` (routes that create things).
    pub fn required_key(&self) -> Result<IdempotencyKey, ApiError> {
        IdemKey(self.key.clone()).required()
    }

    /// `organizerName` as given, else the key's tenant: who a booking made
    /// through the API is shown as made by.
    pub fn organizer_name(&self, given: Option<&str>) -> Result<Title, ApiError> {
        Title::parse_field("organizerName", given.unwrap_or(self.caller.tenant.as_str()))
    }
}

fn principal(state: &AppState, caller: &Caller, owner: Option<&OwnerId>) -> Principal {
    Principal::api_key(&state.secret, &caller.tenant, caller.is_admin(), owner)
}

impl FromRequest for ApiCommand {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    /// Authentication first (401), then the owner and key headers (400).
    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let state = state(req);
        let caller = ApiCaller::from_request(req, payload);
        let owner = Owner::extract_now(req, payload);
        let key = IdemKey::from_request(req, payload).into_inner();
        Box::pin(async move {
            let ApiCaller(caller) = caller.await?;
            let owner = owner?;
            let key = key?.0;
            Ok(ApiCommand { principal: principal(&state, &caller, Some(&owner.0)), key, caller })
        })
    }
}

/// A command of an admin key; `X-Reservation-Owner` is optional.
pub struct AdminCommand(pub ApiCommand);

impl FromRequest for AdminCommand {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let state = state(req);
        let caller = AdminCaller::from_request(req, payload);
        let owner = MaybeOwner::from_request(req, payload).into_inner();
        let key = IdemKey::from_request(req, payload).into_inner();
        Box::pin(async move {
            let AdminCaller(caller) = caller.await?;
            let owner = owner?;
            let key = key?.0;
            Ok(AdminCommand(ApiCommand { principal: principal(&state, &caller, owner.0.as_ref()), key, caller }))
        })
    }
}

/// `Idempotency-Key`, optional here; routes that create things require it.
#[derive(Debug, Clone)]
pub struct IdemKey(pub Option<IdempotencyKey>);

impl IdemKey {
    pub fn required(self) -> Result<IdempotencyKey, ApiError> {
        self.0.ok_or_else(|| {
            ApiError::new(ErrorCode::IdempotencyKeyRequired, "this route requires an `Idempotency-Key` header")
        })
    }
}

impl FromRequest for IdemKey {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let parsed = match req.headers().get("Idempotency-Key") {
            None => Ok(IdemKey(None)),
            Some(v) => v
                .to_str()
                .map_err(|_| "must be visible ASCII characters".to_owned())
                .and_then(IdempotencyKey::parse)
                .map(|k| IdemKey(Some(k)))
                .map_err(|reason| ApiError::malformed("Idempotency-Key", reason)),
        };
        std::future::ready(parsed)
    }
}

/// A JSON body: `application/json` (else 415), at most `JSON_LIMIT` bytes (else
/// 413), parsed with the failing field named (else 400 `MALFORMED_REQUEST`).
/// An empty body reads as `{}`, so routes whose fields are all optional may omit it.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for ApiJson<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let content_type = req.headers().get(header::CONTENT_TYPE).map(|v| v.as_bytes().to_vec());
        let declared_len = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        let mut payload = payload.take();
        Box::pin(async move {
            let too_large =
                || ApiError::new(ErrorCode::PayloadTooLarge, format!("the body must be at most {JSON_LIMIT} bytes"));
            if declared_len.is_some_and(|n| n > JSON_LIMIT) {
                return Err(too_large());
            }
            let mut body = web::BytesMut::new();
            while let Some(chunk) = payload.next().await {
                let chunk = chunk.map_err(|e| ApiError::malformed("body", e.to_string()))?;
                if body.len() + chunk.len() > JSON_LIMIT {
                    return Err(too_large());
                }
                body.extend_from_slice(&chunk);
            }
            let body: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
                b"{}"
            } else {
                if !content_type.as_deref().is_some_and(is_json) {
                    return Err(ApiError::new(
                        ErrorCode::UnsupportedMediaType,
                        "the body must be `Content-Type: application/json`",
                    ));
                }
                &body
            };
            let text = std::str::from_utf8(body).map_err(|_| ApiError::malformed("body", "is not valid UTF-8"))?;
            // serde would read a JSON array into a struct by position; bodies are objects.
            if !text.trim_start().starts_with('{') {
                return Err(ApiError::malformed("body", "must be a JSON object"));
            }
            let de = &mut serde_json::Deserializer::from_str(text);
            serde_path_to_error::deserialize(de).map(ApiJson).map_err(|e| {
                let reason = e.inner().to_string();
                let path = e.path().to_string();
                let field = missing_field(&reason).map(str::to_owned).unwrap_or(if path == "." {
                    "body".to_owned()
                } else {
                    path
                });
                ApiError::malformed(&field, reason)
            })
        })
    }
}

fn is_json(content_type: &[u8]) -> bool {
    let Ok(ct) = std::str::from_utf8(content_type) else {
        return false;
    };
    let essence = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// serde names a missing field only in its message ("missing field `title`").
fn missing_field(reason: &str) -> Option<&str> {
    let rest = reason.strip_prefix("missing field `")?;
    rest.split('`').next()
}

/// RFC 3339 timestamps with an explicit offset; naive times are refused.
pub mod rfc3339 {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let raw = String::deserialize(d)?;
        DateTime::parse_from_rfc3339(&raw).map(|t| t.with_timezone(&Utc)).map_err(|_| {
            serde::de::Error::custom("must be an RFC 3339 time with an offset, e.g. 2030-01-01T10:00:00+09:00")
        })
    }
}
