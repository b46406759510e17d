//! The browser UI (SPEC §5): server-rendered Askama pages and plain HTML
//! forms that work without JavaScript. Forms carry a CSRF token (signed
//! double-submit: an HttpOnly cookie nonce and its HMAC in the form) and,
//! where they change bookings, a per-render idempotency key.

pub mod account;
pub mod admin;
pub mod approvals;
pub mod bookings;
pub mod day;
pub mod display;
pub mod feeds;
pub mod find;
pub mod form;
pub mod grid;
pub mod history;
pub mod language;
pub mod my;
pub mod pages;
pub mod plan;
pub mod restore;
pub mod sso;
pub mod week;
pub mod words;
pub mod zones;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use actix_web::cookie::Cookie;
use actix_web::dev::Payload;
use actix_web::http::{header, StatusCode};
use actix_web::{web, FromRequest, HttpMessage, HttpRequest, HttpResponse, ResponseError};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

use crate::auth::staff::{self, StaffUser};
use crate::db::DbError;
use crate::state::AppState;

/// Largest form body accepted.
const FORM_LIMIT: usize = 64 * 1024;

/// Every state-changing form of a signed-in page. Each is served by a
/// handler taking [`StaffForm`] or [`AdminForm`] (sign-in, then the CSRF
/// token bound to the session); `tests/api/forms.rs` posts to every one
/// without a token and with another session's token, and checks that this
/// list equals the POST routes registered in the source.
pub const FORM_ROUTES: &[&str] = &[
    "/bookings",
    "/bookings/{id}/move",
    "/bookings/{id}/cancel",
    "/bookings/{id}/check-in",
    "/logout",
    "/account/password",
    "/account/calendar-token",
    "/account/language",
    "/account/time-zone",
    "/account/app-passwords",
    "/account/app-passwords/{id}/revoke",
    "/account/delegates",
    "/account/delegates/{username}/remove",
    "/admin/staff",
    "/admin/staff/{id}/disable",
    "/admin/staff/{id}/enable",
    "/admin/staff/{id}/password",
    "/admin/staff/{username}/erase",
    "/admin/staff/{id}/delegates",
    "/admin/keys",
    "/admin/keys/{id}/revoke",
    "/admin/approvals/{id}/approve",
    "/admin/approvals/{id}/reject",
    "/admin/rooms",
    "/admin/rooms/{code}",
    "/admin/rooms/{code}/retire",
    "/admin/rooms/{code}/display-token",
    "/admin/rooms/{code}/display-token/revoke",
    "/admin/areas",
    "/admin/areas/{code}",
    "/admin/holidays",
    "/admin/holidays/{code}/days",
    "/series/{id}/restore",
    "/admin/areas/{code}/plan",
    "/account/away",
];

/// POST routes outside [`FORM_ROUTES`], each with why it needs no session
/// CSRF token: sign-in has no session yet (its token is bound to the nonce
/// alone), and the door display is authorised by its room token in the form.
/// CalDAV's schedule outbox is authenticated by HTTP Basic on every request
/// and reads no cookie, so a forged cross-site form cannot act through it.
pub const OTHER_POST_ROUTES: &[&str] =
    &["/login", "/display/{code}/book", "/display/{code}/check-in", "/dav/calendars/{username}/outbox/"];

/// The grid's placement classes, generated once.
pub async fn grid_css() -> HttpResponse {
    static CSS: std::sync::LazyLock<String> = std::sync::LazyLock::new(grid::placement_css);
    HttpResponse::Ok()
        .content_type("text/css; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
        .body(CSS.as_str())
}

/// How a page request ends when it does not render its page.
#[derive(Debug)]
pub enum WebError {
    /// 303 to a location (sign-in needed, or after a form).
    Redirect(String),
    /// A message page with a status (403 for CSRF, 404, 5xx), written in
    /// the page's language by `pages::in_their_language`.
    Message(StatusCode, pages::Message),
}

impl WebError {
    /// A message page of catalogue texts.
    pub fn message(status: StatusCode, heading: &'static str, text: &'static str) -> Self {
        WebError::Message(status, pages::Message::new(heading, text))
    }
}

impl std::fmt::Display for WebError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WebError::Redirect(to) => write!(f, "redirect to {to}"),
            WebError::Message(status, _) => write!(f, "page {status}"),
        }
    }
}

