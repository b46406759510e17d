//! HTTP surface: route table, extractors, response conventions of SPEC §7.3.

pub mod extract;
pub mod health;
pub mod openapi;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{web, HttpResponse};

use actix_web::http::Method;
use openapi::{Api, Op, Tag};
use tracing::Instrument;

use crate::error::ApiError;

/// Registers every route; `main` and the tests build the app from this.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.app_data(web::PathConfig::default().error_handler(|_, _| ApiError::not_found("resource").into()))
        .app_data(
            web::QueryConfig::default().error_handler(|err, _| ApiError::malformed("query", err.to_string()).into()),
        )
        .configure(crate::web::routes)
        .service(actix_files::Files::new("/static", concat!(env!("CARGO_MANIFEST_DIR"), "/static")))
        .route("/metrics", web::get().to(crate::metrics::scrape))
        .route("/healthz", web::get().to(health::healthz))
        .route("/readyz", web::get().to(health::readyz))
        .service(
            web::scope("/api")
                .configure(|cfg| api_routes(&mut Api::new(cfg, "/api")))
                .route("/openapi.json", web::get().to(openapi::serve))
                .default_service(web::to(api_not_found)),
        );
}

/// Every JSON route, each registered with its documentation.
fn api_routes(api: &mut Api) {
    use crate::error::ErrorCode::*;
    crate::catalogue::http::routes(api);
    crate::rooms::http::routes(api);
    crate::series::http::routes(api);
    crate::capacity::http::routes(api);
    crate::auth::http::routes(api);
    crate::reports::http::routes(api);
    api.route(
        Method::GET,
        "/admin/consistency",
        Op::new::<crate::consistency::Report>(
            Tag::Admin,
            "getConsistencyReport",
            "every invariant check with its count and offending rows",
            200,
        )
        .admin(),
        crate::consistency::api_consistency,
    )
    .route(
        Method::POST,
        "/admin/sweep",
        Op::new::<crate::sweeper::SweepSummary>(Tag::Admin, "runSweep", "run one expiry sweep now", 200)
            .admin()
            .owner()
            .idempotent(true)
            .body::<crate::sweeper::http::SweepBody>(),
        crate::sweeper::http::sweep,
    )
    .route(
        Method::POST,
        "/admin/outbox/{delivery_id}/redrive",
        Op::new::<crate::outbox::http::Redriven>(
            Tag::Admin,
            "redriveDelivery",
            "give an EXHAUSTED delivery a fresh attempt budget",
            200,
        )
        .admin()
        .errors(&[NotFound, InvalidState]),
        crate::outbox::http::redrive,
    );
}

async fn api_not_found() -> HttpResponse {
    actix_web::ResponseError::error_response(&ApiError::not_found("route"))
}

/// Largest total size of request headers we read.
const MAX_HEADER_BYTES: usize = 16 * 1024;

/// A client's request id is echoed when sane (`[A-Za-z0-9._-]{8,80}`),
/// otherwise one is generated.
pub fn request_id(req: &ServiceRequest) -> String {
    req.headers()
        .get("X-Request-Id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| (8..=80).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)))
        .map(str::to_owned)
        .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string())
}

/// Security headers and `X-Request-Id` on every response; `no-store` on the API.
pub async fn response_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<actix_web::body::BoxBody>, actix_web::Error> {
    let id = request_id(&req);
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
    if let Some(state) = res.request().app_data::<web::Data<crate::state::AppState>>() {
        state.metrics.observe_request(res.request().method(), &route, res.status().as_u16(), elapsed.as_secs_f64());
        hsts = state.transport.https;
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
        set(headers, "strict-transport-security", crate::web::transport::HSTS);
    }
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        set(
            headers,
            "content-security-policy",
            "default-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'",
        );
    }
    if is_api {
        set(headers, "cache-control", "no-store");
    }
    Ok(res)
}
