//! Staff administration over JSON (SPEC §25): the directory in pages, a new
//! local account, a change of a person — admin keys only, the same commands
//! as `/admin/staff`, writes with `Idempotency-Key` — and a person's export
//! (SPEC §26), recorded as an access record before it is answered.

use actix_web::http::{header, Method};
use actix_web::{web, HttpResponse};
use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;

use super::extract::{AdminCaller, AdminCommand, ApiJson};
use super::openapi::{Api, Op, Tag};
use super::run;
use crate::auth::{staff, PasswordLogin};
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
use crate::i18n::Lang;
use crate::people::commands::CREATE_STAFF;
use crate::people::commands::UPDATE_STAFF;
use crate::people::CreateStaff;
use crate::people::{directory, StaffPage, StaffRecord, UpdateStaff};
use crate::privacy::erase::ERASE_STAFF;
use crate::privacy::export::{self, PersonalExport};
use crate::privacy::{EraseStaff, Erased, Kind};
use crate::state::AppState;

pub fn routes(api: &mut Api) {
    use ErrorCode::*;
    api.route(
        Method::GET,
        "/admin/staff",
        Op::new::<StaffPage>(Tag::Admin, "listStaff", "people in pages of 500 by username", 200).admin(),
        list,
    )
    .route(
        Method::POST,
        "/admin/staff",
        Op::new::<StaffRecord>(Tag::Admin, "createStaff", "add a local account", 201)
            .admin()
            .owner_optional()
            .idempotent(true)
            .body::<NewStaffBody>()
            .errors(&[PasswordLoginOff, UsernameTaken])
            .runs(&CREATE_STAFF),
        create,
    )
    .route(
        Method::PATCH,
        "/admin/staff/{username}",
        Op::new::<StaffRecord>(Tag::Admin, "updateStaff", "change a person", 200)
            .admin()
            .owner_optional()
            .idempotent(true)
            .body::<StaffPatchBody>()
            .errors(&[NotFound])
            .runs(&UPDATE_STAFF),
        update,
    )
    .route(
        Method::POST,
        "/admin/staff/{username}/erase",
        Op::new::<Erased>(Tag::Admin, "eraseStaff", "erase a person: anonymised, future bookings cancelled", 200)
            .admin()
            .owner_optional()
            .idempotent(true)
            .errors(&[NotFound, AlreadyErased, BreakGlassAccount])
            .runs(&ERASE_STAFF),
        erase,
    )
    .route(
        Method::GET,
        "/admin/staff/{username}/export",
        Op::new::<PersonalExport>(
            Tag::Admin,
            "exportStaff",
            "one person's data as one JSON document, streamed (SPEC §26); an access record",
            200,
        )
        .admin()
        .errors(&[NotFound]),
        export_person,
    );
}

/// `GET /api/admin/staff/{username}/export`: an unknown username is 404 and
/// records nothing; a known one is recorded (kind `export`, one person)
/// before a byte of their data is answered.
async fn export_person(
    state: web::Data<AppState>,
    AdminCaller(caller): AdminCaller,
    req: actix_web::HttpRequest,
    username: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get_owned().await.map_err(DbError::from)?;
    let person = directory::any_person(&mut conn, &username).await.map_err(DbError::from)?;
    let person = person.ok_or_else(|| ApiError::not_found("person"))?;
    let actor = super::access_log::key_actor(&caller);
    super::access_log::note(&state, &req, &actor, Kind::Export, Some(person.id), 1).await?;
    let opened = export::open(conn, person.id).await?.ok_or_else(|| ApiError::not_found("person"))?;
    Ok(download(opened))
}

/// The streamed answer of an export, for this route and `/account/export`.
pub fn download(opened: export::Opened) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .insert_header((header::CONTENT_DISPOSITION, "attachment; filename=\"yeyak-export.json\""))
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .streaming(opened.stream().map(|chunk| chunk.map(web::Bytes::from)))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListQuery {
    /// `nextCursor` of the page before.
    pub cursor: Option<String>,
}

