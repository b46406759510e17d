//! The JSON scope's outermost middleware: error answers carry their message
//! in the caller's language (`Accept-Language`, Korean by default; SPEC
//! §19), whichever layer refused — a handler, an extractor, the
//! authentication middleware, or a replay of a stored answer.

use actix_web::body::{self, BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::Next;
use actix_web::web::Bytes;

use crate::i18n::{self, Lang};

/// Rewrites the `message` of JSON error answers into the caller's language.
pub async fn errors_in_callers_language(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let lang = req
        .headers()
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .and_then(Lang::from_accept_language)
        .unwrap_or(Lang::Ko);
    // Inner layers answer refusals as responses, never as `Err` (the
    // authentication middleware included), so every one passes here.
    let res = next.call(req).await?.map_into_boxed_body();
    let status = res.status();
    let json = res.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || !json {
        return Ok(res);
    }
    let (request, response) = res.into_parts();
    let (mut response, body) = response.into_parts();
    let bytes: Bytes = body::to_bytes(body).await.map_err(actix_web::error::ErrorInternalServerError)?;
    let bytes = i18n::api::localise(lang, &bytes).map(Bytes::from).unwrap_or(bytes);
    response.headers_mut().insert(header::CONTENT_LANGUAGE, HeaderValue::from_static(lang.tag()));
    response.headers_mut().append(header::VARY, HeaderValue::from_static("Accept-Language"));
    Ok(ServiceResponse::new(request, response.set_body(BoxBody::new(bytes))))
}
