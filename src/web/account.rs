//! Sign-in, sign-out and the person's own account page (SPEC §13, §15, §16,
//! §20). Password hashing runs in a bounded slot with no database connection
//! held, behind a bounded queue; failures (and wrong current passwords) are
//! throttled per username and per client address (`auth::throttle`). The
//! same form signs in local accounts (as `YEYAK_PASSWORD_LOGIN` allows)
//! and, with `YEYAK_LDAP_URL`, the directory's people: a local account
//! first, so the break-glass admin never waits on a directory that is down.

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use super::language::{self, PageI18n};
use super::pages::{self, Nav, Notice};
use super::{
    cookie, csrf_refused, fresh_csrf, html_response, session_token, Csrf, FormData, SignedIn, StaffForm, WebError,
};
use crate::auth::app_password;
use crate::auth::linked::{self, CompanyPerson, Outcome, Source};
use crate::auth::staff::{self, StaffUser};
use crate::auth::{ldap, throttle};
use crate::db::DbError;
use crate::state::AppState;

#[derive(Debug, Deserialize)]
pub struct LoginQuery {
    pub next: Option<String>,
}

/// Only same-origin paths are followed after sign-in: one leading `/` not
/// followed by `/` or `\`, and no whitespace or control characters anywhere
/// (browsers drop tabs and newlines, which would turn `/\t/evil` into
/// `//evil`).
pub fn safe_next(next: Option<&str>) -> String {
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
    let oidc_start = state.oidc.as_ref().map(|_| {
        format!("/auth/oidc/start?next={}", url::form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>())
    });
    let page = LoginPage {
        i18n: PageI18n::of(req),
        nav: None,
        csrf: csrf.token.clone(),
        username: username.to_owned(),
        next: next.to_owned(),
        message,
        password_form: state.password_login != crate::auth::PasswordLogin::Off || state.ldap.is_some(),
        oidc_start,
    };
    csrf.attach(html_response(status, pages::render(&page)))
}

pub async fn login_form(state: web::Data<AppState>, req: HttpRequest, query: web::Query<LoginQuery>) -> HttpResponse {
    login_page(&req, &state, "", &safe_next(query.next.as_deref()), None, StatusCode::OK)
}

/// The sign-in page again, refused: 429 with `Retry-After` while locked
/// (no password checked, nothing counted), 503 at once when the hashing
/// queue is full or the directory cannot be asked, 401 for a wrong name or
/// password.
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
    let password = form.get("password");
    let next = safe_next(Some(form.get("next")).filter(|n| !n.is_empty()).or(query.next.as_deref()));
    let now = state.clock.now();
    let well_formed = staff::valid_username(&username);
    let attempt = attempt(&state, &req, well_formed.then_some(username.as_str()));
    let i18n = PageI18n::of(&req);
    let refuse =
        |key: &str, status| login_page(&req, &state, &username, &next, Some(Notice::error(i18n.t(key))), status);
    let local = state.password_login.allows(&username, &state.admin_user);
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
        if local {
            staff::lookup(&mut conn, &username).await?
        } else {
            None
        }
    };
    // A local password is checked unless YEYAK_PASSWORD_LOGIN leaves only
    // the directory (an unknown name costs the same Argon2 as a wrong password).
    if local || state.ldap.is_none() {
        let (user, hash) = found.map_or((None, None), |(u, h)| (Some(u), Some(h)));
        let ok = place.verify(hash, password).await;
        if let Some(user) = user.filter(|_| ok) {
            let mut conn = state.pool.get().await.map_err(DbError::from)?;
            throttle::clear_failures(&mut conn, &username).await?;
            if let Some(old) = session_token(&req, &state) {
                staff::end_session(&mut conn, &old).await?;
            }
            let token = staff::start_session(&mut conn, user.id, state.clock.now()).await?;
            return Ok(signed_in(&state, next, &username, token, now));
        }
    }
    let directory_result = match &state.ldap {
        Some(directory) => Some(directory.authenticate(&username, password).await),
        None => None,
    };
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let entry = match directory_result {
        Some(Ok(entry)) => entry,
        Some(Err(ldap::Failure::Unavailable(reason))) => {
            // Not the person's failure: nothing counted; local accounts still sign in.
            tracing::warn!(%reason, "directory sign-in unavailable");
            return Ok(refuse(DIRECTORY_DOWN, StatusCode::SERVICE_UNAVAILABLE));
        }
        Some(Err(ldap::Failure::Refused(reason))) => {
            tracing::info!(reason, "directory sign-in refused");
            throttle::record_failure(&mut conn, &attempt, now).await?;
            return Ok(refuse(WRONG, StatusCode::UNAUTHORIZED));
        }
        None => {
            throttle::record_failure(&mut conn, &attempt, now).await?;
            return Ok(refuse(WRONG, StatusCode::UNAUTHORIZED));
        }
    };
    // Created and linked under the directory's own spelling (`kim` for a
    // typed `Kim`), when it is a username yeyak can hold.
    let directory_name = entry.username.as_deref().filter(|u| staff::valid_username(u)).unwrap_or(&username);
    let person = CompanyPerson::new(
        Source::Ldap,
        ldap::ISSUER,
        &entry.subject,
        Some(directory_name),
        entry.name.as_deref(),
        entry.email.as_deref(),
        entry.is_admin,
    );
    if let Some(old) = session_token(&req, &state) {
        staff::end_session(&mut conn, &old).await?;
    }
    match linked::sign_in(&mut conn, &person, None, state.clock.now()).await? {
        Outcome::SignedIn { session, .. } => {
            throttle::clear_failures(&mut conn, &username).await?;
            Ok(signed_in(&state, next, &username, session, now))
        }
        Outcome::Disabled => {
            tracing::info!("directory sign-in of a disabled account refused");
            throttle::record_failure(&mut conn, &attempt, now).await?;
            Ok(refuse(WRONG, StatusCode::UNAUTHORIZED))
        }
    }
}

