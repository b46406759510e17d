//! Cancelling a booking or its series (SPEC §5, §9): the confirmation page
//! and the form behind it.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use super::detail::render_detail;
use super::found::{area_of, load, time_label};
use crate::error::ApiError;
use crate::idempotency::IdempotencyKey;
use crate::rooms::store::CancelBooking;
use crate::series::CancelSeries;
use crate::state::AppState;
use crate::web::day::enc;
use crate::web::form::{form_key, status_of};
use crate::web::language::PageI18n;
use crate::web::pages::refusal;
use crate::web::pages::{self, nav, Nav, Notice};
use crate::web::{html_response, Csrf, SignedIn, StaffForm, WebError};

pub async fn confirm_cancel(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    id: web::Path<i64>,
) -> Result<HttpResponse, WebError> {
    let b = load(&state, id.into_inner()).await?;
    let csrf = Csrf::for_render(&req, &state);
    let i18n = PageI18n::of(&req);
    let page = CancelPage {
        time: time_label(&state, &i18n, &b, Some(user.zone(state.policy().timezone))),
        i18n,
        nav: nav(&user, &csrf.token),
        csrf: csrf.token.clone(),
        id: b.id,
        title: b.title.clone(),
        rooms: b.rooms.join("+"),
        idempotency_key: IdempotencyKey::generate().as_str().to_owned(),
        in_series: b.series_id.is_some(),
    };
    Ok(csrf.attach(html_response(StatusCode::OK, pages::render(&page))))
}

/// Cancels one booking, or (`scope` = `following` / `series`) its series
/// from this occurrence on / from now on.
pub async fn cancel(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
    id: web::Path<i64>,
) -> Result<HttpResponse, WebError> {
    let id = id.into_inner();
    let attempt = async {
        let key = form_key(&form)?;
        let principal = super::acting::for_booking_id(&state, &user, id).await?;
        let scope = match form.get("scope") {
            "" | "one" => None,
            "following" => Some(true),
            "series" => Some(false),
            _ => return Err(ApiError::malformed("scope", "must be one, following or series")),
        };
        let b = match scope {
            None => None,
            Some(following) => load(&state, id).await.ok().filter(|b| b.series_id.is_some()).map(|b| (b, following)),
        };
        match b {
            Some((b, following)) => {
                let series_id = b.series_id.unwrap_or_default();
                let from = following.then_some(b.starts_at);
                state.pipeline.run(&principal, Some(key), &CancelSeries { id: series_id, from }).await?;
                Ok(b)
            }
            None => {
                let command = CancelBooking { id, expected_version: None };
                state.pipeline.run(&principal, Some(key), &command).await
            }
        }
    };
    match attempt.await {
        Ok(b) => {
            let date = b.starts_at.with_timezone(&b.zone(state.policy().timezone)).date_naive();
            let area = enc(&area_of(&state, &b).await);
            Err(WebError::Redirect(format!("/rooms?date={date}&area={area}&cancelled={id}")))
        }
        Err(err) => {
            let b = load(&state, id).await?;
            render_detail(
                &state,
                &req,
                &user,
                b,
                Some(Notice::error(refusal(&PageI18n::of(&req), &err))),
                None,
                status_of(&err),
            )
            .await
        }
    }
}

#[derive(Template)]
#[template(path = "cancel.html")]
pub struct CancelPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub csrf: String,
    pub id: i64,
    pub title: String,
    pub time: String,
    pub rooms: String,
    pub idempotency_key: String,
    /// An occurrence of a series: offer this one / following / whole series.
    pub in_series: bool,
}
