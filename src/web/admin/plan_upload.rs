//! `POST /admin/areas/{code}/plan` (multipart: `plan`, `csrf_token`; SPEC
//! §28, §29): the same check and command as `PUT /api/areas/{code}/plan`;
//! a stored plan answers 303 to the plan page, a refused one the area's
//! page again with the reason.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use super::areas::{path_segment, render_edit};
use super::upload::{AdminUpload, PlanUpload};
use crate::catalogue::plans::{PlanImage, ReplacePlan};
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;
use crate::web::form::status_of;
use crate::web::language::PageI18n;
use crate::web::pages::{refusal, Notice};
use crate::web::{principal, WebError};

pub async fn upload_plan(
    state: web::Data<AppState>,
    req: HttpRequest,
    PlanUpload(AdminUpload { user, file, .. }): PlanUpload,
    code: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let attempt = async {
        let bytes = file.filter(|f| !f.is_empty()).ok_or_else(|| ApiError::malformed("plan", "choose an image"))?;
        let image = PlanImage::decode(sniffed(&bytes), bytes)?;
        state.pipeline.run(&principal(&state, &user), None, &ReplacePlan { area: code.to_string(), image }).await
    };
    match attempt.await {
        Ok(_) => Err(WebError::Redirect(format!("/areas/{}/plan", path_segment(&code)))),
        Err(err) if err.code == ErrorCode::NotFound => {
            Err(WebError::message(StatusCode::NOT_FOUND, "areas-not-found-heading", "areas-not-found"))
        }
        Err(err) => {
            let notice = Notice::error(refusal(&PageI18n::of(&req), &err));
            render_edit(&state, &req, &user, &code, None, Some(notice), status_of(&err)).await
        }
    }
}

/// The type a browser's upload claims is not sent as a form field, so the
/// file's first bytes name the decoder; the decoder then checks it whole.
fn sniffed(bytes: &[u8]) -> &'static str {
    match bytes {
        [0x89, b'P', b'N', b'G', ..] => "image/png",
        [0xFF, 0xD8, 0xFF, ..] => "image/jpeg",
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => "image/webp",
        _ => "",
    }
}
