//! What a person changes on their account page: their password (the current
//! one required, wrong ones throttled like sign-ins), their calendar feed's
//! address, their language, and app passwords for calendar apps (SPEC §13,
//! §17, §19).

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use crate::auth::app_password;
use crate::auth::commands::ChangeOwnPassword;
use crate::auth::staff::{self};
use crate::auth::throttle;
use crate::db::DbError;
use crate::state::AppState;
use crate::web::language::{self, PageI18n};
use crate::web::pages::Notice;
use crate::web::{session_token, StaffForm, WebError};

use super::page::{render_account, render_account_in};
use super::sign_in::{attempt, busy, throttled, BUSY};

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
        .run(&crate::web::principal(&state, &user), None, &command)
        .await
        .map_err(|e| crate::web::form::refused_page(&e))?;
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
        .run(&crate::web::principal(&state, &user), None, &command)
        .await
        .map_err(|e| crate::web::form::refused_page(&e))?
        .ok_or_else(not_found)?;
    let message = Notice::ok(PageI18n::of(&req).t1("app-password-revoked", "label", revoked.label.as_str()));
    render_account(&state, &req, &user, Some(message), StatusCode::OK).await
}

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
    let command = ChangeOwnPassword { password_hash: place.hash(new).await, keep_session: session_token(&req, &state) };
    state
        .pipeline
        .run(&crate::web::principal(&state, &user), None, &command)
        .await
        .map_err(|e| crate::web::form::refused_page(&e))?;
    let message = Notice::ok(i18n.t("account-password-changed"));
    render_account(&state, &req, &user, Some(message), StatusCode::OK).await
}

/// `POST /account/calendar-token`: the old feed address stops at once.
pub async fn rotate_calendar_token(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, .. }: StaffForm,
) -> Result<HttpResponse, WebError> {
    let principal = crate::web::principal(&state, &user);
    state
        .pipeline
        .run(&principal, None, &crate::calendar::token::RotateToken)
        .await
        .map_err(|e| crate::web::form::refused_page(&e))?;
    let message = Notice::ok(PageI18n::of(&req).t("account-feed-rotated"));
    render_account(&state, &req, &user, Some(message), StatusCode::OK).await
}

/// `POST /account/time-zone` (`time_zone`: an IANA name, or empty for the
/// installation's): the zone the person's pages show beside an area's.
pub async fn choose_time_zone(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
) -> Result<HttpResponse, WebError> {
    let raw = form.get("time_zone").trim();
    let zone = match raw {
        "" => None,
        name => match name.parse::<chrono_tz::Tz>() {
            Ok(z) => Some(z),
            Err(_) => {
                let i18n = PageI18n::of(&req);
                let err = crate::error::ApiError::worded(
                    crate::error::ErrorCode::InvalidTimeZone,
                    serde_json::json!({ "field": "time_zone", "timeZone": name }),
                );
                let message = Notice::error(crate::web::pages::refusal(&i18n, &err));
                return render_account(&state, &req, &user, Some(message), StatusCode::BAD_REQUEST).await;
            }
        },
    };
    let command = crate::auth::commands::SetTimeZone { zone };
    if let Err(err) = state.pipeline.run(&crate::web::principal(&state, &user), None, &command).await {
        let message = Notice::error(crate::web::pages::refusal(&PageI18n::of(&req), &err));
        return render_account(&state, &req, &user, Some(message), crate::web::form::status_of(&err)).await;
    }
    // The page is drawn for the person as they are now.
    let user = user.with_time_zone(zone);
    let message = Notice::ok(PageI18n::of(&req).t("account-zone-saved"));
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
    if let Err(err) = state.pipeline.run(&crate::web::principal(&state, &user), None, &command).await {
        let i18n = PageI18n::of(&req);
        let message = Notice::error(crate::web::pages::refusal(&i18n, &err));
        return render_account(&state, &req, &user, Some(message), crate::web::form::status_of(&err)).await;
    }
    let i18n = PageI18n::in_lang(&req, lang);
    let message = Notice::ok(i18n.t("account-language-saved"));
    let mut res = render_account_in(&state, &req, &user, i18n, lang, Some(message), None, StatusCode::OK).await?;
    let _ = res.add_cookie(&language::remember(&state, lang));
    Ok(res)
}

/// `POST /account/delegates` (`username`): names a delegate (SPEC §25).
pub async fn add_delegate(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
) -> Result<HttpResponse, WebError> {
    let i18n = PageI18n::of(&req);
    let command = crate::people::AddDelegate { username: form.get("username").trim().to_owned() };
    match state.pipeline.run(&crate::web::principal(&state, &user), None, &command).await {
        Ok(added) => {
            let message = Notice::ok(i18n.t1("delegates-added", "name", added.display_name.as_str()));
            render_account(&state, &req, &user, Some(message), StatusCode::OK).await
        }
        Err(err) => {
            let message = Notice::error(crate::web::pages::refusal(&i18n, &err));
            render_account(&state, &req, &user, Some(message), crate::web::form::status_of(&err)).await
        }
    }
}

/// `POST /account/delegates/{username}/remove`: at once, also for their
/// changes in flight (they wait for the removal's row lock, then fail).
pub async fn remove_delegate(
    state: web::Data<AppState>,
    req: HttpRequest,
    username: web::Path<String>,
    StaffForm { user, .. }: StaffForm,
) -> Result<HttpResponse, WebError> {
    let i18n = PageI18n::of(&req);
    let command = crate::people::RemoveDelegate { username: username.into_inner() };
    let removed = state
        .pipeline
        .run(&crate::web::principal(&state, &user), None, &command)
        .await
        .map_err(|e| crate::web::form::refused_page(&e))?;
    let Some(person) = removed else {
        let message = Notice::error(i18n.t("delegates-not-found"));
        return render_account(&state, &req, &user, Some(message), StatusCode::NOT_FOUND).await;
    };
    let message = Notice::ok(i18n.t1("delegates-removed", "name", person.display_name.as_str()));
    render_account(&state, &req, &user, Some(message), StatusCode::OK).await
}
