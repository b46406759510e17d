//! Admin pages: the consistency report, staff accounts and API keys, the
//! room catalogue (`rooms`, its form `room_form`), areas (`areas`, its form
//! `area_form`), holiday calendars (`holidays`, their `.ics` `upload`) and
//! the utilisation report (`reports`).

pub mod access_log;
pub mod area_form;
pub mod areas;
pub mod holidays;
pub mod plan_upload;
pub mod reports;
pub mod room_form;
pub mod rooms;
pub mod upload;

use crate::consistency::CheckResult;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use super::account::MIN_PASSWORD_CHARS;
use super::language::PageI18n;
use super::pages::{self, nav, Nav, Notice};
use super::{html_response, AdminForm, Csrf, SignedInAdmin, StaffForm, WebError};
use crate::auth::api_key::{Role, Tenant};
use crate::auth::commands::{CreateKey, ResetPassword, RevokeKey, SetDisabled};
use crate::auth::keys;
use crate::auth::staff::{self, StaffUser};
use crate::command::Command;
use crate::db::DbError;
use crate::error::ErrorCode;
use crate::people::CreateStaff;
use crate::state::AppState;

/// Runs an account command as the signed-in admin; a refusal is its page.
async fn run<C: Command>(state: &AppState, user: &StaffUser, command: &C) -> Result<C::Output, WebError> {
    state.pipeline.run(&super::principal(state, user), None, command).await.map_err(|e| super::form::refused_page(&e))
}

pub fn admin_only(user: &StaffUser) -> Result<(), WebError> {
    if user.is_admin {
        Ok(())
    } else {
        Err(WebError::message(StatusCode::FORBIDDEN, "error-admin-only-heading", "error-admin-only"))
    }
}

pub async fn consistency(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInAdmin(user): SignedInAdmin,
) -> Result<HttpResponse, WebError> {
    // Two connections: the checks share one snapshot and two cores.
    let mut first = state.pool.get().await.map_err(DbError::from)?;
    let mut second = state.pool.get().await.map_err(DbError::from)?;
    let report = crate::consistency::run_on_two(&mut first, &mut second, state.check_context()).await?;
    let csrf = Csrf::for_render(&req, &state);
    let page = ConsistencyPage {
        i18n: PageI18n::of(&req),
        nav: nav(&user, &csrf.token),
        ok: report.ok,
        checks: report.checks,
    };
    Ok(csrf.attach(html_response(StatusCode::OK, pages::render(&page))))
}