impl ResponseError for WebError {
    fn status_code(&self) -> StatusCode {
        match self {
            WebError::Redirect(_) => StatusCode::SEE_OTHER,
            WebError::Message(status, _) => *status,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            WebError::Redirect(to) => HttpResponse::SeeOther().insert_header((header::LOCATION, to.as_str())).finish(),
            WebError::Message(status, message) => {
                // Korean until the middleware writes it in the page's language.
                let html = pages::message_page(language::PageI18n::korean(), message);
                let mut res = html_response(*status, html);
                res.extensions_mut().insert(message.clone());
                res
            }
        }
    }
}

impl From<DbError> for WebError {
    fn from(e: DbError) -> Self {
        let api = crate::error::ApiError::from(e);
        WebError::Message(api.status(), pages::Message::refusal("error-retry-heading", api))
    }
}

impl From<diesel::result::Error> for WebError {
    fn from(e: diesel::result::Error) -> Self {
        WebError::from(DbError::from(e))
    }
}

pub fn html_response(status: StatusCode, html: String) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(html)
}

/// A signed-in staff member (else a redirect to the sign-in page).
pub struct SignedIn(pub StaffUser);

/// Whether the signed-in person is someone's delegate (SPEC §25), read with
/// their session: only then does the booking form look up whom for.
#[derive(Debug, Clone, Copy)]
pub struct NamedDelegate(pub bool);

impl FromRequest for SignedIn {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, WebError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>().cloned().expect("AppState is registered");
        let token = session_token(req, &state);
        let next = req.uri().path_and_query().map_or("/".to_owned(), |p| p.to_string());
        let req = req.clone();
        Box::pin(async move {
            let login = || {
                WebError::Redirect(format!(
                    "/login?next={}",
                    url::form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>()
                ))
            };
            let token = token.ok_or_else(login)?;
            let mut conn = state.pool.get().await.map_err(DbError::from)?;
            let (user, named) = staff::find_session(&mut conn, &token, state.clock.now()).await?.ok_or_else(login)?;
            // The page's language may be the person's choice (`language::decide`).
            req.extensions_mut().insert(language::PersonChoice(user.language()));
            req.extensions_mut().insert(NamedDelegate(named));
            Ok(SignedIn(user))
        })
    }
}

/// The person behind a signed-in page as the pipeline sees them. Browser
/// forms use the idempotency scope tenant `staff`; the person's digest in
/// the fingerprint keeps everyone's submissions apart.
pub fn principal(state: &AppState, user: &StaffUser) -> crate::command::Principal {
    crate::command::Principal::person(&state.secret, user.id, &user.username, &user.display_name, user.is_admin)
}

/// A form posted by a signed-in person whose CSRF token checked out. Every
/// state-changing form of a signed-in page takes this (or [`AdminForm`]), so
/// no handler can forget the check: sign-in first (a redirect), then the
/// token (403, nothing changed).
pub struct StaffForm {
    pub user: StaffUser,
    pub form: FormData,
}

impl FromRequest for StaffForm {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, WebError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let signed_in = SignedIn::from_request(&req, payload);
        let form = FormData::from_request(&req, payload);
        Box::pin(async move {
            let SignedIn(user) = signed_in.await?;
            let form = form.await?;
            let state = req.app_data::<web::Data<AppState>>().cloned().expect("AppState is registered");
            if !Csrf::verify(&req, &state, &form) {
                return Err(csrf_refused());
            }
            Ok(StaffForm { user, form })
        })
    }
}

/// A [`StaffForm`] of an admin (403 for anyone else).
pub struct AdminForm(pub StaffForm);

impl FromRequest for AdminForm {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, WebError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let form = StaffForm::from_request(req, payload);
        Box::pin(async move {
            let form = form.await?;
            admin::admin_only(&form.user)?;
            Ok(AdminForm(form))
        })
    }
}

/// A signed-in admin viewing an admin page (403 for anyone else).
pub struct SignedInAdmin(pub StaffUser);

