//! Sign-in, sign-out and the person's own account page (SPEC §13, §15, §20).
//! Password hashing runs in a bounded slot with no database connection held,
//! behind a bounded queue; failures (and wrong current passwords) are
//! throttled per username and per client address (`auth::throttle`).

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use super::pages::{self, Nav, Notice};
use super::{
    cookie, csrf_refused, fresh_csrf, html_response, session_token, Csrf, FormData, SignedIn, StaffForm, WebError,
};
use crate::auth::app_password;
use crate::auth::staff::{self, StaffUser};
use crate::auth::throttle;
use crate::db::DbError;
use crate::state::AppState;

#[derive(Debug, Deserialize)]
pub struct LoginQuery {
    next: Option<String>,
}

/// Only same-origin paths are followed after sign-in: one leading `/` not
/// followed by `/` or `\`, and no whitespace or control characters anywhere
/// (browsers drop tabs and newlines, which would turn `/\t/evil` into
/// `//evil`).
fn safe_next(next: Option<&str>) -> String {
    let ok = |n: &str| {
        n.starts_with('/')
            && !n[1..].starts_with(['/', '\\'])
            && !n.contains('\\')
            && !n.chars().any(|c| c.is_control() || c.is_whitespace())
    };
    match next {
        Some(n) if ok(n) => n.to_owned(),
        _ => "/".to_owned(),
    }
}

fn login_page(
    req: &HttpRequest,
    state: &AppState,
    username: &str,
    next: &str,
    message: Option<Notice>,
    status: StatusCode,
) -> HttpResponse {
    let csrf = Csrf::for_render(req, state);
    let page = LoginPage {
        nav: None,
        csrf: csrf.token.clone(),
        username: username.to_owned(),
        next: next.to_owned(),
        message,
    };
    csrf.attach(html_response(status, pages::render(&page)))
}

pub async fn login_form(state: web::Data<AppState>, req: HttpRequest, query: web::Query<LoginQuery>) -> HttpResponse {
    login_page(&req, &state, "", &safe_next(query.next.as_deref()), None, StatusCode::OK)
}

/// The sign-in page again, refused: 429 with `Retry-After` while locked
/// (no password checked, nothing counted), 503 at once when the hashing
/// queue is full, 401 for a wrong name or password.
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
    let next = safe_next(Some(form.get("next")).filter(|n| !n.is_empty()).or(query.next.as_deref()));
    let now = state.clock.now();
    let well_formed = staff::valid_username(&username);
    let attempt = attempt(&state, &req, well_formed.then_some(username.as_str()));
    let refuse = |text: &str, status| login_page(&req, &state, &username, &next, Some(Notice::error(text)), status);
    let Ok(place) = state.hashing.enter() else { return Ok(busy(refuse(BUSY, StatusCode::SERVICE_UNAVAILABLE))) };
    // One attempt at a time per address and username: a burst of guesses is
    // judged one after another against the count (no connection held while waiting).
    let _turn = place.turn(attempt.turn_keys()).await;
    // Connection use is short and never spans the hashing below.
    let found = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        if let Some(until) = throttle::locked_until(&mut conn, &attempt, now).await? {
            // Not even checked, nor counted: repeated failures slow guessing down.
            return Ok(throttled(refuse(LOCKED, StatusCode::TOO_MANY_REQUESTS), until, now));
        }
        if !well_formed {
            // The format is public: no Argon2 to spend, but a failure of this address.
            throttle::record_failure(&mut conn, &attempt, now).await?;
            return Ok(refuse(WRONG, StatusCode::UNAUTHORIZED));
        }
        staff::lookup(&mut conn, &username).await?
    };
    let (user, hash) = found.map_or((None, None), |(u, h)| (Some(u), Some(h)));
    let ok = place.verify(hash, form.get("password")).await;
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let Some(user) = user.filter(|_| ok) else {
        throttle::record_failure(&mut conn, &attempt, now).await?;
        return Ok(refuse(WRONG, StatusCode::UNAUTHORIZED));
    };
    throttle::clear_failures(&mut conn, &username).await?;
    if let Some(old) = session_token(&req, &state) {
        staff::end_session(&mut conn, &old).await?;
    }
    let token = staff::start_session(&mut conn, user.id, state.clock.now()).await?;
    let mut res = HttpResponse::SeeOther().insert_header((header::LOCATION, next)).finish();
    // A new session and a new CSRF nonce: nothing from before sign-in carries over.
    let csrf = fresh_csrf(&state, &token);
    let _ = res.add_cookie(&cookie(&state, state.transport.session_cookie(), token));
    // This browser is now the person's device for 30 days (only an HMAC; nothing stored).
    let mut device =
        cookie(&state, state.transport.device_cookie(), throttle::device_mark(&state.secret, &username, now));
    device.set_max_age(actix_web::cookie::time::Duration::days(throttle::DEVICE_DAYS));
    let _ = res.add_cookie(&device);
    Ok(csrf.attach(res))
}

