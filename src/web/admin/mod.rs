//! Admin pages: the consistency report, staff accounts and API keys, the
//! room catalogue (`rooms`) and the utilisation report (`reports`).

pub mod reports;
pub mod rooms;

use crate::consistency::CheckResult;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use super::account::MIN_PASSWORD_CHARS;
use super::pages::{self, nav, Nav, Notice};
use super::{html_response, AdminForm, Csrf, SignedInAdmin, StaffForm, WebError};
use crate::auth::api_key::{Role, Tenant};
use crate::auth::commands::{CreateKey, CreateStaff, ResetPassword, RevokeKey, SetDisabled};
use crate::auth::keys;
use crate::auth::staff::{self, StaffUser};
use crate::command::Command;
use crate::db::DbError;
use crate::error::ErrorCode;
use crate::state::AppState;

/// Runs an account command as the signed-in admin; a refusal is its page.
async fn run<C: Command>(state: &AppState, user: &StaffUser, command: &C) -> Result<C::Output, WebError> {
    state
        .pipeline
        .run(&super::principal(state, user), None, command)
        .await
        .map_err(|e| super::bookings::refused_page(&e))
}

pub fn admin_only(user: &StaffUser) -> Result<(), WebError> {
    if user.is_admin {
        Ok(())
    } else {
        Err(WebError::Page(
            StatusCode::FORBIDDEN,
            pages::message_page("관리자만 볼 수 있습니다", "이 페이지는 관리자 전용입니다."),
        ))
    }
}

pub async fn consistency(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInAdmin(user): SignedInAdmin,
) -> Result<HttpResponse, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let report = crate::consistency::run(&mut conn, state.check_context()).await?;
    let csrf = Csrf::for_render(&req, &state);
    let page = ConsistencyPage { nav: nav(&user, &csrf.token), ok: report.ok, checks: report.checks };
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
    let keys = keys::list(&mut conn, &state.keys).await?;
    drop(conn);
    let csrf = Csrf::for_render(req, state);
    let page = StaffPage {
        nav: nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        me: user.id,
        staff: list,
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

/// An optional email address: empty is none; else `local@domain`, 3–254 characters.
fn parse_email(raw: &str) -> Result<Option<&str>, ()> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    let ok = (3..=254).contains(&raw.len())
        && raw.split_once('@').is_some_and(|(l, d)| !l.is_empty() && !d.is_empty() && !d.contains('@'))
        && !raw.chars().any(char::is_whitespace);
    if ok {
        Ok(Some(raw))
    } else {
        Err(())
    }
}

pub async fn add_staff(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(StaffForm { user, form }): AdminForm,
) -> Result<HttpResponse, WebError> {
    let (username, display, password) =
        (form.get("username").trim(), form.get("display_name").trim(), form.get("password"));
    let email = parse_email(form.get("email"));
    let refuse = |text: &str| Some(Notice::error(text));
    let problem = if !staff::valid_username(username) {
        refuse("아이디는 영문·숫자·._- 1~64자입니다.")
    } else if display.is_empty() || display.chars().count() > 100 {
        refuse("이름을 1~100자로 적어 주세요.")
    } else if display.chars().any(crate::text::is_forbidden) {
        refuse("이름(display_name)에는 제어 문자나 줄바꿈을 쓸 수 없습니다.")
    } else if password.chars().count() < MIN_PASSWORD_CHARS {
        refuse("비밀번호는 10자 이상이어야 합니다.")
    } else if email.is_err() {
        refuse("이메일 주소 형식이 맞지 않습니다.")
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
    };
    let created = run(&state, &user, &command).await?;
    let (message, status) = match created {
        Some(s) => (Notice::ok(format!("{} 계정을 만들었습니다.", s.username)), StatusCode::OK),
        None => (Notice::error("이미 있는 아이디입니다."), StatusCode::CONFLICT),
    };
    render_staff(&state, &req, &user, Some(message), None, status).await
}

/// A new password's hash, or a 503 page at once when the hashing queue is full.
async fn hashed(state: &AppState, password: &str) -> Result<String, WebError> {
    state.hashing.hash(password).await.map_err(|_| {
        WebError::Page(
            StatusCode::SERVICE_UNAVAILABLE,
            pages::message_page("잠시 후 다시 시도해 주세요", "지금은 비밀번호 처리 요청이 많습니다."),
        )
    })
}

