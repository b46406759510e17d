//! `/admin/approvals`: pending bookings oldest first, each with approve and
//! reject (with a reason). The same command as the admin-key API.

use crate::rooms::Booking;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use super::bookings::time_label;
use super::form::{form_key, status_of};
use super::language::PageI18n;
use super::pages::refusal;
use super::pages::{self, nav, Nav, Notice};
use super::{html_response, principal, AdminForm, Csrf, SignedInAdmin, StaffForm, WebError};
use crate::auth::staff::StaffUser;
use crate::db::DbError;
use crate::idempotency::IdempotencyKey;
use crate::rooms::booking as store;
use crate::rooms::store::{decide::Decision, DecideBooking};
use crate::state::AppState;

/// Most pending bookings one page lists.
const PAGE: i64 = 200;

async fn render(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    message: Option<Notice>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let pending = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        store::pending(&mut conn, PAGE).await?
    };
    let csrf = Csrf::for_render(req, state);
    let i18n = PageI18n::of(req);
    let lines = pending
        .into_iter()
        .map(|b| PendingLine {
            time: time_label(state, &i18n, &b, None),
            rooms: b.rooms.join("+"),
            approve_key: IdempotencyKey::generate().as_str().to_owned(),
            reject_key: IdempotencyKey::generate().as_str().to_owned(),
            booking: b,
        })
        .collect();
    let page = ApprovalsPage { i18n, nav: nav(user, &csrf.token), csrf: csrf.token.clone(), pending: lines, message };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

pub async fn list(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInAdmin(user): SignedInAdmin,
) -> Result<HttpResponse, WebError> {
    render(&state, &req, &user, None, StatusCode::OK).await
}

async fn decide(
    state: &AppState,
    req: &HttpRequest,
    StaffForm { user, form }: StaffForm,
    id: i64,
    approve: bool,
) -> Result<HttpResponse, WebError> {
    let attempt = async {
        let key = form_key(&form)?;
        let command = DecideBooking { id, decision: Decision::parse(approve, Some(form.get("reason")))? };
        state.pipeline.run(&principal(state, &user), Some(key), &command).await
    };
    match attempt.await {
        Ok(b) => {
            let i18n = PageI18n::of(req);
            let key = if approve { "approvals-approved" } else { "approvals-rejected" };
            let notice = Notice::ok(i18n.t2(key, "title", &b.title, "time", time_label(state, &i18n, &b, None)));
            render(state, req, &user, Some(notice), StatusCode::OK).await
        }
        Err(err) => {
            render(state, req, &user, Some(Notice::error(refusal(&PageI18n::of(req), &err))), status_of(&err)).await
        }
    }
}

pub async fn approve(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(form): AdminForm,
    id: web::Path<i64>,
) -> Result<HttpResponse, WebError> {
    decide(&state, &req, form, id.into_inner(), true).await
}

pub async fn reject(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(form): AdminForm,
    id: web::Path<i64>,
) -> Result<HttpResponse, WebError> {
    decide(&state, &req, form, id.into_inner(), false).await
}

pub struct PendingLine {
    pub booking: Booking,
    pub time: String,
    pub rooms: String,
    pub approve_key: String,
    pub reject_key: String,
}

#[derive(Template)]
#[template(path = "admin_approvals.html")]
pub struct ApprovalsPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub csrf: String,
    pub pending: Vec<PendingLine>,
    pub message: Option<Notice>,
}