/// The answer to a successful sign-in: 303 to `next` with a new session and
/// a new CSRF nonce (nothing from before sign-in carries over), and this
/// browser marked as the person's device for 30 days (only an HMAC; nothing stored).
fn signed_in(
    state: &AppState,
    next: String,
    username: &str,
    token: String,
    now: chrono::DateTime<chrono::Utc>,
) -> HttpResponse {
    let mut res = HttpResponse::SeeOther().insert_header((header::LOCATION, next)).finish();
    let csrf = fresh_csrf(state, &token);
    let _ = res.add_cookie(&cookie(state, state.transport.session_cookie(), token));
    let mut device =
        cookie(state, state.transport.device_cookie(), throttle::device_mark(&state.secret, username, now));
    device.set_max_age(actix_web::cookie::time::Duration::days(throttle::DEVICE_DAYS));
    let _ = res.add_cookie(&device);
    csrf.attach(res)
}

const LOCKED: &str = "login-locked";
const WRONG: &str = "login-wrong";
const BUSY: &str = "login-busy";
const DIRECTORY_DOWN: &str = "login-directory-down";

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

/// Ends yeyak's session; after an OpenID sign-in, the browser then goes to
/// the provider's sign-out (SPEC §16), which sends it back to `/login`.
pub async fn logout(state: web::Data<AppState>, req: HttpRequest, _: StaffForm) -> Result<HttpResponse, WebError> {
    let mut id_token = None;
    if let Some(token) = session_token(&req, &state) {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        id_token = staff::end_session(&mut conn, &token).await?;
    }
    let provider = id_token.zip(state.oidc.as_ref()).and_then(|(hint, oidc)| oidc.sign_out_url(&hint));
    let to = provider.map_or_else(|| "/login".to_owned(), String::from);
    let mut res = HttpResponse::SeeOther().insert_header((header::LOCATION, to)).finish();
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
    let i18n = PageI18n::of(req);
    let choice = user.language().unwrap_or(i18n.lang());
    render_account_in(state, req, user, i18n, choice, message, None, status).await
}

