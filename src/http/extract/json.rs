//! JSON bodies: at most [`JSON_LIMIT`] bytes of `application/json`, read
//! into their type with the offending field named in the 400.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use crate::error::{ApiError, ErrorCode};

/// Largest JSON body accepted; anything bigger is 413 before parsing.
pub const JSON_LIMIT: usize = 64 * 1024;

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