async fn list(
    state: web::Data<AppState>,
    AdminCaller(caller): AdminCaller,
    req: actix_web::HttpRequest,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let cursor = query.cursor.as_deref().filter(|c| !c.is_empty());
    if cursor.is_some_and(|c| !staff::valid_username(c)) {
        return Err(ApiError::malformed("cursor", "not a cursor of this list"));
    }
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let page = directory::page(&mut conn, cursor, state.clock.now().date_naive()).await.map_err(DbError::from)?;
    drop(conn);
    let actor = super::access_log::key_actor(&caller);
    super::access_log::note(&state, &req, &actor, Kind::StaffApiList, None, page.staff.len()).await?;
    Ok(HttpResponse::Ok().json(page))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewStaffBody {
    pub username: String,
    pub password: String,
    pub display_name: Option<String>,
    pub email: Option<String>,
    pub admin: Option<bool>,
    /// `ko` or `en`.
    pub language: Option<String>,
}

fn language(raw: Option<&str>) -> Result<Option<Lang>, ApiError> {
    raw.map(|l| Lang::parse_exact(l).ok_or_else(|| ApiError::malformed("language", "ko or en"))).transpose()
}

async fn create(
    state: web::Data<AppState>,
    AdminCommand(cmd): AdminCommand,
    ApiJson(body): ApiJson<NewStaffBody>,
) -> Result<HttpResponse, ApiError> {
    let key = cmd.required_key()?;
    if state.password_login != PasswordLogin::On {
        return Err(ApiError::worded(ErrorCode::PasswordLoginOff, serde_json::json!({ "field": "password" })));
    }
    let username = body.username.trim();
    if !staff::valid_username(username) {
        return Err(ApiError::malformed("username", "1 to 64 of A-Z a-z 0-9 . _ -"));
    }
    let display_name = body.display_name.as_deref().map(str::trim).unwrap_or(username);
    if display_name.is_empty() || display_name.chars().count() > 100 {
        return Err(ApiError::malformed("displayName", "1 to 100 characters"));
    }
    if body.password.chars().count() < crate::web::account::MIN_PASSWORD_CHARS {
        return Err(ApiError::malformed("password", "at least 10 characters"));
    }
    let email = directory::parse_email(body.email.as_deref().unwrap_or(""))
        .map_err(|_| ApiError::malformed("email", "an address like name@example.com"))?;
    let command = CreateStaff {
        username: username.to_owned(),
        display_name: display_name.to_owned(),
        email: email.map(str::to_owned),
        password_hash: state
            .hashing
            .hash(&body.password)
            .await
            .map_err(|_| ApiError::new(ErrorCode::AdmissionRejected, "password hashing is busy; retry shortly"))?,
        is_admin: body.admin.unwrap_or(false),
        language: language(body.language.as_deref())?,
    };
    run(&state.pipeline, &cmd.principal, Some(key), &command).await
}

/// What `PATCH /api/admin/staff/{username}` may change; absent fields stay.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StaffPatchBody {
    pub display_name: Option<String>,
    /// null clears it.
    #[serde(default, deserialize_with = "crate::catalogue::domain::present")]
    pub email: Option<Option<String>>,
    pub admin: Option<bool>,
    pub disabled: Option<bool>,
    pub language: Option<String>,
    /// An IANA zone; null: the installation's.
    #[serde(default, deserialize_with = "crate::catalogue::domain::present")]
    pub time_zone: Option<Option<String>>,
    /// Usernames; the person's delegates become exactly these.
    pub delegates: Option<Vec<String>>,
}

async fn update(
    state: web::Data<AppState>,
    AdminCommand(cmd): AdminCommand,
    username: web::Path<String>,
    ApiJson(body): ApiJson<StaffPatchBody>,
) -> Result<HttpResponse, ApiError> {
    let key = cmd.key.clone();
    let time_zone = match body.time_zone {
        None => None,
        Some(None) => Some(None),
        Some(Some(z)) => Some(Some(z.parse::<chrono_tz::Tz>().map_err(|_| {
            ApiError::worded(ErrorCode::InvalidTimeZone, serde_json::json!({ "field": "timeZone", "timeZone": z }))
        })?)),
    };
    let command = UpdateStaff {
        username: username.into_inner(),
        display_name: body.display_name,
        email: body.email,
        admin: body.admin,
        disabled: body.disabled,
        language: language(body.language.as_deref())?,
        time_zone,
        delegates: body.delegates,
    };
    run(&state.pipeline, &cmd.principal, key, &command).await
}

/// `POST /api/admin/staff/{username}/erase` (SPEC §26): one transaction,
/// which is its own access record.
async fn erase(
    state: web::Data<AppState>,
    AdminCommand(cmd): AdminCommand,
    req: actix_web::HttpRequest,
    username: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let key = cmd.required_key()?;
    let command = EraseStaff {
        username: username.into_inner(),
        actor: super::access_log::key_actor(&cmd.caller),
        address: state.transport.client_ip(&req),
    };
    run(&state.pipeline, &cmd.principal, Some(key), &command).await
}
