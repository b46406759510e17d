//! A command's request: the caller as a principal, the owner it acts for,
//! and its `Idempotency-Key`.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};

use crate::auth::Caller;
use crate::command::Principal;
use crate::error::{ApiError, ErrorCode};
use crate::idempotency::IdempotencyKey;
use crate::rooms::domain::Title;

use super::caller::{principal, state, AdminCaller, ApiCaller, MaybeOwner, Owner};

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
