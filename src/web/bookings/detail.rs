//! The booking page (SPEC §5, §11, §12): the booking with its history, and
//! the forms that move it or check in to it.

use crate::web::history::{history_lines, HistoryLine};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

use super::acting;
use super::found::{area_of, day_of, load, time_label};
use crate::auth::staff::StaffUser;
use crate::checkin::CheckIn;
use crate::db::DbError;
use crate::idempotency::IdempotencyKey;
use crate::rooms::booking::Booking;
use crate::rooms::domain::Status;
use crate::rooms::store::{move_to, MoveBooking};
use crate::state::AppState;
use crate::web::day::enc;
use crate::web::form::{form_key, form_range, status_of};
use crate::web::language::PageI18n;
use crate::web::pages::refusal;
use crate::web::pages::{self, nav, Nav, Notice};
use crate::web::{html_response, Csrf, SignedIn, StaffForm, WebError};

pub(super) async fn render_detail(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    b: Booking,
    message: Option<Notice>,
    kept: Option<(String, String, String)>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let tz = b.zone(state.policy().timezone);
    let (s, e) = (b.starts_at.with_timezone(&tz), b.ends_at.with_timezone(&tz));
    // A private booking this reader may not see: its label and times only,
    // no history (its entries name titles and people; SPEC §26).
    let reader = super::acting::page_reader(state, user, req).await?;
    let hidden = !reader.sees(b.private, &b.organizer_digest);
    let b = reader.show(b, &PageI18n::of(req).t("private-booking"));
    let (history, series) = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        let history = if hidden { Vec::new() } else { crate::history::list(&mut conn, b.id).await? };
        let series = match b.series_id {
            Some(id) => crate::series::store::find(&mut conn, id)
                .await?
                .map(|s| (s.id, if hidden { s.recurrence } else { format!("{} ({})", s.title, s.recurrence) })),
            None => None,
        };
        (history, series)
    };
    // An admin reading another person's booking history (SPEC §26).
    if let Some(person) = b.organizer_staff_id.filter(|p| user.is_admin && *p != user.id) {
        crate::web::admin::access_log::note(state, req, user, crate::privacy::Kind::History, Some(person), 1).await?;
    }
    let csrf = Csrf::for_render(req, state);
    let (form_date, form_start, form_end) = kept
        .unwrap_or_else(|| (s.date_naive().to_string(), s.format("%H:%M").to_string(), e.format("%H:%M").to_string()));
    let acting_as = acting::for_booking(state, user, &b).await.map_err(|e| crate::web::form::refused_page(&e))?;
    let mine = crate::rooms::access::may_change(&acting_as, &b.organizer_digest);
    let now = state.clock.now();
    let (opens, closes) = state.policy().check_in_window(b.starts_at);
    let i18n = PageI18n::of(req);
    let page = BookingPage {
        nav: nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        back: format!("/rooms?date={}&area={}#booking-{}", s.date_naive(), enc(&area_of(state, &b).await), b.id),
        rooms: b.rooms.join("+"),
        time: time_label(state, &i18n, &b, Some(user.zone(state.policy().timezone))),
        status: crate::web::words::status(&i18n, b.status),
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
        history: history_lines(tz, &i18n, history),
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
    // The new times are read in the booking's area's zone.
    let before = load(&state, id).await?;
    let tz = before.zone(state.policy().timezone);
    let attempt = async {
        let change = move_to::Change {
            range: form_range(tz, &form)?,
            title: None,
            expected_version: None,
            rooms: None,
            private: None,
        };
        let key = form_key(&form)?;
        let principal = acting::for_booking(&state, &user, &before).await?;
        state.pipeline.run(&principal, Some(key), &MoveBooking { id, change }).await
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
        let principal = acting::for_booking_id(&state, &user, id).await?;
        state.pipeline.run(&principal, Some(key), &CheckIn { id }).await
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
