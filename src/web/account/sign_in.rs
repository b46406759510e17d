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

use crate::auth::linked::{self, CompanyPerson, Outcome, Source};
use crate::auth::staff::{self};
use crate::auth::{ldap, throttle};
use crate::db::DbError;
use crate::state::AppState;
use crate::web::language::PageI18n;
use crate::web::pages::{self, Nav, Notice};
use crate::web::{cookie, csrf_refused, fresh_csrf, html_response, session_token, Csrf, FormData, StaffForm, WebError};

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
pub(super) const BUSY: &str = "login-busy";
const DIRECTORY_DOWN: &str = "login-directory-down";

/// An attempt as the throttle sees it: the client address, the username
/// when well-formed, and whether this browser carries that person's device mark.
pub(super) fn attempt<'a>(state: &AppState, req: &HttpRequest, username: Option<&'a str>) -> throttle::Attempt<'a> {
    let mark = req.cookie(state.transport.device_cookie());
    let known_device = match (username, mark) {
        (Some(name), Some(mark)) => throttle::is_device_of(&state.secret, mark.value(), name, state.clock.now()),
        _ => false,
    };
    throttle::Attempt { username, address: state.transport.client_ip(req), known_device }
}

pub(super) fn throttled(
    mut res: HttpResponse,
    until: chrono::DateTime<chrono::Utc>,
    now: chrono::DateTime<chrono::Utc>,
) -> HttpResponse {
    let secs = throttle::retry_after(until, now);
    res.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
    res
}

pub(super) fn busy(mut res: HttpResponse) -> HttpResponse {
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
