//! The browser's side of company sign-in by OpenID Connect (SPEC §16):
//! `/auth/oidc/start` sends the browser to the provider with this sign-in
//! kept in a signed cookie; `/auth/oidc/callback` checks it, lets
//! `auth::oidc` exchange and verify, applies the allowed groups and signs
//! the person in (`auth::linked`). Every refusal is a page in the browser's language with no
//! session, its reason logged — never the code, a token or the query.

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};

use super::account::{safe_next, LoginQuery};
use super::language::PageI18n;
use super::{cookie, fresh_csrf, html_response, pages, session_token};
use crate::auth::linked::{self, CompanyPerson, Outcome, Source};
use crate::auth::oidc::{Callback, Failure, Pending};
use crate::auth::staff;
use crate::db::DbError;
use crate::state::AppState;

// Catalogue keys of the refusal pages (`pages.ftl`).
const UNAVAILABLE: &str = "sso-unavailable";
const NOT_ALLOWED: &str = "sso-not-allowed";
const FAILED: &str = "sso-failed";
const BAD_REQUEST: &str = "sso-bad-request";
const BAD_TOKEN: &str = "sso-bad-token";
const LATER: &str = "sso-later";

/// `GET /auth/oidc/start?next=…`: 303 to the provider, or 503 while it is unreachable.
pub async fn start(state: web::Data<AppState>, req: HttpRequest, query: web::Query<LoginQuery>) -> HttpResponse {
    let Some(oidc) = &state.oidc else { return not_configured(&req) };
    let next = safe_next(query.next.as_deref());
    match oidc.begin(next, state.clock.now()) {
        Ok((to, pending)) => {
            let mut res = HttpResponse::SeeOther().insert_header((header::LOCATION, to.as_str())).finish();
            let mut kept = cookie(&state, state.transport.oidc_cookie(), pending.seal(&state.secret));
            kept.set_max_age(actix_web::cookie::time::Duration::minutes(crate::auth::oidc::pending::PENDING_MINUTES));
            let _ = res.add_cookie(&kept);
            res
        }
        Err(failure) => {
            tracing::warn!(reason = %failure, "company sign-in cannot start");
            page(&req, StatusCode::SERVICE_UNAVAILABLE, UNAVAILABLE, LATER)
        }
    }
}

/// `GET /auth/oidc/callback`: the provider's answer for this browser.
pub async fn callback(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, super::WebError> {
    let Some(oidc) = state.oidc.clone() else { return Ok(not_configured(&req)) };
    let now = state.clock.now();
    let mut res = match serde_urlencoded::from_str::<Callback>(req.query_string()) {
        Err(_) => refused(&req, &Failure::BadRequest("unreadable callback query".into())),
        Ok(query) => {
            let pending =
                req.cookie(state.transport.oidc_cookie()).and_then(|c| Pending::open(&state.secret, c.value(), now));
            match pending {
                None => refused(&req, &Failure::BadRequest("no live sign-in started in this browser".into())),
                Some(pending) => match oidc.finish(&pending, &query).await {
                    Err(failure) => refused(&req, &failure),
                    Ok(signed) => sign_in(&state, &req, &oidc, signed, pending.next).await?,
                },
            }
        }
    };
    // One callback per start, whatever its end.
    let mut gone = cookie(&state, state.transport.oidc_cookie(), String::new());
    gone.make_removal();
    let _ = res.add_cookie(&gone);
    Ok(res)
}

/// The allowed groups, then the account (created, or linked and updated) and its session.
async fn sign_in(
    state: &AppState,
    req: &HttpRequest,
    oidc: &crate::auth::oidc::OidcProvider,
    signed: crate::auth::oidc::SignedIn,
    next: String,
) -> Result<HttpResponse, super::WebError> {
    let who = &signed.identity;
    let rules = &oidc.settings().groups;
    if !rules.admits(&who.groups) {
        tracing::info!("company sign-in refused: in none of YEYAK_OIDC_ALLOWED_GROUPS");
        return Ok(page(req, StatusCode::FORBIDDEN, NOT_ALLOWED, NOT_ALLOWED));
    }
    let person = CompanyPerson::new(
        Source::Oidc,
        &who.issuer,
        &who.subject,
        who.preferred_username.as_deref(),
        who.name.as_deref(),
        who.email.as_deref(),
        rules.is_admin(&who.groups),
    );
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    if let Some(old) = session_token(req, state) {
        staff::end_session(&mut conn, &old).await?;
    }
    match linked::sign_in(&mut conn, &person, Some(&signed.id_token), state.clock.now()).await? {
        Outcome::Disabled => {
            tracing::info!("company sign-in refused: the account is disabled in yeyak");
            Ok(page(req, StatusCode::FORBIDDEN, NOT_ALLOWED, NOT_ALLOWED))
        }
        Outcome::SignedIn { session, .. } => {
            let mut res = HttpResponse::SeeOther().insert_header((header::LOCATION, next)).finish();
            // A new session and a new CSRF nonce, as for a password sign-in.
            let csrf = fresh_csrf(state, &session);
            let _ = res.add_cookie(&cookie(state, state.transport.session_cookie(), session));
            Ok(csrf.attach(res))
        }
    }
}

/// The page of a failed callback; the reason goes to the log only.
fn refused(req: &HttpRequest, failure: &Failure) -> HttpResponse {
    tracing::warn!(reason = %failure, "company sign-in refused");
    match failure {
        Failure::Unavailable(_) => page(req, StatusCode::SERVICE_UNAVAILABLE, UNAVAILABLE, LATER),
        Failure::BadRequest(_) => page(req, StatusCode::BAD_REQUEST, FAILED, BAD_REQUEST),
        Failure::BadToken(_) => page(req, StatusCode::UNAUTHORIZED, FAILED, BAD_TOKEN),
    }
}

fn page(req: &HttpRequest, status: StatusCode, heading: &'static str, text: &'static str) -> HttpResponse {
    html_response(status, pages::message_page(PageI18n::of(req), &pages::Message::new(heading, text)))
}

fn not_configured(req: &HttpRequest) -> HttpResponse {
    page(req, StatusCode::NOT_FOUND, UNAVAILABLE, LATER)
}
