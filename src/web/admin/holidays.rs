//! `/admin/holidays` (SPEC §24, §29): the holiday calendars with their
//! days, a form to add one, and per calendar an `.ics` upload that
//! replaces its days — the commands of `/api/holiday-calendars`. A file
//! that is not a holiday calendar changes nothing and says so.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use super::areas::{path_segment, query_value};
use super::upload::AdminUpload;
use crate::auth::staff::StaffUser;
use crate::catalogue::holidays::{self, Days, HolidayCalendar, NewCalendar, NewCalendarBody};
use crate::catalogue::{CreateHolidayCalendar, ReplaceHolidays};
use crate::db::DbError;
use crate::error::ErrorCode;
use crate::idempotency::IdempotencyKey;
use crate::state::AppState;
use crate::web::form::{form_key, status_of};
use crate::web::language::PageI18n;
use crate::web::pages::{self, nav, refusal, Nav, Notice};
use crate::web::{html_response, principal, AdminForm, Csrf, FormData, SignedInAdmin, StaffForm, WebError};

/// A calendar as the page shows it.
pub struct CalendarView {
    pub code: String,
    pub path: String,
    pub name: String,
    /// Each day as `YYYY-MM-DD` and its name.
    pub days: Vec<(String, String)>,
}

/// The add-a-calendar form's values.
pub struct CalendarForm {
    pub code: String,
    pub name: String,
    pub idempotency_key: String,
}

impl CalendarForm {
    fn blank() -> Self {
        CalendarForm { code: String::new(), name: String::new(), idempotency_key: fresh_key() }
    }

    /// What was typed, with a fresh key (the refused form ran nothing).
    fn kept(form: &FormData) -> Self {
        CalendarForm {
            code: form.get("code").to_owned(),
            name: form.get("name").to_owned(),
            idempotency_key: fresh_key(),
        }
    }
}

fn fresh_key() -> String {
    IdempotencyKey::generate().as_str().to_owned()
}

fn view(c: &HolidayCalendar) -> CalendarView {
    CalendarView {
        code: c.code.clone(),
        path: path_segment(&c.code),
        name: c.name.clone(),
        days: c.days.iter().map(|d| (d.date.to_string(), d.name.clone())).collect(),
    }
}

async fn calendars(state: &AppState) -> Result<Vec<HolidayCalendar>, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    Ok(holidays::list(&mut conn).await?)
}

async fn render(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    message: Option<Notice>,
    form: CalendarForm,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let list = calendars(state).await?;
    let csrf = Csrf::for_render(req, state);
    let page = HolidaysPage {
        i18n: PageI18n::of(req),
        nav: nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        calendars: list.iter().map(view).collect(),
        message,
        form,
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

/// After a saved form: which calendar it was.
#[derive(Debug, Default, Deserialize)]
pub struct SavedQuery {
    created: Option<String>,
    replaced: Option<String>,
}

pub async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInAdmin(user): SignedInAdmin,
) -> Result<HttpResponse, WebError> {
    let saved = web::Query::<SavedQuery>::from_query(req.query_string()).map(|q| q.into_inner()).unwrap_or_default();
    let message = match (&saved.created, &saved.replaced) {
        (Some(code), _) | (None, Some(code)) => {
            let i18n = PageI18n::of(&req);
            calendars(&state).await?.iter().find(|c| &c.code == code).map(|c| {
                Notice::ok(if saved.created.is_some() {
                    i18n.t2("holidays-created", "name", &c.name, "code", &c.code)
                } else {
                    i18n.t2("holidays-replaced", "name", &c.name, "count", c.days.len())
                })
            })
        }
        _ => None,
    };
    render(&state, &req, &user, message, CalendarForm::blank(), StatusCode::OK).await
}

/// `POST /admin/holidays`: adds a calendar (`code`, `name`).
pub async fn create(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminForm(StaffForm { user, form }): AdminForm,
) -> Result<HttpResponse, WebError> {
    let attempt = async {
        let name = Some(form.get("name").trim().to_owned()).filter(|n| !n.is_empty());
        let new = NewCalendar::parse(NewCalendarBody { code: form.get("code").to_owned(), name })?;
        let key = form_key(&form)?;
        state.pipeline.run(&principal(&state, &user), Some(key), &CreateHolidayCalendar(new)).await
    };
    match attempt.await {
        Ok(c) => Err(WebError::Redirect(format!("/admin/holidays?created={}", query_value(&c.code)))),
        Err(err) => {
            let i18n = PageI18n::of(&req);
            let text = match err.details.get("field").and_then(|f| f.as_str()) {
                Some("code") if err.code == ErrorCode::MalformedRequest => i18n.t("holidays-field-code"),
                _ => refusal(&i18n, &err),
            };
            render(&state, &req, &user, Some(Notice::error(text)), CalendarForm::kept(&form), status_of(&err)).await
        }
    }
}

/// `POST /admin/holidays/{code}/days`: the uploaded `.ics` file replaces
/// the calendar's days; anything else is refused before any change.
pub async fn replace_days(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminUpload { user, file, .. }: AdminUpload,
    code: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let i18n = PageI18n::of(&req);
    let refused = |key: &str| Some(Notice::error(i18n.t1(key, "code", code.as_str())));
    let days = match file.as_deref() {
        None | Some([]) => Err(refused("holidays-refused-no-file")),
        Some(bytes) => std::str::from_utf8(bytes)
            .ok()
            .and_then(|text| Days::from_ics(text).ok())
            .ok_or_else(|| refused("holidays-refused-file")),
    };
    let days = match days {
        Ok(days) => days,
        Err(message) => {
            return render(&state, &req, &user, message, CalendarForm::blank(), StatusCode::BAD_REQUEST).await
        }
    };
    let command = ReplaceHolidays { code: code.to_string(), days };
    match state.pipeline.run(&principal(&state, &user), None, &command).await {
        Ok(c) => Err(WebError::Redirect(format!("/admin/holidays?replaced={}", query_value(&c.code)))),
        Err(err) => {
            let text = if err.code == ErrorCode::NotFound {
                i18n.t1("holidays-not-found", "code", code.as_str())
            } else {
                refusal(&i18n, &err)
            };
            render(&state, &req, &user, Some(Notice::error(text)), CalendarForm::blank(), status_of(&err)).await
        }
    }
}

#[derive(Template)]
#[template(path = "admin_holidays.html")]
pub struct HolidaysPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub csrf: String,
    pub calendars: Vec<CalendarView>,
    pub message: Option<Notice>,
    pub form: CalendarForm,
}