async fn render_staff(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    message: Option<Notice>,
    new_key: Option<String>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let list = staff::list(&mut conn).await?;
    let ids: Vec<i64> = list.iter().map(|s| s.user.id).collect();
    let delegates = crate::people::delegation::all_delegates(&mut conn, &ids).await?;
    let keys = keys::list(&mut conn, &state.keys).await?;
    drop(conn);
    // Every render shows the directory: each is an access record (SPEC §26).
    access_log::note(state, req, user, crate::privacy::Kind::StaffList, None, list.len()).await?;
    let csrf = Csrf::for_render(req, state);
    let page = StaffPage {
        i18n: PageI18n::of(req),
        nav: nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        me: user.id,
        staff: list,
        delegates,
        keys,
        message,
        new_key,
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

pub async fn staff_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInAdmin(user): SignedInAdmin,
) -> Result<HttpResponse, WebError> {
    render_staff(&state, &req, &user, None, None, StatusCode::OK).await
}

pub async fn add_staff(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(StaffForm { user, form }): AdminForm,
) -> Result<HttpResponse, WebError> {
    let (username, display, password) =
        (form.get("username").trim(), form.get("display_name").trim(), form.get("password"));
    let email = crate::people::directory::parse_email(form.get("email"));
    let i18n = PageI18n::of(&req);
    let refuse = |key: &str| Some(Notice::error(i18n.t(key)));
    let problem = if !staff::valid_username(username) {
        refuse("staff-refused-username")
    } else if display.is_empty() || display.chars().count() > 100 {
        refuse("staff-refused-display-name")
    } else if display.chars().any(crate::text::is_forbidden) {
        refuse("staff-refused-display-name-control")
    } else if password.chars().count() < MIN_PASSWORD_CHARS {
        refuse("staff-refused-password")
    } else if email.is_err() {
        refuse("staff-refused-email")
    } else {
        None
    };
    if let Some(message) = problem {
        return render_staff(&state, &req, &user, Some(message), None, StatusCode::BAD_REQUEST).await;
    }
    let command = CreateStaff {
        username: username.to_owned(),
        display_name: display.to_owned(),
        email: email.unwrap_or(None).map(str::to_owned),
        password_hash: hashed(&state, password).await?,
        is_admin: form.get("is_admin") == "1",
        language: None,
    };
    let created = state.pipeline.run(&super::principal(&state, &user), None, &command).await;
    let (message, status) = match created {
        Ok(s) => (Notice::ok(i18n.t1("staff-created", "username", &s.username)), StatusCode::OK),
        Err(e) if e.code == ErrorCode::UsernameTaken => {
            (Notice::error(i18n.t("staff-refused-taken")), StatusCode::CONFLICT)
        }
        Err(e) => return Err(super::form::refused_page(&e)),
    };
    render_staff(&state, &req, &user, Some(message), None, status).await
}

/// A new password's hash, or a 503 page at once when the hashing queue is full.
async fn hashed(state: &AppState, password: &str) -> Result<String, WebError> {
    state
        .hashing
        .hash(password)
        .await
        .map_err(|_| WebError::message(StatusCode::SERVICE_UNAVAILABLE, "error-retry-heading", "error-hashing-busy"))
}

/// The `{id}` of a staff or key route (404 page for anything else).
fn path_id(raw: &str) -> Result<i64, WebError> {
    raw.parse().map_err(|_| no_such_item())
}

/// The 404 page of a staff or key route whose `{id}` names nothing.
fn no_such_item() -> WebError {
    WebError::message(StatusCode::NOT_FOUND, "error-not-found-heading", "error-not-found")
}

async fn set_disabled(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    id: &str,
    disabled: bool,
) -> Result<HttpResponse, WebError> {
    let id = path_id(id)?;
    let i18n = PageI18n::of(req);
    if disabled && id == user.id {
        let message = Notice::error(i18n.t("staff-refused-disable-self"));
        return render_staff(state, req, user, Some(message), None, StatusCode::BAD_REQUEST).await;
    }
    let changed = run(state, user, &SetDisabled { id, disabled }).await?;
    let Some(person) = changed else { return Err(no_such_item()) };
    let message = if disabled {
        i18n.t1("staff-disabled", "username", &person.username)
    } else {
        i18n.t1("staff-enabled", "username", &person.username)
    };
    render_staff(state, req, user, Some(Notice::ok(message)), None, StatusCode::OK).await
}

/// `POST /admin/staff/{id}/disable`
pub async fn disable_staff(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: web::Path<String>,
    AdminForm(StaffForm { user, .. }): AdminForm,
) -> Result<HttpResponse, WebError> {
    set_disabled(&state, &req, &user, &id, true).await
}

/// `POST /admin/staff/{id}/enable`
pub async fn enable_staff(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: web::Path<String>,
    AdminForm(StaffForm { user, .. }): AdminForm,
) -> Result<HttpResponse, WebError> {
    set_disabled(&state, &req, &user, &id, false).await
}

/// `POST /admin/staff/{id}/delegates` (`delegates`: usernames, separated
/// by commas or spaces): the person's delegates become exactly these.
pub async fn set_delegates(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: web::Path<String>,
    AdminForm(StaffForm { user, form }): AdminForm,
) -> Result<HttpResponse, WebError> {
    let id = path_id(&id)?;
    let i18n = PageI18n::of(&req);
    let username = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        crate::people::directory::username_of(&mut conn, id).await?.ok_or_else(no_such_item)?
    };
    let names: Vec<String> = form
        .get("delegates")
        .split([',', ' ', '\n'])
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect();
    let command = crate::people::UpdateStaff { username, delegates: Some(names), ..Default::default() };
    match state.pipeline.run(&super::principal(&state, &user), None, &command).await {
        Ok(record) => {
            let message = Notice::ok(i18n.t1("staff-delegates-set", "username", record.username.as_str()));
            render_staff(&state, &req, &user, Some(message), None, StatusCode::OK).await
        }
        Err(err) => {
            let message = Notice::error(crate::web::pages::refusal(&i18n, &err));
            render_staff(&state, &req, &user, Some(message), None, crate::web::form::status_of(&err)).await
        }
    }
}

/// `POST /admin/staff/{username}/erase` (`confirm`: the username typed
/// again), SPEC §26: the same command as the JSON route.
pub async fn erase_staff(
    state: web::Data<AppState>,
    req: HttpRequest,
    username: web::Path<String>,
    AdminForm(StaffForm { user, form }): AdminForm,
) -> Result<HttpResponse, WebError> {
    let i18n = PageI18n::of(&req);
    let username = username.into_inner();
    if !form.get("confirm").trim().eq_ignore_ascii_case(&username) {
        let message = Notice::error(i18n.t1("staff-refused-erase-confirm", "username", username.as_str()));
        return render_staff(&state, &req, &user, Some(message), None, StatusCode::BAD_REQUEST).await;
    }
    let command = crate::privacy::EraseStaff {
        username: username.clone(),
        actor: access_log::actor(&user),
        address: state.transport.client_ip(&req),
    };
    let (message, status) = match state.pipeline.run(&super::principal(&state, &user), None, &command).await {
        Ok(erased) => (
            Notice::ok(i18n.t2("staff-erased", "username", username.as_str(), "erased", erased.username.as_str())),
            StatusCode::OK,
        ),
        Err(err) => (Notice::error(crate::web::pages::refusal(&i18n, &err)), crate::web::form::status_of(&err)),
    };
    render_staff(&state, &req, &user, Some(message), None, status).await
}

