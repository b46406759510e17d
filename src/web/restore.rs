//! `/series/{id}/restore` (SPEC §25): the page a strike mail links to, one
//! button that rebooks the occurrences the strike cancelled (where still
//! free), and the answer listing what came back and what did not.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use super::bookings::time_label;
use super::form::{form_key, status_of};
use super::language::PageI18n;
use super::pages::{self, nav, refusal, Nav, Notice};
use super::{html_response, Csrf, SignedIn, StaffForm, WebError};
use crate::checkin::restore::RestoreSeries;
use crate::db::DbError;
use crate::idempotency::IdempotencyKey;
use crate::rooms::booking::Booking;
use crate::state::AppState;

/// An occurrence as the page lists it.
#[derive(Clone)]
pub struct Line {
    pub id: i64,
    pub time: String,
    pub rooms: String,
}

#[derive(Template)]
#[template(path = "series_restore.html")]
pub struct RestorePage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub csrf: String,
    pub id: i64,
    pub title: String,
    pub idempotency_key: String,
    pub message: Option<Notice>,
    /// The strike cancelled these (the button offers to restore them)…
    pub cancelled: Vec<Line>,
    /// …or, after the restore, these came back and these did not.
    pub restored: Vec<Line>,
    pub not_restored: Vec<Line>,
    pub done: bool,
}

fn lines(state: &AppState, i18n: &PageI18n, user: &crate::auth::staff::StaffUser, list: &[Booking]) -> Vec<Line> {
    let zone = Some(user.zone(state.policy().timezone));
    list.iter().map(|b| Line { id: b.id, time: time_label(state, i18n, b, zone), rooms: b.rooms.join("+") }).collect()
}

async fn series_title(state: &AppState, id: i64) -> Result<String, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let series = crate::series::store::find(&mut conn, id).await?;
    series
        .map(|s| s.title)
        .ok_or_else(|| WebError::message(StatusCode::NOT_FOUND, "error-not-found-heading", "error-not-found"))
}

/// `GET /series/{id}/restore`.
pub async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    id: web::Path<i64>,
) -> Result<HttpResponse, WebError> {
    let id = id.into_inner();
    let title = series_title(&state, id).await?;
    let struck = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        crate::checkin::restore::struck_occurrences(&mut conn, id, state.clock.now()).await?
    };
    let i18n = PageI18n::of(&req);
    let message = struck.is_empty().then(|| Notice::error(i18n.t("restore-nothing")));
    render(&state, &req, &user, id, title, message, lines(&state, &i18n, &user, &struck), None, StatusCode::OK)
}

#[allow(clippy::too_many_arguments)]
fn render(
    state: &AppState,
    req: &HttpRequest,
    user: &crate::auth::staff::StaffUser,
    id: i64,
    title: String,
    message: Option<Notice>,
    cancelled: Vec<Line>,
    done: Option<(Vec<Line>, Vec<Line>)>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let csrf = Csrf::for_render(req, state);
    let (restored, not_restored) = done.clone().unwrap_or_default();
    let page = RestorePage {
        i18n: PageI18n::of(req),
        nav: nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        id,
        title,
        idempotency_key: IdempotencyKey::generate().as_str().to_owned(),
        message,
        cancelled,
        restored,
        not_restored,
        done: done.is_some(),
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

/// `POST /series/{id}/restore` (`csrf_token`): one transaction.
pub async fn restore(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
    id: web::Path<i64>,
) -> Result<HttpResponse, WebError> {
    let id = id.into_inner();
    let title = series_title(&state, id).await?;
    let i18n = PageI18n::of(&req);
    let attempt = async {
        let key = form_key(&form)?;
        let principal = super::bookings::principal_for_series(&state, &user, id).await?;
        state.pipeline.run(&principal, Some(key), &RestoreSeries { id }).await
    };
    match attempt.await {
        Ok(done) => {
            let message = Notice::ok(i18n.t2(
                "restore-done",
                "restored",
                done.restored.len() as i64,
                "missed",
                done.not_restored.len() as i64,
            ));
            let restored = lines(&state, &i18n, &user, &done.restored);
            let missed = lines(&state, &i18n, &user, &done.not_restored);
            render(&state, &req, &user, id, title, Some(message), Vec::new(), Some((restored, missed)), StatusCode::OK)
        }
        Err(err) => {
            let message = Notice::error(refusal(&i18n, &err));
            render(&state, &req, &user, id, title, Some(message), Vec::new(), None, status_of(&err))
        }
    }
}
