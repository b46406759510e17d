//! An admin's file upload (`multipart/form-data`, SPEC §29): the form's
//! text fields and one file, read with bounds — at most [`FILE_LIMIT`]
//! bytes of file, [`FIELD_LIMIT`] of each other field, [`PARTS`] parts —
//! then the same checks as every form: signed in, the CSRF token of the
//! session (403, nothing changed), an admin. A body that is not multipart
//! is read as an ordinary form (it has no file), so a forged urlencoded
//! post is refused by its token like any other.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use actix_multipart::Multipart;
use actix_web::dev::Payload;
use actix_web::http::{header, StatusCode};
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::StreamExt;

use crate::auth::staff::StaffUser;
use crate::state::AppState;
use crate::web::{csrf_refused, Csrf, FormData, SignedIn, WebError};

/// The largest file (a country's public holidays for ten years are about 60 KiB).
pub const FILE_LIMIT: usize = 1024 * 1024;
/// The largest text field of an upload form (a CSRF token is 64 characters).
const FIELD_LIMIT: usize = 4 * 1024;
/// The most parts an upload form has.
const PARTS: usize = 16;

/// An admin's upload whose CSRF token checked out.
pub struct AdminUpload {
    pub user: StaffUser,
    pub form: FormData,
    /// The `file` part's bytes (none when the form sent no file).
    pub file: Option<Vec<u8>>,
}

/// A floor plan's upload (SPEC §28, §29): the same, its file in the part
/// `plan`, at most `catalogue::plans::MAX_BYTES` (else 413).
pub struct PlanUpload(pub AdminUpload);

fn unreadable() -> WebError {
    WebError::message(StatusCode::BAD_REQUEST, "error-bad-request", "error-form-unreadable")
}

fn too_large() -> WebError {
    WebError::message(StatusCode::PAYLOAD_TOO_LARGE, "error-too-large", "upload-too-large")
}

/// Reads a part up to `limit` bytes, stopping at once past it.
async fn read_part(field: &mut actix_multipart::Field, limit: usize) -> Result<Vec<u8>, WebError> {
    let mut out = Vec::new();
    while let Some(chunk) = field.next().await {
        let chunk = chunk.map_err(|_| unreadable())?;
        if out.len() + chunk.len() > limit {
            return Err(too_large());
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

async fn read_multipart(
    mut parts: Multipart,
    file_part: &'static str,
    file_limit: usize,
) -> Result<(FormData, Option<Vec<u8>>), WebError> {
    let mut fields: HashMap<String, Vec<String>> = HashMap::new();
    let mut file = None;
    let mut count = 0;
    while let Some(part) = parts.next().await {
        let mut part = part.map_err(|_| unreadable())?;
        count += 1;
        if count > PARTS {
            return Err(unreadable());
        }
        let name = part.name().unwrap_or_default().to_owned();
        if name == file_part {
            if file.is_some() {
                return Err(unreadable());
            }
            file = Some(read_part(&mut part, file_limit).await?);
        } else {
            let bytes = read_part(&mut part, FIELD_LIMIT).await?;
            let text = String::from_utf8(bytes).map_err(|_| unreadable())?;
            fields.entry(name).or_default().push(text);
        }
    }
    Ok((FormData(fields), file))
}

/// The form's fields and file, being read.
type Reading = Pin<Box<dyn Future<Output = Result<(FormData, Option<Vec<u8>>), WebError>>>>;

fn is_multipart(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("multipart/form-data"))
}

/// Reads an upload whose file is the part `file_part`, then checks the
/// session, the CSRF token and the admin.
fn upload(
    req: &HttpRequest,
    payload: &mut Payload,
    file_part: &'static str,
    file_limit: usize,
) -> Pin<Box<dyn Future<Output = Result<AdminUpload, WebError>>>> {
    let req = req.clone();
    let signed_in = SignedIn::from_request(&req, payload);
    let read: Reading = if is_multipart(&req) {
        Box::pin(read_multipart(Multipart::new(req.headers(), payload.take()), file_part, file_limit))
    } else {
        let form = FormData::from_request(&req, payload);
        Box::pin(async move { Ok((form.await?, None)) })
    };
    Box::pin(async move {
        let SignedIn(user) = signed_in.await?;
        let (form, file) = read.await?;
        let state = req.app_data::<web::Data<AppState>>().cloned().expect("AppState is registered");
        if !Csrf::verify(&req, &state, &form) {
            return Err(csrf_refused());
        }
        super::admin_only(&user)?;
        Ok(AdminUpload { user, form, file })
    })
}

impl FromRequest for AdminUpload {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, WebError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        upload(req, payload, "file", FILE_LIMIT)
    }
}

impl FromRequest for PlanUpload {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, WebError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let reading = upload(req, payload, "plan", crate::catalogue::plans::MAX_BYTES);
        Box::pin(async move { reading.await.map(PlanUpload) })
    }
}