const LOCKED: &str = "로그인 시도가 너무 많습니다. 잠시 후 다시 시도해 주세요.";
const WRONG: &str = "아이디 또는 비밀번호가 올바르지 않습니다.";
const BUSY: &str = "지금은 로그인 요청이 많습니다. 잠시 후 다시 시도해 주세요.";

/// An attempt as the throttle sees it: the client address, the username
/// when well-formed, and whether this browser carries that person's device mark.
fn attempt<'a>(state: &AppState, req: &HttpRequest, username: Option<&'a str>) -> throttle::Attempt<'a> {
    let mark = req.cookie(state.transport.device_cookie());
    let known_device = match (username, mark) {
        (Some(name), Some(mark)) => throttle::is_device_of(&state.secret, mark.value(), name, state.clock.now()),
        _ => false,
    };
    throttle::Attempt { username, address: state.transport.client_ip(req), known_device }
}

fn throttled(
    mut res: HttpResponse,
    until: chrono::DateTime<chrono::Utc>,
    now: chrono::DateTime<chrono::Utc>,
) -> HttpResponse {
    let secs = throttle::retry_after(until, now);
    res.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
    res
}

fn busy(mut res: HttpResponse) -> HttpResponse {
    res.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(1u32));
    res
}

pub async fn logout(state: web::Data<AppState>, req: HttpRequest, _: StaffForm) -> Result<HttpResponse, WebError> {
    if let Some(token) = session_token(&req, &state) {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        staff::end_session(&mut conn, &token).await?;
    }
    let mut res = HttpResponse::SeeOther().insert_header((header::LOCATION, "/login")).finish();
    let mut gone = cookie(&state, state.transport.session_cookie(), String::new());
    gone.make_removal();
    let _ = res.add_cookie(&gone);
    Ok(res)
}

/// The address people subscribe to: `YEYAK_PUBLIC_URL`'s origin, else the
/// origin this page was asked at (forwarded headers only from a trusted
/// proxy; shown only, never trusted for anything).
fn feed_url(req: &HttpRequest, state: &AppState, user: &StaffUser, generation: i32) -> String {
    let token = crate::calendar::token::token(&state.secret, user.id, generation);
    let origin = match &state.public_origin {
        Some(origin) => origin.clone(),
        None => state.transport.request_origin(req),
    };
    format!("{origin}/ical/me.ics?token={token}")
}

async fn render_account(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    message: Option<Notice>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    render_account_with(state, req, user, message, None, status).await
}

