//! Admin pages: the consistency report, staff accounts and API keys, the
//! room catalogue (`rooms`) and the utilisation report (`reports`).

pub mod reports;
pub mod rooms;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use rand::RngCore;

use super::pages::{self, nav, ConsistencyPage, Notice, StaffPage};
use super::{html_response, AdminForm, Csrf, SignedInAdmin, StaffForm, WebError};
use crate::auth::api_key::{hash_secret, Role, Tenant};
use crate::auth::staff::{self, StaffUser};
use crate::db::schema::api_key;
use crate::db::DbError;
use crate::state::AppState;

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
    let csrf = Csrf::for_render(req, state);
    let page = StaffPage { nav: nav(user, &csrf.token), csrf: csrf.token.clone(), staff: list, message, new_key };
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
    let refuse = |text: &str| Some(Notice::error(text));
    let problem = if !staff::valid_username(username) {
        refuse("아이디는 영문·숫자·._- 1~64자입니다.")
    } else if display.is_empty() || display.chars().count() > 100 {
        refuse("이름을 1~100자로 적어 주세요.")
    } else if password.chars().count() < 10 {
        refuse("비밀번호는 10자 이상이어야 합니다.")
    } else {
        None
    };
    if let Some(message) = problem {
        return render_staff(&state, &req, &user, Some(message), None, StatusCode::BAD_REQUEST).await;
    }
    let password = password.to_owned();
    let hash = tokio::task::spawn_blocking(move || staff::hash_password(&password)).await.expect("hashing task");
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let created = staff::create(&mut conn, username, display, &hash, form.get("is_admin") == "1").await?;
    let (message, status) = match created {
        Some(s) => (Notice::ok(format!("{} 계정을 만들었습니다.", s.username)), StatusCode::OK),
        None => (Notice::error("이미 있는 아이디입니다."), StatusCode::CONFLICT),
    };
    render_staff(&state, &req, &user, Some(message), None, status).await
}

pub async fn add_key(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(StaffForm { user, form }): AdminForm,
) -> Result<HttpResponse, WebError> {
    let (Ok(tenant), Ok(role)) = (Tenant::parse(form.get("tenant").trim()), form.get("role").parse::<Role>()) else {
        let message = Notice::error("테넌트(영문·숫자·._- 1~64자)와 역할을 확인해 주세요.");
        return render_staff(&state, &req, &user, Some(message), None, StatusCode::BAD_REQUEST).await;
    };
    let mut bytes = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut bytes);
    let secret = format!("yk_{}", hex::encode(bytes));
    let role_name = if role == Role::Admin { "admin" } else { "integration" };
    let label: String = form.get("label").chars().take(100).collect();
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    diesel::insert_into(api_key::table)
        .values((
            api_key::tenant.eq(tenant.as_str()),
            api_key::role.eq(role_name),
            api_key::key_hash.eq(hash_secret(&secret)),
            api_key::label.eq(label),
        ))
        .execute(&mut conn)
        .await?;
    let message = Notice::ok(format!("{tenant} 테넌트의 {role_name} 키를 만들었습니다."));
    render_staff(&state, &req, &user, Some(message), Some(secret), StatusCode::OK).await
}