/// The account page in `i18n`'s language with `choice` marked as the
/// person's language; `created` is an app password made by this request,
/// shown this once.
#[allow(clippy::too_many_arguments)]
async fn render_account_in(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    i18n: PageI18n,
    choice: crate::i18n::Lang,
    message: Option<Notice>,
    created: Option<app_password::Created>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let generation = crate::calendar::token::generation(&mut conn, user.id).await?;
    let local_password = staff::source_of(&mut conn, user.id).await?.as_deref() == Some("local");
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
        language: choice.tag(),
        i18n,
        nav: pages::nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        username: user.username.clone(),
        display_name: user.display_name.clone(),
        feed_url: feed_url(req, state, user, generation),
        dav_url: format!("{origin}/dav/"),
        app_passwords,
        created,
        message,
        local_password,
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
    let i18n = PageI18n::of(&req);
    let label = match app_password::parse_label(form.get("label")) {
        Ok(label) => label,
        Err(_) => {
            let message = Notice::error(i18n.t("app-password-bad-label"));
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
    let message = Notice::ok(i18n.t1("app-password-created", "label", created.label.as_str()));
    let choice = user.language().unwrap_or(i18n.lang());
    render_account_in(&state, &req, &user, i18n, choice, Some(message), Some(created), StatusCode::OK).await
}

/// `POST /account/app-passwords/{id}/revoke`: refused at once everywhere.
pub async fn revoke_app_password(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: web::Path<String>,
    StaffForm { user, .. }: StaffForm,
) -> Result<HttpResponse, WebError> {
    let not_found = || WebError::message(StatusCode::NOT_FOUND, "error-not-found-heading", "app-password-not-found");
    let id: i64 = id.parse().map_err(|_| not_found())?;
    let command = app_password::RevokeAppPassword { id };
    let revoked = state
        .pipeline
        .run(&super::principal(&state, &user), None, &command)
        .await
        .map_err(|e| super::bookings::refused_page(&e))?
        .ok_or_else(not_found)?;
    let message = Notice::ok(PageI18n::of(&req).t1("app-password-revoked", "label", revoked.label.as_str()));
    render_account(&state, &req, &user, Some(message), StatusCode::OK).await
}

pub async fn account(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
) -> Result<HttpResponse, WebError> {
    render_account(&state, &req, &user, None, StatusCode::OK).await
}

/// A company account asking to change a password it does not have.
const COMPANY_PASSWORD: &str = "account-company-password";

/// Shortest password accepted anywhere.
pub const MIN_PASSWORD_CHARS: usize = 10;

/// `POST /account/password`: the current password is required; every other
/// session of the person ends, this one stays.
pub async fn change_password(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
) -> Result<HttpResponse, WebError> {
    let i18n = PageI18n::of(&req);
    let new = form.get("new_password");
    let source = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        staff::source_of(&mut conn, user.id).await?
    };
    if source.as_deref() != Some("local") {
        let message = Notice::error(i18n.t(COMPANY_PASSWORD));
        return render_account(&state, &req, &user, Some(message), StatusCode::BAD_REQUEST).await;
    }
    if new.chars().count() < MIN_PASSWORD_CHARS {
        let message = Notice::error(i18n.t("account-password-too-short"));
        return render_account(&state, &req, &user, Some(message), StatusCode::BAD_REQUEST).await;
    }
    // Wrong current passwords are throttled like sign-ins (SPEC §20).
    let attempt = attempt(&state, &req, Some(user.username.as_str()));
    let now = state.clock.now();
    let again = |key: &str, status| render_account(&state, &req, &user, Some(Notice::error(i18n.t(key))), status);
    let Ok(place) = state.hashing.enter() else { return again(BUSY, StatusCode::SERVICE_UNAVAILABLE).await.map(busy) };
    let _turn = place.turn(attempt.turn_keys()).await;
    let current = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        if let Some(until) = throttle::locked_until(&mut conn, &attempt, now).await? {
            return again("account-password-throttled", StatusCode::TOO_MANY_REQUESTS)
                .await
                .map(|res| throttled(res, until, now));
        }
        staff::password_hash_of(&mut conn, user.id).await?
    };
    if !place.verify(current, form.get("current_password")).await {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        throttle::record_failure(&mut conn, &attempt, now).await?;
        drop(conn);
        return again("account-password-wrong", StatusCode::BAD_REQUEST).await;
    }
    let hash = place.hash(new).await;
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    staff::set_password(&mut conn, user.id, &hash, session_token(&req, &state).as_deref()).await?;
    drop(conn);
    let message = Notice::ok(i18n.t("account-password-changed"));
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
    let message = Notice::ok(PageI18n::of(&req).t("account-feed-rotated"));
    render_account(&state, &req, &user, Some(message), StatusCode::OK).await
}

/// `POST /account/language` (`language` = `ko` | `en`): the person's
/// choice, stored by the `staff.set_language` command; the answer is the
/// account page in the chosen language, and the browser remembers it too
/// (a language picked earlier with `?lang=` would otherwise win, SPEC §19).
pub async fn choose_language(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
) -> Result<HttpResponse, WebError> {
    let Some(lang) = crate::i18n::Lang::parse_exact(form.get("language")) else {
        let message = Notice::error(PageI18n::of(&req).t("account-language-invalid"));
        return render_account(&state, &req, &user, Some(message), StatusCode::BAD_REQUEST).await;
    };
    let command = crate::auth::commands::SetLanguage { lang };
    if let Err(err) = state.pipeline.run(&super::principal(&state, &user), None, &command).await {
        let i18n = PageI18n::of(&req);
        let message = Notice::error(super::form::refusal(&i18n, &err));
        return render_account(&state, &req, &user, Some(message), super::form::status_of(&err)).await;
    }
    let i18n = PageI18n::in_lang(&req, lang);
    let message = Notice::ok(i18n.t("account-language-saved"));
    let mut res = render_account_in(&state, &req, &user, i18n, lang, Some(message), None, StatusCode::OK).await?;
    let _ = res.add_cookie(&language::remember(&state, lang));
    Ok(res)
}

#[derive(Template)]
#[template(path = "login.html")]
pub struct LoginPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub csrf: String,
    pub username: String,
    /// Where to go after signing in (already checked to be a local path).
    pub next: String,
    pub message: Option<Notice>,
    /// The username/password form (local accounts or the directory).
    pub password_form: bool,
    /// `/auth/oidc/start?next=…` when OpenID Connect is configured.
    pub oidc_start: Option<String>,
}

#[derive(Template)]
#[template(path = "account.html")]
pub struct AccountPage {
    pub i18n: PageI18n,
    /// The language the form shows chosen: the person's, else the page's.
    pub language: &'static str,
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
    /// A local account: its password can be changed here (company accounts have none).
    pub local_password: bool,
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
