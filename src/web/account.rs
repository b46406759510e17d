//! Sign-in and sign-out. A new session token is issued at every sign-in (the
//! cookie rotates); the old one, if any, is ended.

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use super::pages::{self, LoginPage, Notice};
use super::{cookie, csrf_refused, html_response, Csrf, FormData, WebError, SESSION_COOKIE};
use crate::auth::staff;
use crate::db::DbError;
use crate::state::AppState;

#[derive(Debug, Deserialize)]
pub struct LoginQuery {
    next: Option<String>,
}

/// Only local paths are followed after sign-in.
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.contains('\\') => n.to_owned(),
        _ => "/".to_owned(),
    }
}

fn login_page(
    req: &HttpRequest,
    state: &AppState,
    username: &str,
    message: Option<Notice>,
    status: StatusCode,
) -> HttpResponse {
    let csrf = Csrf::for_render(req, state);
    let page = LoginPage { nav: None, csrf: csrf.token.clone(), username: username.to_owned(), message };
    csrf.attach(html_response(status, pages::render(&page)))
}

pub async fn login_form(state: web::Data<AppState>, req: HttpRequest) -> HttpResponse {
    login_page(&req, &state, "", None, StatusCode::OK)
}

pub async fn login(
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<LoginQuery>,
    form: FormData,
) -> Result<HttpResponse, WebError> {
    if !Csrf::verify(&req, &state, &form) {
        return Err(csrf_refused());
    }
    let username = form.get("username").trim().to_owned();
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let now = state.clock.now();
    let valid = staff::valid_username(&username);
    if valid && staff::locked_until(&mut conn, &username, now).await?.is_some() {
        // Not even checked: repeated failures slow guessing down.
        let message = Notice::error("로그인 시도가 너무 많습니다. 잠시 후 다시 시도해 주세요.");
        return Ok(login_page(&req, &state, &username, Some(message), StatusCode::TOO_MANY_REQUESTS));
    }
    let user = if valid { staff::authenticate(&mut conn, &username, form.get("password")).await? } else { None };
    let Some(user) = user else {
        if valid {
            staff::record_failure(&mut conn, &username, now).await?;
        }
        let message = Notice::error("아이디 또는 비밀번호가 올바르지 않습니다.");
        return Ok(login_page(&req, &state, &username, Some(message), StatusCode::UNAUTHORIZED));
    };
    staff::clear_failures(&mut conn, &username).await?;
    if let Some(old) = req.cookie(SESSION_COOKIE) {
        staff::end_session(&mut conn, old.value()).await?;
    }
    let token = staff::start_session(&mut conn, user.id, state.clock.now()).await?;
    let mut res = HttpResponse::SeeOther().insert_header((header::LOCATION, safe_next(query.next.as_deref()))).finish();
    let _ = res.add_cookie(&cookie(&req, SESSION_COOKIE, token));
    Ok(res)
}

pub async fn logout(state: web::Data<AppState>, req: HttpRequest, form: FormData) -> Result<HttpResponse, WebError> {
    if !Csrf::verify(&req, &state, &form) {
        return Err(csrf_refused());
    }
    if let Some(token) = req.cookie(SESSION_COOKIE) {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        staff::end_session(&mut conn, token.value()).await?;
    }
    let mut res = HttpResponse::SeeOther().insert_header((header::LOCATION, "/login")).finish();
    let mut gone = cookie(&req, SESSION_COOKIE, String::new());
    gone.make_removal();
    let _ = res.add_cookie(&gone);
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn only_local_redirects() {
        assert_eq!(safe_next(Some("/rooms?date=2030-01-01")), "/rooms?date=2030-01-01");
        assert_eq!(safe_next(Some("//evil.example")), "/");
        assert_eq!(safe_next(Some("https://evil.example")), "/");
        assert_eq!(safe_next(None), "/");
    }
}
