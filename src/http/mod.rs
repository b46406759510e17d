//! The JSON door (SPEC §7): extractors that turn requests into principals
//! and domain values, the handlers of each capability's routes, the
//! response conventions of §7.3 and the OpenAPI document. The route table
//! itself is `crate::routes`.

pub mod access_log;
pub mod admin;
pub mod areas;
pub mod bookings;
pub mod capacity;
pub mod extract;
pub mod health;
pub mod history;
pub mod holidays;
pub mod keys;
pub mod localise;
pub mod metrics;
pub mod openapi;
pub mod reports;
pub mod rooms;
pub mod series;
pub mod staff;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::{web, HttpResponse};
use tracing::Instrument;

use crate::command::{Command, Pipeline, Principal};
use crate::error::ApiError;
use crate::idempotency::IdempotencyKey;

/// Runs `command` for `principal` through the pipeline and answers as the
/// client gets it: the stored status and the exact stored body bytes (a
/// replay is byte for byte the first answer), with `Idempotency-Replayed`
/// when the request carried a key.
pub async fn run<C: Command>(
    pipeline: &Pipeline,
    principal: &Principal,
    key: Option<IdempotencyKey>,
    command: &C,
) -> Result<HttpResponse, ApiError> {
    let keyed = key.is_some();
    let executed = pipeline.execute(principal, key, command).await?;
    let stored = executed.response;
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut res = HttpResponse::build(status);
    res.content_type("application/json");
    if keyed {
        res.insert_header(("Idempotency-Replayed", if executed.replayed { "true" } else { "false" }));
    }
    Ok(res.body(stored.body))
}

/// Largest total size of request headers we read.
const MAX_HEADER_BYTES: usize = 16 * 1024;

/// A client's request id, when sane (`[A-Za-z0-9._-]{8,80}`): echoed.
pub fn request_id(headers: &header::HeaderMap) -> Option<String> {
    headers
        .get("X-Request-Id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| (8..=80).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)))
        .map(str::to_owned)
}

/// An id for a request that brought none.
pub fn new_request_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Security headers and `X-Request-Id` on every response; `no-store` on the API.
pub async fn response_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<actix_web::body::BoxBody>, actix_web::Error> {
    let id = request_id(req.headers()).unwrap_or_else(new_request_id);
    let header_bytes: usize = req.headers().iter().map(|(k, v)| k.as_str().len() + v.len()).sum();
    let is_api = req.path().starts_with("/api/") || req.path() == "/healthz" || req.path() == "/readyz";
    let span = tracing::info_span!("request", method = %req.method(), path = %req.path(), request_id = %id);
    let started = std::time::Instant::now();
    let mut res = if header_bytes > MAX_HEADER_BYTES {
        // Refused before any handler runs; still gets every header below.
        let refused =
            ApiError::malformed("headers", format!("request headers must stay under {MAX_HEADER_BYTES} bytes"));
        req.into_response(actix_web::ResponseError::error_response(&refused))
    } else {
        next.call(req).instrument(span.clone()).await?.map_into_boxed_body()
    };
    let route = res.request().match_pattern().unwrap_or_else(|| crate::metrics::UNMATCHED_ROUTE.to_owned());
    let elapsed = started.elapsed();
    let mut hsts = false;
    let mut form_targets = None;
    if let Some(state) = res.request().app_data::<web::Data<crate::state::AppState>>() {
        state.metrics.observe_request(res.request().method(), &route, res.status().as_u16(), elapsed.as_secs_f64());
        hsts = state.transport.https;
        form_targets = state.oidc.as_ref().and_then(|o| o.origin());
    }
    span.in_scope(|| {
        tracing::info!(route = %route, status = res.status().as_u16(), latency_ms = elapsed.as_millis() as u64, "request")
    });
    let headers = res.headers_mut();
    let set = |h: &mut actix_web::http::header::HeaderMap, name: &'static str, value: &str| {
        if let Ok(v) = HeaderValue::from_str(value) {
            h.insert(header::HeaderName::from_static(name), v);
        }
    };
    set(headers, "x-request-id", &id);
    set(headers, "x-content-type-options", "nosniff");
    set(headers, "referrer-policy", "no-referrer");
    set(headers, "x-frame-options", "DENY");
    if hsts {
        set(headers, "strict-transport-security", crate::transport::HSTS);
    }
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        // Browsers hold a form's redirects to `form-action` too: sign-out
        // goes on to the OpenID provider's end-session page (SPEC §16).
        let form_action = match form_targets {
            Some(origin) => format!("'self' {origin}"),
            None => "'self'".to_owned(),
        };
        set(
            headers,
            "content-security-policy",
            &format!("default-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action {form_action}"),
        );
    }
    if is_api {
        set(headers, "cache-control", "no-store");
    }
    Ok(res)
}