/// The account page; `created` is an app password made by this request,
/// shown this once.
async fn render_account_with(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    message: Option<Notice>,
    created: Option<app_password::Created>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let generation = crate::calendar::token::generation(&mut conn, user.id).await?;
    let passwords = app_password::list(&mut conn, user.id).await?;
    drop(conn);
    let tz = state.policy().timezone;
    let local = |t: chrono::DateTime<chrono::Utc>| t.with_timezone(&tz).format("%Y-%m-%d %H:%M").to_string();
    let app_passwords = passwords
        .into_iter()
        .map(|p| AppPasswordRow {
            id: p.id,
            label: p.label,
            created: local(p.created_at),
            last_used: p.last_used_at.map(local),
            revoked: p.revoked_at.is_some(),
        })
        .collect();
    let origin = match &state.public_origin {
        Some(origin) => origin.clone(),
        None => state.transport.request_origin(req),
    };
    let csrf = Csrf::for_render(req, state);
    let page = AccountPage {
        nav: pages::nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        username: user.username.clone(),
        display_name: user.display_name.clone(),
        feed_url: feed_url(req, state, user, generation),
        dav_url: format!("{origin}/dav/"),
        app_passwords,
        created,
        message,
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

/// `POST /account/app-passwords` (`label`): a new app password for a
/// calendar app, shown once on the answer.
pub async fn create_app_password(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
) -> Result<HttpResponse, WebError> {
    let label = match app_password::parse_label(form.get("label")) {
        Ok(label) => label,
        Err(_) => {
            let message = Notice::error("이름(label)은 1~100자로, 제어 문자나 줄바꿈 없이 적어 주세요.");
            return render_account(&state, &req, &user, Some(message), StatusCode::BAD_REQUEST).await;
        }
    };
    let (secret, digest) = app_password::generate(&state.secret);
    let command = app_password::CreateAppPassword { label, secret, digest };
    let created = state
        .pipeline
        .run(&super::principal(&state, &user), None, &command)
        .await
        .map_err(|e| super::bookings::refused_page(&e))?;
    let message = Notice::ok(format!("앱 비밀번호 '{}'을(를) 만들었습니다. 지금 한 번만 보입니다.", created.label));
    render_account_with(&state, &req, &user, Some(message), Some(created), StatusCode::OK).await
}

/// `POST /account/app-passwords/{id}/revoke`: refused at once everywhere.
pub async fn revoke_app_password(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: web::Path<String>,
    StaffForm { user, .. }: StaffForm,
) -> Result<HttpResponse, WebError> {
    let not_found = || {
        WebError::Page(StatusCode::NOT_FOUND, pages::message_page("찾을 수 없습니다", "그런 앱 비밀번호가 없습니다."))
    };
    let id: i64 = id.parse().map_err(|_| not_found())?;
    let command = app_password::RevokeAppPassword { id };
    let revoked = state
        .pipeline
        .run(&super::principal(&state, &user), None, &command)
        .await
        .map_err(|e| super::bookings::refused_page(&e))?
        .ok_or_else(not_found)?;
    let message = Notice::ok(format!("앱 비밀번호 '{}'을(를) 폐기했습니다. 이제 로그인할 수 없습니다.", revoked.label));
    render_account(&state, &req, &user, Some(message), StatusCode::OK).await
}

pub async fn account(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
) -> Result<HttpResponse, WebError> {
    render_account(&state, &req, &user, None, StatusCode::OK).await
}

/// Shortest password accepted anywhere.
pub const MIN_PASSWORD_CHARS: usize = 10;

/// `POST /account/password`: the current password is required; every other
/// session of the person ends, this one stays.
pub async fn change_password(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
) -> Result<HttpResponse, WebError> {
    let new = form.get("new_password");
    if new.chars().count() < MIN_PASSWORD_CHARS {
        let message = Notice::error("새 비밀번호는 10자 이상이어야 합니다.");
        return render_account(&state, &req, &user, Some(message), StatusCode::BAD_REQUEST).await;
    }
    // Wrong current passwords are throttled like sign-ins (SPEC §20).
    let attempt = attempt(&state, &req, Some(user.username.as_str()));
    let now = state.clock.now();
    let again = |text: &str, status| render_account(&state, &req, &user, Some(Notice::error(text)), status);
    let Ok(place) = state.hashing.enter() else { return again(BUSY, StatusCode::SERVICE_UNAVAILABLE).await.map(busy) };
    let _turn = place.turn(attempt.turn_keys()).await;
    let current = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        if let Some(until) = throttle::locked_until(&mut conn, &attempt, now).await? {
            let text = "비밀번호 확인 시도가 너무 많습니다. 잠시 후 다시 시도해 주세요.";
            return again(text, StatusCode::TOO_MANY_REQUESTS).await.map(|res| throttled(res, until, now));
        }
        staff::password_hash_of(&mut conn, user.id).await?
    };
    if !place.verify(current, form.get("current_password")).await {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        throttle::record_failure(&mut conn, &attempt, now).await?;
        drop(conn);
        return again("지금 비밀번호가 맞지 않습니다.", StatusCode::BAD_REQUEST).await;
    }
    let hash = place.hash(new).await;
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    staff::set_password(&mut conn, user.id, &hash, session_token(&req, &state).as_deref()).await?;
    drop(conn);
    let message = Notice::ok("비밀번호를 바꿨습니다. 다른 곳의 로그인은 모두 끝났습니다.");
    render_account(&state, &req, &user, Some(message), StatusCode::OK).await
}

/// `POST /account/calendar-token`: the old feed address stops at once.
pub async fn rotate_calendar_token(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, .. }: StaffForm,
) -> Result<HttpResponse, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    crate::calendar::token::rotate(&mut conn, user.id).await?;
    drop(conn);
    let message = Notice::ok("새 캘린더 주소를 만들었습니다. 예전 주소는 더 이상 열리지 않습니다.");
    render_account(&state, &req, &user, Some(message), StatusCode::OK).await
}

#[derive(Template)]
#[template(path = "login.html")]
pub struct LoginPage {
    pub nav: Option<Nav>,
    pub csrf: String,
    pub username: String,
    /// Where to go after signing in (already checked to be a local path).
    pub next: String,
    pub message: Option<Notice>,
}

#[derive(Template)]
#[template(path = "account.html")]
pub struct AccountPage {
    pub nav: Option<Nav>,
    pub csrf: String,
    pub username: String,
    pub display_name: String,
    pub feed_url: String,
    /// Where calendar apps connect (`{base}/dav/`).
    pub dav_url: String,
    pub app_passwords: Vec<AppPasswordRow>,
    /// Made by this request: its secret is shown this once.
    pub created: Option<app_password::Created>,
    pub message: Option<Notice>,
}

/// An app password as the account page lists it (times in the configured zone).
pub struct AppPasswordRow {
    pub id: i64,
    pub label: String,
    pub created: String,
    pub last_used: Option<String>,
    pub revoked: bool,
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn only_same_origin_paths_are_followed() {
        assert_eq!(safe_next(Some("/rooms?date=2030-01-01")), "/rooms?date=2030-01-01");
        for evil in ["//evil.example", "https://evil.example", "/\t/evil.example", "/\\evil.example", "/\n/x", "x"] {
            assert_eq!(safe_next(Some(evil)), "/", "{evil:?}");
        }
        assert_eq!(safe_next(None), "/");
    }
}
