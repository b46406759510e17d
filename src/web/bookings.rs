//! The booking forms and the booking page. Handlers turn form fields into
//! domain values, run the same booking service as the JSON API, and answer
//! with a redirect (success) or the page with a Korean message and the input
//! kept.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use super::day::{self, enc, room_choices, DayView};
use super::form::{answer, form_key, form_range, korean, parse_date, status_of};
use super::pages::{self, nav, BookingForm, BookingPage, CancelPage, Notice};
use super::{acting, html_response, Csrf, SignedIn, StaffForm, WebError};
use crate::auth::staff::StaffUser;
use crate::db::DbError;
use crate::error::ApiError;
use crate::idempotency::IdempotencyKey;
use crate::rooms::domain::{RequestedRooms, Title};
use crate::rooms::service::{self, CancelBooking};
use crate::rooms::store::{self, Booking, MoveBooking, NewBooking};
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
    let date = b.starts_at.with_timezone(&state.timezone).date_naive();
    let area = enc(&area_of(state, b).await);
    format!("/rooms?date={date}&area={area}&{flag}={id}#booking-{id}", id = b.id)
}

pub async fn create(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
) -> Result<HttpResponse, WebError> {
    let chosen = form.all("rooms");
    let area = form.get("area").to_owned();
    let date = parse_date(form.get("date")).unwrap_or_else(|_| day::today(&state));
    let attempt = async {
        let new = NewBooking {
            title: Title::parse(form.get("title"))?,
            rooms: RequestedRooms::parse(&chosen)?,
            range: form_range(&state, &form)?,
            organizer_name: Title::parse_field("organizerName", &user.display_name)?,
        };
        let key = form_key(&form)?;
        answer::<Booking>(service::create(&state, &acting(&state, &user), key, &new).await?)
    };
    match attempt.await {
        Ok(b) => Err(WebError::Redirect(day_of(&state, &b, "booked").await)),
        Err(err) => {
            let catalogue = state.catalogue.current().await?;
            let shown = day::pick_area(&catalogue, Some(&area));
            let kept = BookingForm {
                title: form.get("title").to_owned(),
                date: form.get("date").to_owned(),
                start: form.get("start").to_owned(),
                end: form.get("end").to_owned(),
                rooms: room_choices(&catalogue.in_area(&shown), &chosen),
                idempotency_key: form.get("idempotency_key").to_owned(),
                area: shown.clone(),
            };
            let view = DayView {
                date,
                area: Some(shown),
                highlight: None,
                message: None,
                form_message: Some(korean(&err)),
                form: Some(kept),
                status: status_of(&err),
            };
            day::render_day(&state, &req, &user, view).await
        }
    }
}

pub async fn load(state: &AppState, id: i64) -> Result<Booking, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    store::find(&mut conn, id).await?.ok_or_else(|| {
        WebError::Page(StatusCode::NOT_FOUND, pages::message_page("예약을 찾을 수 없습니다", "없는 예약입니다."))
    })
}

pub fn may_change(state: &AppState, user: &StaffUser, b: &Booking) -> bool {
    user.is_admin || acting(state, user).digest.as_str() == b.organizer_digest
}

pub fn time_label(state: &AppState, b: &Booking) -> String {
    let tz = state.timezone;
    let (s, e) = (b.starts_at.with_timezone(&tz), b.ends_at.with_timezone(&tz));
    format!("{} {}–{}", s.format("%Y-%m-%d"), s.format("%H:%M"), e.format("%H:%M"))
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
    let tz = state.timezone;
    let (s, e) = (b.starts_at.with_timezone(&tz), b.ends_at.with_timezone(&tz));
    let csrf = Csrf::for_render(req, state);
    let (form_date, form_start, form_end) = kept
        .unwrap_or_else(|| (s.date_naive().to_string(), s.format("%H:%M").to_string(), e.format("%H:%M").to_string()));
    let page = BookingPage {
        nav: nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        back: format!("/rooms?date={}&area={}#booking-{}", s.date_naive(), enc(&area_of(state, &b).await), b.id),
        rooms: b.rooms.join("+"),
        time: time_label(state, &b),
        cancelled: b.cancelled_at.is_some(),
        can_change: b.cancelled_at.is_none() && may_change(state, user, &b),
        idempotency_key: IdempotencyKey::generate().as_str().to_owned(),
        form_date,
        form_start,
        form_end,
        message,
        booking: b,
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

pub async fn detail(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    id: web::Path<i64>,
) -> Result<HttpResponse, WebError> {
    let b = load(&state, id.into_inner()).await?;
    render_detail(&state, &req, &user, b, None, None, StatusCode::OK).await
}

pub async fn move_booking(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
    id: web::Path<i64>,
) -> Result<HttpResponse, WebError> {
    let id = id.into_inner();
    let attempt = async {
        let change = MoveBooking { range: form_range(&state, &form)?, title: None, expected_version: None };
        let key = form_key(&form)?;
        answer::<Booking>(service::move_to(&state, &acting(&state, &user), Some(key), id, &change).await?)
    };
    match attempt.await {
        Ok(b) => Err(WebError::Redirect(day_of(&state, &b, "moved").await)),
        Err(err) => {
            let b = load(&state, id).await?;
            let kept = (form.get("date").to_owned(), form.get("start").to_owned(), form.get("end").to_owned());
            render_detail(&state, &req, &user, b, Some(Notice::error(korean(&err))), Some(kept), status_of(&err)).await
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
    let page = CancelPage {
        nav: nav(&user, &csrf.token),
        csrf: csrf.token.clone(),
        id: b.id,
        title: b.title.clone(),
        time: time_label(&state, &b),
        rooms: b.rooms.join("+"),
        idempotency_key: IdempotencyKey::generate().as_str().to_owned(),
    };
    Ok(csrf.attach(html_response(StatusCode::OK, pages::render(&page))))
}

pub async fn cancel(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
    id: web::Path<i64>,
) -> Result<HttpResponse, WebError> {
    let id = id.into_inner();
    let attempt = async {
        let key = form_key(&form)?;
        let change = CancelBooking { expected_version: None };
        answer::<Booking>(service::cancel(&state, &acting(&state, &user), Some(key), id, change).await?)
    };
    match attempt.await {
        Ok(b) => {
            let date = b.starts_at.with_timezone(&state.timezone).date_naive();
            let area = enc(&area_of(&state, &b).await);
            Err(WebError::Redirect(format!("/rooms?date={date}&area={area}&cancelled={id}")))
        }
        Err(err) => {
            let b = load(&state, id).await?;
            render_detail(&state, &req, &user, b, Some(Notice::error(korean(&err))), None, status_of(&err)).await
        }
    }
}

/// An [`ApiError`] for a page: its status and Korean text.
pub fn refused_page(err: &ApiError) -> WebError {
    WebError::Page(status_of(err), pages::message_page("요청을 처리하지 않았습니다", &korean(err)))
}