impl FromRequest for SignedInAdmin {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, WebError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let signed_in = SignedIn::from_request(req, payload);
        Box::pin(async move {
            let SignedIn(user) = signed_in.await?;
            admin::admin_only(&user)?;
            Ok(SignedInAdmin(user))
        })
    }
}

/// An urlencoded form; repeated names keep every value (`rooms=A&rooms=B`).
pub struct FormData(HashMap<String, Vec<String>>);

impl FormData {
    pub fn get(&self, name: &str) -> &str {
        self.0.get(name).and_then(|v| v.first()).map_or("", String::as_str)
    }

    pub fn all(&self, name: &str) -> Vec<String> {
        self.0.get(name).cloned().unwrap_or_default()
    }
}

impl FromRequest for FormData {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, WebError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let bytes = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            let body = bytes.await.map_err(|_| {
                WebError::message(StatusCode::BAD_REQUEST, "error-bad-request", "error-form-unreadable")
            })?;
            if body.len() > FORM_LIMIT {
                return Err(WebError::message(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "error-too-large",
                    "error-form-too-large",
                ));
            }
            let mut map: HashMap<String, Vec<String>> = HashMap::new();
            for (k, v) in url::form_urlencoded::parse(&body) {
                map.entry(k.into_owned()).or_default().push(v.into_owned());
            }
            Ok(FormData(map))
        })
    }
}

/// The session token the browser sent, if any.
pub fn session_token(req: &HttpRequest, state: &AppState) -> Option<String> {
    crate::transport::session_token(req, &state.transport)
}

/// A cookie with the installation's flags (see [`crate::transport::Transport::cookie`]).
pub fn cookie(state: &AppState, name: &'static str, value: String) -> Cookie<'static> {
    state.transport.cookie(name, value)
}

/// CSRF tokens: the cookie holds a random nonce, forms hold
/// HMAC(secret, nonce, session token). Binding the session means a token
/// taken from another browser, or from before sign-in, is refused even when
/// its nonce cookie is planted; sign-in plants a fresh nonce.
pub struct Csrf {
    pub token: String,
    /// Set when this response must plant a new nonce cookie.
    pub cookie: Option<Cookie<'static>>,
}

fn csrf_mac(secret: &[u8], nonce: &str, session: &str) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("any key length");
    mac.update(b"csrf\x00");
    mac.update(nonce.as_bytes());
    mac.update(b"\x00");
    mac.update(session.as_bytes());
    mac
}

/// A new random nonce as the CSRF cookie, and the token that goes with it.
pub fn fresh_csrf(state: &AppState, session: &str) -> Csrf {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let nonce = hex::encode(bytes);
    let token = hex::encode(csrf_mac(&state.secret, &nonce, session).finalize().into_bytes());
    Csrf { token, cookie: Some(cookie(state, state.transport.csrf_cookie(), nonce)) }
}

impl Csrf {
    /// The token for forms on this page (reusing the browser's nonce).
    pub fn for_render(req: &HttpRequest, state: &AppState) -> Csrf {
        let session = session_token(req, state).unwrap_or_default();
        let nonce = req.cookie(state.transport.csrf_cookie()).map(|c| c.value().to_owned()).filter(|n| n.len() == 64);
        match nonce {
            Some(nonce) => Csrf {
                token: hex::encode(csrf_mac(&state.secret, &nonce, &session).finalize().into_bytes()),
                cookie: None,
            },
            None => fresh_csrf(state, &session),
        }
    }

    /// Whether a posted form's token matches the browser's nonce and session.
    pub fn verify(req: &HttpRequest, state: &AppState, form: &FormData) -> bool {
        let Some(nonce) = req.cookie(state.transport.csrf_cookie()) else { return false };
        let Ok(sent) = hex::decode(form.get("csrf_token")) else { return false };
        let session = session_token(req, state).unwrap_or_default();
        csrf_mac(&state.secret, nonce.value(), &session).verify_slice(&sent).is_ok()
    }

    pub fn attach(self, mut res: HttpResponse) -> HttpResponse {
        if let Some(c) = self.cookie {
            let _ = res.add_cookie(&c);
        }
        res
    }
}

/// The 403 answer to a form without a valid CSRF token; nothing was changed.
pub fn csrf_refused() -> WebError {
    WebError::message(StatusCode::FORBIDDEN, "error-not-done", "error-csrf")
}
