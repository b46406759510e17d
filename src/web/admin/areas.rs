//! `/admin/areas` (SPEC §24, §29): the areas with their time zone, working
//! hours and holiday calendar — list, add, edit. Every change runs the same
//! command as `POST`/`PATCH /api/areas`; a saved form answers 303 back to
//! the list, which names what was saved.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

pub use super::area_form::{area_patch, new_area, AreaForm, COMMON_ZONES};
use crate::auth::staff::StaffUser;
use crate::catalogue::areas::{self, Area};
use crate::catalogue::holidays::{self, HolidayCalendar};
use crate::catalogue::hours::WorkingHours;
use crate::catalogue::{CreateArea, PatchArea};
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;
use crate::web::form::{form_key, status_of};
use crate::web::language::PageI18n;
use crate::web::pages::{self, nav, Nav, Notice};
use crate::web::{html_response, principal, AdminForm, Csrf, SignedInAdmin, StaffForm, WebError};

/// A code as one path segment (area and calendar codes may hold any
/// printable character, `/` and `?` too).
pub fn path_segment(code: &str) -> String {
    percent_encoding::utf8_percent_encode(code, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// A code as a query value.
pub fn query_value(code: &str) -> String {
    url::form_urlencoded::byte_serialize(code.as_bytes()).collect()
}

/// What a person reads for a refused area form: the form's own words for
/// the fields only it has, else what every form says.
fn refusal(i18n: &PageI18n, err: &ApiError) -> String {
    if err.code == ErrorCode::MalformedRequest {
        match err.details.get("field").and_then(|f| f.as_str()) {
            Some("working_hours") => return i18n.t("areas-field-working-hours"),
            Some("holidayCalendar") => return i18n.t("areas-field-holiday-calendar"),
            Some("code") => return i18n.t("areas-field-code"),
            _ => {}
        }
    }
    pages::refusal(i18n, err)
}

/// An area as a row of the list.
pub struct AreaRow {
    pub code: String,
    pub path: String,
    pub name: String,
    pub time_zone: String,
    /// Each open day as `mon 09:00-18:00`; none when closed every day.
    pub hours: Vec<String>,
    /// The holiday calendar's name, if any.
    pub calendar: Option<String>,
    pub restrict_to_working_hours: bool,
    pub closed_on_holidays: bool,
    pub position: i32,
}

fn row(area: &Area, calendars: &[HolidayCalendar]) -> AreaRow {
    let calendar = area.holiday_calendar.as_ref().map(|code| {
        calendars.iter().find(|c| &c.code == code).map_or_else(|| code.clone(), |c| format!("{} ({})", c.name, c.code))
    });
    AreaRow {
        code: area.code.clone(),
        path: path_segment(&area.code),
        name: area.name.clone(),
        time_zone: area.time_zone.clone(),
        hours: WorkingHours::from_json(&area.working_hours).to_text().split(", ").map(str::to_owned).collect(),
        calendar,
        restrict_to_working_hours: area.restrict_to_working_hours,
        closed_on_holidays: area.closed_on_holidays,
        position: area.position,
    }
}

/// The areas and the calendars an area may name.
async fn load(state: &AppState) -> Result<(Vec<Area>, Vec<HolidayCalendar>), WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let list = areas::list(&mut conn, state.policy().timezone).await?;
    let calendars = holidays::list(&mut conn).await?;
    Ok((list, calendars))
}

fn choices(calendars: &[HolidayCalendar]) -> Vec<(String, String)> {
    calendars.iter().map(|c| (c.code.clone(), c.name.clone())).collect()
}

async fn render_list(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    message: Option<Notice>,
    form: Option<AreaForm>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let (list, calendars) = load(state).await?;
    let csrf = Csrf::for_render(req, state);
    let page = AreasPage {
        i18n: PageI18n::of(req),
        nav: nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        areas: list.iter().map(|a| row(a, &calendars)).collect(),
        calendars: choices(&calendars),
        zones: COMMON_ZONES,
        message,
        form: form.unwrap_or_else(|| AreaForm::blank(state.policy().timezone)),
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

/// After a saved form: which area it was.
#[derive(Debug, Default, Deserialize)]
pub struct SavedQuery {
    created: Option<String>,
    updated: Option<String>,
}

pub async fn list(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInAdmin(user): SignedInAdmin,
) -> Result<HttpResponse, WebError> {
    let saved = web::Query::<SavedQuery>::from_query(req.query_string()).map(|q| q.into_inner()).unwrap_or_default();
    let message = match (&saved.created, &saved.updated) {
        (Some(code), _) | (None, Some(code)) => {
            let (list, _) = load(&state).await?;
            let key = if saved.created.is_some() { "areas-created" } else { "areas-updated" };
            list.iter()
                .find(|a| &a.code == code)
                .map(|a| Notice::ok(PageI18n::of(&req).t2(key, "name", &a.name, "code", &a.code)))
        }
        _ => None,
    };
    render_list(&state, &req, &user, message, None, StatusCode::OK).await
}

fn saved(key: &str, code: &str) -> WebError {
    WebError::Redirect(format!("/admin/areas?{key}={}", query_value(code)))
}

pub async fn create(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(StaffForm { user, form }): AdminForm,
) -> Result<HttpResponse, WebError> {
    let attempt = async {
        let new = new_area(&form)?;
        let key = form_key(&form)?;
        state.pipeline.run(&principal(&state, &user), Some(key), &CreateArea(new)).await
    };
    match attempt.await {
        Ok(area) => Err(saved("created", &area.code)),
        Err(err) => {
            let notice = Notice::error(refusal(&PageI18n::of(&req), &err));
            render_list(&state, &req, &user, Some(notice), Some(AreaForm::kept(&form)), status_of(&err)).await
        }
    }
}

async fn find(state: &AppState, code: &str) -> Result<(Area, Vec<HolidayCalendar>), WebError> {
    let (list, calendars) = load(state).await?;
    let area = list
        .into_iter()
        .find(|a| a.code == code)
        .ok_or_else(|| WebError::message(StatusCode::NOT_FOUND, "areas-not-found-heading", "areas-not-found"))?;
    Ok((area, calendars))
}

pub(super) async fn render_edit(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    code: &str,
    form: Option<AreaForm>,
    message: Option<Notice>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let (area, calendars) = find(state, code).await?;
    let form = form.unwrap_or_else(|| AreaForm::of(&area));
    let csrf = Csrf::for_render(req, state);
    let page = AreaEditPage {
        i18n: PageI18n::of(req),
        nav: nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        area: row(&area, &calendars),
        calendars: choices(&calendars),
        zones: COMMON_ZONES,
        message,
        form,
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

pub async fn edit(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInAdmin(user): SignedInAdmin,
    code: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    render_edit(&state, &req, &user, &code, None, None, StatusCode::OK).await
}

pub async fn update(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(StaffForm { user, form }): AdminForm,
    code: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let attempt = async {
        let patch = area_patch(&form)?;
        let key = form_key(&form)?;
        let command = PatchArea { code: code.to_string(), patch };
        state.pipeline.run(&principal(&state, &user), Some(key), &command).await
    };
    match attempt.await {
        Ok(area) => Err(saved("updated", &area.code)),
        Err(err) => {
            let mut kept = AreaForm::kept(&form);
            (kept.code, kept.code_locked) = (code.to_string(), true);
            let notice = Notice::error(refusal(&PageI18n::of(&req), &err));
            render_edit(&state, &req, &user, &code, Some(kept), Some(notice), status_of(&err)).await
        }
    }
}

#[derive(Template)]
#[template(path = "admin_areas.html")]
pub struct AreasPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub csrf: String,
    pub areas: Vec<AreaRow>,
    /// Code and name of each holiday calendar.
    pub calendars: Vec<(String, String)>,
    pub zones: &'static [&'static str],
    pub message: Option<Notice>,
    pub form: AreaForm,
}

#[derive(Template)]
#[template(path = "admin_area.html")]
pub struct AreaEditPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub csrf: String,
    pub area: AreaRow,
    pub calendars: Vec<(String, String)>,
    pub zones: &'static [&'static str],
    pub message: Option<Notice>,
    pub form: AreaForm,
}
