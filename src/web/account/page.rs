//! The account page (SPEC §13, §16, §17, §19): the person's calendar feed
//! address, their app passwords (a new one shown once) and their language,
//! drawn again with a notice after each change.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use crate::auth::app_password;
use crate::auth::staff::{self, StaffUser};
use crate::db::DbError;
use crate::state::AppState;
use crate::web::language::PageI18n;
use crate::web::pages::{self, Nav, Notice};
use crate::web::{html_response, Csrf, SignedIn, WebError};

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

pub(super) async fn render_account(
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
pub(super) async fn render_account_in(
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
    let delegates = crate::people::delegation::delegates_of(&mut conn, user.id).await?;
    let delegating_for = crate::people::delegation::people_of(&mut conn, user.id).await?;
    let tz = user.zone(state.policy().timezone);
    let today = state.clock.now().with_timezone(&tz).date_naive();
    let away = crate::auth::away::of_person(&mut conn, user.id, today).await?;
    drop(conn);
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
        time_zone: user.chosen_zone().unwrap_or_default().to_owned(),
        home_zone: state.policy().timezone.name(),
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
        delegates,
        delegating_for,
        away: away.into_iter().map(|a| (a.from.to_string(), a.to.to_string())).collect(),
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

/// `GET /account`: the person's account page.
pub async fn account(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
) -> Result<HttpResponse, WebError> {
    render_account(&state, &req, &user, None, StatusCode::OK).await
}

/// A company account asking to change a password it does not have.
#[derive(Template)]
#[template(path = "account.html")]
pub struct AccountPage {
    pub i18n: PageI18n,
    /// The language the form shows chosen: the person's, else the page's.
    pub language: &'static str,
    /// The person's own zone, empty for the installation's.
    pub time_zone: String,
    pub home_zone: &'static str,
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
    /// Who may book for this person (SPEC §25), and for whom they may.
    pub delegates: Vec<crate::people::delegation::Person>,
    pub delegating_for: Vec<crate::people::delegation::Person>,
    /// Away days from today on (SPEC §28), `from` and `to` inclusive.
    pub away: Vec<(String, String)>,
}

/// An app password as the account page lists it (times in the configured zone).
pub struct AppPasswordRow {
    pub id: i64,
    pub label: String,
    pub created: String,
    pub last_used: Option<String>,
    pub revoked: bool,
}
