//! The booking forms and the booking page. Handlers turn form fields into
//! domain values, run the same commands as the JSON API, and answer
//! with a redirect (success) or the page with the refusal in the page's
//! language and the input kept.

use super::day::BookingForm;
use super::history::{history_lines, HistoryLine};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use super::day::{self, enc, room_choices, DayView};
use super::form::{form_key, form_range, parse_date, refusal, status_of};
use super::language::PageI18n;
use super::pages::{self, nav, Nav, Notice};
use super::{html_response, principal, Csrf, FormData, SignedIn, StaffForm, WebError};
use crate::auth::staff::StaffUser;
use crate::checkin::CheckIn;
use crate::db::DbError;
use crate::error::ApiError;
use crate::i18n::I18n;
use crate::idempotency::IdempotencyKey;
use crate::rooms::booking::{self as store, Booking};
use crate::rooms::domain::{RequestedRooms, Status, Title};
use crate::rooms::store::{move_to, CancelBooking, CreateBooking, MoveBooking};
use crate::series::{CancelSeries, CreateSeries, OnConflict};
use crate::state::AppState;

/// The area a booking's rooms are in (for the page it returns to).
async fn area_of(state: &AppState, b: &Booking) -> String {
    let catalogue = state.catalogue.current().await.ok();
    catalogue
        .as_ref()
        .and_then(|c| b.rooms.first().and_then(|code| c.get(code)).map(|r| r.area.clone()))
        .unwrap_or_default()
}

/// The day page of a booking, scrolled to it.
async fn day_of(state: &AppState, b: &Booking, flag: &str) -> String {
    let date = b.starts_at.with_timezone(&state.policy().timezone).date_naive();
    let area = enc(&area_of(state, b).await);
    format!("/rooms?date={date}&area={area}&{flag}={id}#booking-{id}", id = b.id)
}

/// What a booking form asked for: one booking or a series.
enum Booked {
    One(Booking),
    Series(crate::series::store::Created),
}

async fn book(state: &AppState, user: &StaffUser, form: &FormData) -> Result<Booked, ApiError> {
    let title = Title::parse(form.get("title"))?;
    let rooms = RequestedRooms::parse(&form.all("rooms"))?;
    let range = form_range(state, form)?;
    let organizer_name = Title::parse_field("organizerName", &user.display_name)?;
    let key = form_key(form)?;
    let principal = principal(state, user);
    match form.get("repeat") {
        "" | "none" => {
            let command = CreateBooking { title, rooms, range, organizer_name };
            Ok(Booked::One(state.pipeline.run(&principal, Some(key), &command).await?))
        }
        repeat => {
            let until = parse_date(form.get("repeat_until"))
                .map_err(|_| ApiError::malformed("repeat_until", "must be YYYY-MM-DD"))?;
            let command = CreateSeries {
                title,
                rooms,
                first: range,
                recurrence: crate::series::domain::from_form(repeat, until, state.policy().timezone)?,
                on_conflict: if form.get("on_conflict") == "skip" { OnConflict::Skip } else { OnConflict::Fail },
                organizer_name,
            };
            Ok(Booked::Series(state.pipeline.run(&principal, Some(key), &command).await?))
        }
    }
}

/// The dates of a `SERIES_CONFLICT`, as people read them.
fn taken_dates(state: &AppState, i18n: &I18n, err: &ApiError) -> Vec<String> {
    let tz = state.policy().timezone;
    let at = |v: &serde_json::Value| {
        v.as_str().and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok()).map(|t| t.with_timezone(&tz))
    };
    err.details["conflicts"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|c| {
                    let (s, e) = (at(&c["startsAt"])?, at(&c["endsAt"])?);
                    Some(format!("{} {}–{}", i18n.date_short(s.date_naive()), s.format("%H:%M"), e.format("%H:%M")))
                })
                .collect()
        })
        .unwrap_or_default()
}

pub async fn create(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
) -> Result<HttpResponse, WebError> {
    match book(&state, &user, &form).await {
        Ok(Booked::One(b)) => Err(WebError::Redirect(day_of(&state, &b, "booked").await)),
        Ok(Booked::Series(created)) => {
            let (first, series) = (created.created.first(), created.series.id);
            let target = match first {
                Some(b) => day_of(&state, b, "booked").await,
                None => "/rooms?booked=0".to_owned(),
            };
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            Err(WebError::Redirect(format!(
                "{path}&series={series}&created={}&skipped={}#{anchor}",
                created.created.len(),
                created.skipped.len()
            )))
        }
        Err(err) => {
            let date = parse_date(form.get("date")).unwrap_or_else(|_| day::today(&state));
            let catalogue = state.catalogue.current().await?;
            let shown = day::pick_area(&catalogue, Some(form.get("area")));
            // A refused form gets a fresh key, so that the corrected one runs.
            let mut kept = BookingForm::blank(
                form.get("date").to_owned(),
                room_choices(&catalogue.in_area(&shown), &form.all("rooms")),
                shown.clone(),
            );
            kept.title = form.get("title").to_owned();
            kept.start = form.get("start").to_owned();
            kept.end = form.get("end").to_owned();
            kept.repeat = form.get("repeat").to_owned();
            kept.repeat_until = form.get("repeat_until").to_owned();
            let i18n = PageI18n::of(&req);
            kept.conflicts = taken_dates(&state, &i18n, &err);
            let view = DayView {
                date,
                area: Some(shown),
                highlight: None,
                message: None,
                form_message: Some(refusal(&i18n, &err)),
                form: Some(kept),
                status: status_of(&err),
            };
            day::render_day(&state, &req, &user, view).await
        }
    }
}

