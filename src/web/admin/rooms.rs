//! `/admin/rooms`: the catalogue for admins — list, add, edit, retire. Form
//! fields are the JSON fields in snake_case (SPEC §8, §15); every change runs
//! the same command as the admin-key API.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

pub use super::room_form::{new_room, room_patch, RoomForm};
use crate::auth::staff::StaffUser;
use crate::catalogue::domain::Room;
use crate::catalogue::{store, CreateRoom, PatchRoom};
use crate::db::DbError;
use crate::idempotency::IdempotencyKey;
use crate::rooms::store::{Retire, RetireRoom};
use crate::state::AppState;
use crate::web::form::refused_page;
use crate::web::form::{checked, form_key, status_of};
use crate::web::language::PageI18n;
use crate::web::pages::refusal;
use crate::web::pages::{self, nav, Nav, Notice};
use crate::web::{html_response, principal, AdminForm, Csrf, SignedInAdmin, StaffForm, WebError};

async fn render_list(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    message: Option<Notice>,
    mut form: RoomForm,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let rooms = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        store::list(&mut conn, true).await?
    };
    if form.area.is_empty() {
        // A new room goes where the first room is, unless told otherwise.
        let first = rooms.iter().find(|r| r.active).map(|r| r.area.clone());
        form.area = first.unwrap_or_else(|| crate::catalogue::domain::DEFAULT_AREA.to_owned());
    }
    let csrf = Csrf::for_render(req, state);
    let page = RoomsAdminPage {
        i18n: PageI18n::of(req),
        nav: nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        rooms,
        message,
        form,
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

/// A place picked on the floor plan (SPEC §28): which room, and where.
#[derive(Debug, Default, serde::Deserialize)]
pub struct PlaceQuery {
    room: Option<String>,
    x: Option<String>,
    y: Option<String>,
}

pub async fn list(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInAdmin(user): SignedInAdmin,
) -> Result<HttpResponse, WebError> {
    let asked = web::Query::<PlaceQuery>::from_query(req.query_string()).map(|q| q.into_inner()).unwrap_or_default();
    if let Some(code) = asked.room.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        // The plan's form (numbers typed, or a click where scripts run)
        // opens the room's form with its new place filled in.
        let (x, y) = (asked.x.unwrap_or_default(), asked.y.unwrap_or_default());
        let at = |v: &str| url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>();
        let path = super::areas::path_segment(code);
        return Err(WebError::Redirect(format!("/admin/rooms/{path}?x={}&y={}", at(&x), at(&y))));
    }
    render_list(&state, &req, &user, None, RoomForm::blank(), StatusCode::OK).await
}

pub async fn create(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(StaffForm { user, form }): AdminForm,
) -> Result<HttpResponse, WebError> {
    let attempt = async {
        let new = new_room(&form)?;
        let key = form_key(&form)?;
        state.pipeline.run(&principal(&state, &user), Some(key), &CreateRoom(new)).await
    };
    match attempt.await {
        Ok(room) => {
            let notice = Notice::ok(PageI18n::of(&req).t2("rooms-created", "name", &room.name, "code", &room.code));
            render_list(&state, &req, &user, Some(notice), RoomForm::blank(), StatusCode::OK).await
        }
        Err(err) => {
            let notice = Notice::error(refusal(&PageI18n::of(&req), &err));
            render_list(&state, &req, &user, Some(notice), RoomForm::kept(&form), status_of(&err)).await
        }
    }
}

async fn load(state: &AppState, code: &str) -> Result<Room, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    store::find(&mut conn, code)
        .await?
        .ok_or_else(|| WebError::message(StatusCode::NOT_FOUND, "rooms-not-found-heading", "rooms-not-found"))
}

async fn render_edit(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    room: Room,
    form: Option<RoomForm>,
    message: Option<Notice>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    render_edit_with(state, req, user, room, form, message, None, status).await
}