/// `POST /admin/staff/{id}/password`: an admin sets a new password; every
/// session of that person ends (the admin's own too, if it is theirs).
pub async fn reset_password(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: web::Path<String>,
    AdminForm(StaffForm { user, form }): AdminForm,
) -> Result<HttpResponse, WebError> {
    let id = path_id(&id)?;
    let i18n = PageI18n::of(&req);
    let password = form.get("password");
    if password.chars().count() < MIN_PASSWORD_CHARS {
        let message = Notice::error(i18n.t("staff-refused-password"));
        return render_staff(&state, &req, &user, Some(message), None, StatusCode::BAD_REQUEST).await;
    }
    let command = ResetPassword {
        id,
        password_hash: hashed(&state, password).await?,
        keep_session: (id == user.id).then(|| super::session_token(&req, &state)).flatten(),
    };
    let found = run(&state, &user, &command).await?;
    if !found {
        return Err(no_such_item());
    }
    let message = Notice::ok(i18n.t("staff-password-reset"));
    render_staff(&state, &req, &user, Some(message), None, StatusCode::OK).await
}

pub async fn add_key(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(StaffForm { user, form }): AdminForm,
) -> Result<HttpResponse, WebError> {
    let i18n = PageI18n::of(&req);
    let label = form.get("label");
    let (Ok(tenant), Ok(role)) = (Tenant::parse(form.get("tenant").trim()), form.get("role").parse::<Role>()) else {
        let message = Notice::error(i18n.t("keys-refused-tenant-role"));
        return render_staff(&state, &req, &user, Some(message), None, StatusCode::BAD_REQUEST).await;
    };
    if label.chars().count() > keys::LABEL_CHARS {
        let message = Notice::error(i18n.t("keys-refused-label-long"));
        return render_staff(&state, &req, &user, Some(message), None, StatusCode::BAD_REQUEST).await;
    }
    if label.chars().any(crate::text::is_forbidden) {
        let message = Notice::error(i18n.t("keys-refused-label-control"));
        return render_staff(&state, &req, &user, Some(message), None, StatusCode::BAD_REQUEST).await;
    }
    let command = CreateKey { tenant: tenant.clone(), role, label: label.to_owned() };
    let key = match state.pipeline.run(&super::principal(&state, &user), None, &command).await {
        Ok(key) => key,
        Err(e) if e.code == ErrorCode::ReservedTenant => {
            let message = Notice::error(i18n.t1("keys-refused-reserved", "tenant", tenant.as_str()));
            return render_staff(&state, &req, &user, Some(message), None, StatusCode::BAD_REQUEST).await;
        }
        Err(e) => return Err(super::form::refused_page(&e)),
    };
    let message = Notice::ok(i18n.t2("keys-created", "tenant", tenant.as_str(), "role", key.role.to_string()));
    render_staff(&state, &req, &user, Some(message), Some(key.secret), StatusCode::OK).await
}

/// `POST /admin/keys/{id}/revoke`
pub async fn revoke_key(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: web::Path<String>,
    AdminForm(StaffForm { user, .. }): AdminForm,
) -> Result<HttpResponse, WebError> {
    let id = path_id(&id)?;
    let revoked = run(&state, &user, &RevokeKey { id }).await?;
    let Some(key) = revoked else { return Err(no_such_item()) };
    let message = Notice::ok(PageI18n::of(&req).t2("keys-revoked", "tenant", &key.tenant, "id", id));
    render_staff(&state, &req, &user, Some(message), None, StatusCode::OK).await
}

#[derive(Template)]
#[template(path = "admin_consistency.html")]
pub struct ConsistencyPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub ok: bool,
    pub checks: Vec<CheckResult>,
}

#[derive(Template)]
#[template(path = "admin_staff.html")]
pub struct StaffPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub csrf: String,
    pub me: i64,
    pub staff: Vec<crate::auth::staff::StaffEntry>,
    /// Each person's delegates' usernames (SPEC §25).
    pub delegates: Vec<(i64, Vec<String>)>,
    pub keys: Vec<crate::auth::keys::KeyEntry>,
    pub message: Option<Notice>,
    pub new_key: Option<String>,
}

impl StaffPage {
    /// Whether the page offers to erase `s`: not oneself, not the
    /// break-glass admin, not someone erased already.
    pub fn erasable(&self, s: &crate::auth::staff::StaffEntry) -> bool {
        s.user.id != self.me && !s.break_glass && !s.erased
    }

    /// A person's delegates as the form shows them: `kim, lee`.
    pub fn delegates_of(&self, id: &i64) -> String {
        self.delegates.iter().find(|(p, _)| p == id).map(|(_, d)| d.join(", ")).unwrap_or_default()
    }
}