pub async fn load(state: &AppState, id: i64) -> Result<Booking, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    store::find(&mut conn, id)
        .await?
        .ok_or_else(|| WebError::message(StatusCode::NOT_FOUND, "booking-not-found-heading", "booking-not-found"))
}

/// The organizer rule, as the commands judge it.
pub fn may_change(state: &AppState, user: &StaffUser, b: &Booking) -> bool {
    crate::rooms::access::may_change(&principal(state, user), &b.organizer_digest)
}

pub fn time_label(state: &AppState, i18n: &I18n, b: &Booking) -> String {
    let tz = state.policy().timezone;
    let (s, e) = (b.starts_at.with_timezone(&tz), b.ends_at.with_timezone(&tz));
    format!("{} {}–{}", i18n.date_compact(s.date_naive()), s.format("%H:%M"), e.format("%H:%M"))
}

async fn render_detail(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    b: Booking,
    message: Option<Notice>,
    kept: Option<(String, String, String)>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let tz = state.policy().timezone;
    let (s, e) = (b.starts_at.with_timezone(&tz), b.ends_at.with_timezone(&tz));
    let (history, series) = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        let history = crate::history::list(&mut conn, b.id).await?;
        let series = match b.series_id {
            Some(id) => crate::series::store::find(&mut conn, id)
                .await?
                .map(|s| (s.id, format!("{} ({})", s.title, s.recurrence))),
            None => None,
        };
        (history, series)
    };
    let csrf = Csrf::for_render(req, state);
    let (form_date, form_start, form_end) = kept
        .unwrap_or_else(|| (s.date_naive().to_string(), s.format("%H:%M").to_string(), e.format("%H:%M").to_string()));
    let mine = may_change(state, user, &b);
    let now = state.clock.now();
    let (opens, closes) = state.policy().check_in_window(b.starts_at);
    let i18n = PageI18n::of(req);
    let page = BookingPage {
        nav: nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        back: format!("/rooms?date={}&area={}#booking-{}", s.date_naive(), enc(&area_of(state, &b).await), b.id),
        rooms: b.rooms.join("+"),
        time: time_label(state, &i18n, &b),
        status: super::words::status(&i18n, b.status),
        status_class: b.status.as_str().to_ascii_lowercase(),
        checked_in: b.checked_in_at.map(|t| t.with_timezone(&tz).format("%H:%M").to_string()),
        series,
        can_change: b.is_live() && mine,
        can_check_in: mine
            && b.check_in_required
            && b.status == Status::Confirmed
            && b.checked_in_at.is_none()
            && now >= opens
            && now < closes,
        check_in_key: IdempotencyKey::generate().as_str().to_owned(),
        idempotency_key: IdempotencyKey::generate().as_str().to_owned(),
        form_date,
        form_start,
        form_end,
        message,
        history: history_lines(state, &i18n, history),
        booking: b,
        i18n,
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

#[derive(Debug, serde::Deserialize)]
pub struct DetailQuery {
    checked_in: Option<u8>,
}

pub async fn detail(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    id: web::Path<i64>,
    query: web::Query<DetailQuery>,
) -> Result<HttpResponse, WebError> {
    let b = load(&state, id.into_inner()).await?;
    let message = query.checked_in.map(|_| Notice::ok(PageI18n::of(&req).t("booking-checked-in")));
    render_detail(&state, &req, &user, b, message, None, StatusCode::OK).await
}

pub async fn move_booking(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
    id: web::Path<i64>,
) -> Result<HttpResponse, WebError> {
    let id = id.into_inner();
    let attempt = async {
        let change =
            move_to::Change { range: form_range(&state, &form)?, title: None, expected_version: None, rooms: None };
        let key = form_key(&form)?;
        state.pipeline.run(&principal(&state, &user), Some(key), &MoveBooking { id, change }).await
    };
    match attempt.await {
        Ok(b) => Err(WebError::Redirect(day_of(&state, &b, "moved").await)),
        Err(err) => {
            let b = load(&state, id).await?;
            let kept = (form.get("date").to_owned(), form.get("start").to_owned(), form.get("end").to_owned());
            render_detail(
                &state,
                &req,
                &user,
                b,
                Some(Notice::error(refusal(&PageI18n::of(&req), &err))),
                Some(kept),
                status_of(&err),
            )
            .await
        }
    }
}

pub async fn check_in(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
    id: web::Path<i64>,
) -> Result<HttpResponse, WebError> {
    let id = id.into_inner();
    let attempt = async {
        let key = form_key(&form)?;
        state.pipeline.run(&principal(&state, &user), Some(key), &CheckIn { id }).await
    };
    match attempt.await {
        Ok(b) => Err(WebError::Redirect(format!("/bookings/{}?checked_in=1", b.id))),
        Err(err) => {
            let b = load(&state, id).await?;
            render_detail(
                &state,
                &req,
                &user,
                b,
                Some(Notice::error(refusal(&PageI18n::of(&req), &err))),
                None,
                status_of(&err),
            )
            .await
        }
    }
}

pub async fn confirm_cancel(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    id: web::Path<i64>,
) -> Result<HttpResponse, WebError> {
    let b = load(&state, id.into_inner()).await?;
    let csrf = Csrf::for_render(&req, &state);
    let i18n = PageI18n::of(&req);
    let page = CancelPage {
        time: time_label(&state, &i18n, &b),
        i18n,
        nav: nav(&user, &csrf.token),
        csrf: csrf.token.clone(),
        id: b.id,
        title: b.title.clone(),
        rooms: b.rooms.join("+"),
        idempotency_key: IdempotencyKey::generate().as_str().to_owned(),
        in_series: b.series_id.is_some(),
    };
    Ok(csrf.attach(html_response(StatusCode::OK, pages::render(&page))))
}

/// Cancels one booking, or (`scope` = `following` / `series`) its series
/// from this occurrence on / from now on.
pub async fn cancel(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
    id: web::Path<i64>,
) -> Result<HttpResponse, WebError> {
    let id = id.into_inner();
    let principal = principal(&state, &user);
    let attempt = async {
        let key = form_key(&form)?;
        let scope = match form.get("scope") {
            "" | "one" => None,
            "following" => Some(true),
            "series" => Some(false),
            _ => return Err(ApiError::malformed("scope", "must be one, following or series")),
        };
        let b = match scope {
            None => None,
            Some(following) => load(&state, id).await.ok().filter(|b| b.series_id.is_some()).map(|b| (b, following)),
        };
        match b {
            Some((b, following)) => {
                let series_id = b.series_id.unwrap_or_default();
                let from = following.then_some(b.starts_at);
                state.pipeline.run(&principal, Some(key), &CancelSeries { id: series_id, from }).await?;
                Ok(b)
            }
            None => {
                let command = CancelBooking { id, expected_version: None };
                state.pipeline.run(&principal, Some(key), &command).await
            }
        }
    };
    match attempt.await {
        Ok(b) => {
            let date = b.starts_at.with_timezone(&state.policy().timezone).date_naive();
            let area = enc(&area_of(&state, &b).await);
            Err(WebError::Redirect(format!("/rooms?date={date}&area={area}&cancelled={id}")))
        }
        Err(err) => {
            let b = load(&state, id).await?;
            render_detail(
                &state,
                &req,
                &user,
                b,
                Some(Notice::error(refusal(&PageI18n::of(&req), &err))),
                None,
                status_of(&err),
            )
            .await
        }
    }
}

/// An [`ApiError`] for a page: its status and text, in the page's language.
pub fn refused_page(err: &ApiError) -> WebError {
    WebError::Message(status_of(err), pages::Message::refusal("error-not-done", err.clone()))
}

#[derive(Template)]
#[template(path = "booking.html")]
pub struct BookingPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub csrf: String,
    pub booking: Booking,
    /// The day page the booking is on.
    pub back: String,
    pub rooms: String,
    pub time: String,
    pub status: String,
    pub status_class: String,
    pub checked_in: Option<String>,
    /// The series (id, description) of an occurrence.
    pub series: Option<(i64, String)>,
    pub can_change: bool,
    pub can_check_in: bool,
    pub check_in_key: String,
    pub idempotency_key: String,
    pub form_date: String,
    pub form_start: String,
    pub form_end: String,
    pub message: Option<Notice>,
    pub history: Vec<HistoryLine>,
}

#[derive(Template)]
#[template(path = "cancel.html")]
pub struct CancelPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub csrf: String,
    pub id: i64,
    pub title: String,
    pub time: String,
    pub rooms: String,
    pub idempotency_key: String,
    /// An occurrence of a series: offer this one / following / whole series.
    pub in_series: bool,
}