/// The `{id}` of a staff or key route (404 page for anything else).
fn path_id(raw: &str) -> Result<i64, WebError> {
    raw.parse().map_err(|_| no_such_item())
}

/// The 404 page of a staff or key route whose `{id}` names nothing.
fn no_such_item() -> WebError {
    WebError::Page(StatusCode::NOT_FOUND, pages::message_page("찾을 수 없습니다", "없는 항목입니다."))
}

async fn set_disabled(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    id: &str,
    disabled: bool,
) -> Result<HttpResponse, WebError> {
    let id = path_id(id)?;
    if disabled && id == user.id {
        let message = Notice::error("자기 계정은 끌 수 없습니다.");
        return render_staff(state, req, user, Some(message), None, StatusCode::BAD_REQUEST).await;
    }
    let changed = run(state, user, &SetDisabled { id, disabled }).await?;
    let Some(person) = changed else { return Err(no_such_item()) };
    let message = if disabled {
        format!("{} 계정을 껐습니다. 로그인, 캘린더 구독과 그가 만든 문 앞 화면이 모두 끝났습니다.", person.username)
    } else {
        format!("{} 계정을 다시 켰습니다.", person.username)
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

/// `POST /admin/staff/{id}/password`: an admin sets a new password; every
/// session of that person ends (the admin's own too, if it is theirs).
pub async fn reset_password(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: web::Path<String>,
    AdminForm(StaffForm { user, form }): AdminForm,
) -> Result<HttpResponse, WebError> {
    let id = path_id(&id)?;
    let password = form.get("password");
    if password.chars().count() < MIN_PASSWORD_CHARS {
        let message = Notice::error("비밀번호는 10자 이상이어야 합니다.");
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
    let message = Notice::ok("비밀번호를 새로 정했습니다. 그 사람의 다른 로그인은 모두 끝났습니다.");
    render_staff(&state, &req, &user, Some(message), None, StatusCode::OK).await
}

pub async fn add_key(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(StaffForm { user, form }): AdminForm,
) -> Result<HttpResponse, WebError> {
    let label = form.get("label");
    let (Ok(tenant), Ok(role)) = (Tenant::parse(form.get("tenant").trim()), form.get("role").parse::<Role>()) else {
        let message = Notice::error("테넌트(영문·숫자·._- 1~64자)와 역할을 확인해 주세요.");
        return render_staff(&state, &req, &user, Some(message), None, StatusCode::BAD_REQUEST).await;
    };
    if label.chars().count() > keys::LABEL_CHARS {
        let message = Notice::error("메모는 100자까지입니다.");
        return render_staff(&state, &req, &user, Some(message), None, StatusCode::BAD_REQUEST).await;
    }
    if label.chars().any(crate::text::is_forbidden) {
        let message = Notice::error("메모(label)에는 제어 문자나 줄바꿈을 쓸 수 없습니다.");
        return render_staff(&state, &req, &user, Some(message), None, StatusCode::BAD_REQUEST).await;
    }
    let command = CreateKey { tenant: tenant.clone(), role, label: label.to_owned() };
    let key = match state.pipeline.run(&super::principal(&state, &user), None, &command).await {
        Ok(key) => key,
        Err(e) if e.code == ErrorCode::ReservedTenant => {
            let message = Notice::error(format!("{tenant} 테넌트는 yeyak이 쓰는 이름이라 키에 줄 수 없습니다."));
            return render_staff(&state, &req, &user, Some(message), None, StatusCode::BAD_REQUEST).await;
        }
        Err(e) => return Err(super::bookings::refused_page(&e)),
    };
    let message = Notice::ok(format!("{tenant} 테넌트의 {} 키를 만들었습니다.", key.role));
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
    let message = Notice::ok(format!("{} 테넌트의 키 #{id}를 폐기했습니다.", key.tenant));
    render_staff(&state, &req, &user, Some(message), None, StatusCode::OK).await
}

#[derive(Template)]
#[template(path = "admin_consistency.html")]
pub struct ConsistencyPage {
    pub nav: Option<Nav>,
    pub ok: bool,
    pub checks: Vec<CheckResult>,
}

#[derive(Template)]
#[template(path = "admin_staff.html")]
pub struct StaffPage {
    pub nav: Option<Nav>,
    pub csrf: String,
    pub me: i64,
    pub staff: Vec<crate::auth::staff::StaffEntry>,
    pub keys: Vec<crate::auth::keys::KeyEntry>,
    pub message: Option<Notice>,
    pub new_key: Option<String>,
}