#[allow(clippy::too_many_arguments)]
async fn render_edit_with(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    room: Room,
    form: Option<RoomForm>,
    message: Option<Notice>,
    new_display: Option<String>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let (display_tokens, buffer_conflicts) = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        let tokens = crate::display::live(&mut conn, &room.code).await?;
        let ids = store::buffer_conflicts(&mut conn, &room.code, state.clock.now()).await.map_err(DbError::from)?;
        (tokens, crate::rooms::booking::find_many(&mut conn, &ids).await.map_err(DbError::from)?)
    };
    let tz = room.zone();
    let buffer_conflicts = buffer_conflicts
        .iter()
        .map(|b| {
            let (s, e) = (b.starts_at.with_timezone(&tz), b.ends_at.with_timezone(&tz));
            (b.id, format!("{} {}–{} · {}", s.format("%Y-%m-%d"), s.format("%H:%M"), e.format("%H:%M"), b.title))
        })
        .collect();
    let csrf = Csrf::for_render(req, state);
    let page = RoomEditPage {
        i18n: PageI18n::of(req),
        nav: nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        form: form.unwrap_or_else(|| RoomForm::of(&room)),
        retire_key: IdempotencyKey::generate().as_str().to_owned(),
        room,
        message,
        display_tokens,
        new_display,
        buffer_conflicts,
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

pub async fn edit(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInAdmin(user): SignedInAdmin,
    code: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let room = load(&state, &code).await?;
    let asked = web::Query::<PlaceQuery>::from_query(req.query_string()).map(|q| q.into_inner()).unwrap_or_default();
    let mut form = RoomForm::of(&room);
    if let (Some(x), Some(y)) = (asked.x, asked.y) {
        form.place = [x, y];
    }
    render_edit(&state, &req, &user, room, Some(form), None, StatusCode::OK).await
}

pub async fn update(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(StaffForm { user, form }): AdminForm,
    code: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let attempt = async {
        let patch = room_patch(&form)?;
        let key = form_key(&form)?;
        let command = PatchRoom { code: code.to_string(), patch };
        state.pipeline.run(&principal(&state, &user), Some(key), &command).await
    };
    match attempt.await {
        Ok(room) => {
            let notice = Notice::ok(PageI18n::of(&req).t("rooms-updated"));
            render_edit(&state, &req, &user, room, None, Some(notice), StatusCode::OK).await
        }
        Err(err) => {
            let room = load(&state, &code).await?;
            let mut kept = RoomForm::kept(&form);
            kept.code = room.code.clone();
            kept.code_locked = true;
            let notice = Notice::error(refusal(&PageI18n::of(&req), &err));
            render_edit(&state, &req, &user, room, Some(kept), Some(notice), status_of(&err)).await
        }
    }
}

pub async fn retire(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(StaffForm { user, form }): AdminForm,
    code: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let attempt = async {
        let retire = Retire { cancel_future_bookings: checked(&form, "cancel_future_bookings") };
        let key = form_key(&form)?;
        let command = RetireRoom { code: code.to_string(), retire };
        state.pipeline.run(&principal(&state, &user), Some(key), &command).await
    };
    match attempt.await {
        Ok(room) => {
            let notice = Notice::ok(PageI18n::of(&req).t2("rooms-retired", "name", &room.name, "code", &room.code));
            render_list(&state, &req, &user, Some(notice), RoomForm::blank(), StatusCode::OK).await
        }
        Err(err) => {
            let room = load(&state, &code).await?;
            let notice = Notice::error(refusal(&PageI18n::of(&req), &err));
            render_edit(&state, &req, &user, room, None, Some(notice), status_of(&err)).await
        }
    }
}

/// Creates a door-display token for the room and shows its address once.
pub async fn issue_display_token(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(StaffForm { user, .. }): AdminForm,
    code: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let command = crate::display::IssueToken { room: code.to_string() };
    let issued = state.pipeline.run(&principal(&state, &user), None, &command).await;
    let room = load(&state, &code).await?;
    match issued {
        Ok(token) => {
            let url = format!("/display/{}?token={token}", room.code);
            let notice = Notice::ok(PageI18n::of(&req).t("rooms-display-issued"));
            render_edit_with(&state, &req, &user, room, None, Some(notice), Some(url), StatusCode::OK).await
        }
        Err(e) if e.code.status().is_server_error() => Err(refused_page(&e)),
        Err(e) => {
            render_edit(
                &state,
                &req,
                &user,
                room,
                None,
                Some(Notice::error(refusal(&PageI18n::of(&req), &e))),
                status_of(&e),
            )
            .await
        }
    }
}

/// Revokes every display token of the room; the displays stop at once.
pub async fn revoke_display_tokens(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(StaffForm { user, .. }): AdminForm,
    code: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let command = crate::display::RevokeTokens { room: code.to_string() };
    let revoked = state.pipeline.run(&principal(&state, &user), None, &command).await.map_err(|e| refused_page(&e))?;
    let room = load(&state, &code).await?;
    let notice = Notice::ok(PageI18n::of(&req).t1("rooms-display-revoked", "count", revoked));
    render_edit(&state, &req, &user, room, None, Some(notice), StatusCode::OK).await
}

#[derive(Template)]
#[template(path = "admin_rooms.html")]
pub struct RoomsAdminPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub csrf: String,
    pub rooms: Vec<crate::catalogue::domain::Room>,
    pub message: Option<Notice>,
    pub form: RoomForm,
}

#[derive(Template)]
#[template(path = "admin_room.html")]
pub struct RoomEditPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub csrf: String,
    pub room: crate::catalogue::domain::Room,
    pub form: RoomForm,
    pub retire_key: String,
    pub message: Option<Notice>,
    /// Live door-display tokens of the room.
    pub display_tokens: i64,
    /// The display address of a token just created (shown once).
    pub new_display: Option<String>,
    /// Future bookings the room's buffers as they are now would not allow
    /// (SPEC §24): id and "date start–end · title".
    pub buffer_conflicts: Vec<(i64, String)>,
}
