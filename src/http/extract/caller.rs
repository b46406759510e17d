//! Who calls the JSON API: the bearer key, resolved once by the scope's
//! middleware before any extractor runs, and the end user an integration
//! acts for (`X-Reservation-Owner`).

use std::future::Future;
use std::pin::Pin;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};

use crate::auth::{Caller, OwnerDigest, OwnerId};
use crate::command::Principal;
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;

pub(super) fn state(req: &HttpRequest) -> web::Data<AppState> {
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
/// It carries who reads, for the access record of a report of people.
#[derive(Debug, Clone)]
pub struct AdminReader(pub crate::privacy::Actor);

impl FromRequest for AdminReader {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        if req.headers().contains_key(header::AUTHORIZATION) {
            let admin = AdminCaller::from_request(req, payload);
            return Box::pin(async move {
                admin.await.map(|AdminCaller(c)| AdminReader(crate::http::access_log::key_actor(&c)))
            });
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
                .ok_or_else(unauthenticated)?
                .0;
            if !user.is_admin {
                return Err(ApiError::new(ErrorCode::Forbidden, "this report is for admins"));
            }
            Ok(AdminReader(crate::privacy::Actor::Staff { id: user.id, username: user.username }))
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

impl Owner {
    pub(super) fn extract_now(req: &HttpRequest, payload: &mut Payload) -> Result<Owner, ApiError> {
        futures_util::FutureExt::now_or_never(Owner::from_request(req, payload)).expect("ready")
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

pub(super) fn principal(state: &AppState, caller: &Caller, owner: Option<&OwnerId>) -> Principal {
    Principal::api_key(&state.secret, &caller.tenant, caller.is_admin(), owner)
}

/// Who reads bookings over JSON (SPEC §26): an admin key sees everything;
/// another key sees the private bookings of the owner it names in
/// `X-Reservation-Owner` (optional on reads) and no one else's. Also the
/// caller's language, in which a hidden booking's title is written.
pub struct Reading {
    pub reader: crate::rooms::privacy::Reader,
    pub lang: crate::i18n::Lang,
}

impl Reading {
    /// "비공개 예약" / "Private booking".
    pub fn label(&self) -> String {
        crate::i18n::I18n::new(self.lang).t("private-booking")
    }

    pub fn show(&self, b: crate::rooms::booking::Booking) -> crate::rooms::booking::Booking {
        self.reader.show(b, &self.label())
    }
}

impl FromRequest for Reading {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let state = state(req);
        let caller = ApiCaller::from_request(req, payload);
        let owner = MaybeOwner::from_request(req, payload).into_inner();
        let lang = req
            .headers()
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|h| h.to_str().ok())
            .and_then(crate::i18n::Lang::from_accept_language)
            .unwrap_or_default();
        Box::pin(async move {
            let ApiCaller(caller) = caller.await?;
            let owner = owner?;
            let principal = principal(&state, &caller, owner.0.as_ref());
            Ok(Reading { reader: crate::rooms::privacy::Reader::of(&principal, []), lang })
        })
    }
}
