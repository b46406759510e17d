//! The day page and the booking forms. Handlers turn form fields into domain
//! values, run the same booking service as the JSON API, and answer with a
//! redirect (success) or the page with a Korean message and the input kept.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{Datelike, Duration, NaiveDate, NaiveTime, Timelike, Weekday};
use serde::Deserialize;

use super::grid;
use super::pages::{self, BookingForm, BookingPage, CancelPage, DayPage, Nav, Notice, RoomChoice};
use super::{csrf_refused, html_response, Csrf, FormData, SignedIn, WebError};
use crate::auth::api_key::Tenant;
use crate::auth::staff::StaffUser;
use crate::auth::OwnerDigest;
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
use crate::idempotency::{IdempotencyKey, Outcome};
use crate::rooms::domain::{TimeRange, Title};
use crate::rooms::service::{self, CancelBooking};
use crate::rooms::store::{self, Actor, Booking, MoveBooking, NewBooking};
use crate::state::AppState;

/// Idempotency scopes of browser forms live under this tenant; the staff
/// member's digest in the fingerprint keeps each person's submissions apart.
fn staff_tenant() -> Tenant {
    Tenant::parse("staff").expect("valid tenant name")
}

fn digest(state: &AppState, user: &StaffUser) -> OwnerDigest {
    OwnerDigest::of_staff(&state.secret, &user.username)
}

pub fn nav(user: &StaffUser, csrf: &str) -> Option<Nav> {
    Some(Nav { user: user.display_name.clone(), is_admin: user.is_admin, csrf: csrf.to_owned() })
}

/// What a person reads for a refusal.
pub fn korean(err: &ApiError) -> String {
    let field = err.details.get("field").and_then(|f| f.as_str()).unwrap_or("");
    match err.code {
        ErrorCode::MalformedRequest => match field {
            "title" => "제목을 1~200자로 적어 주세요.".into(),
            "rooms" => "회의실을 하나 이상 고르세요 (같은 방은 한 번만).".into(),
            "date" => "날짜를 YYYY-MM-DD 형식으로 골라 주세요.".into(),
            "start" | "end" => "시작과 끝 시간을 HH:MM 형식으로 골라 주세요.".into(),
            _ => "입력을 확인해 주세요.".into(),
        },
        ErrorCode::IdempotencyFingerprintConflict => {
            "이 양식은 이미 다른 내용으로 제출되었습니다. 페이지를 새로 고친 뒤 다시 시도해 주세요.".into()
        }
        ErrorCode::CommandInProgress => "같은 요청을 처리하고 있습니다. 잠시 후 새로 고쳐 주세요.".into(),
        ErrorCode::AdmissionRejected | ErrorCode::DatabaseUnavailable => {
            "지금은 요청이 많습니다. 잠시 후 다시 시도해 주세요.".into()
        }
        _ => err.message.clone(),
    }
}

fn weekday(d: Weekday) -> &'static str {
    ["월", "화", "수", "목", "금", "토", "일"][d.num_days_from_monday() as usize]
}

fn parse_date(raw: &str) -> Result<NaiveDate, ApiError> {
    NaiveDate::parse_from_str(raw.trim(), "%Y-%m-%d").map_err(|_| ApiError::malformed("date", "must be YYYY-MM-DD"))
}

fn parse_time(field: &str, raw: &str) -> Result<NaiveTime, ApiError> {
    let raw = raw.trim();
    NaiveTime::parse_from_str(raw, "%H:%M")
        .or_else(|_| NaiveTime::parse_from_str(raw, "%H:%M:%S"))
        .map_err(|_| ApiError::malformed(field, "must be HH:MM"))
}

/// The instants of a form's date, start and end in the configured zone ("24:00" is not a time).
fn form_range(state: &AppState, form: &FormData) -> Result<TimeRange, ApiError> {
    let date = parse_date(form.get("date"))?;
    let start = parse_time("start", form.get("start"))?;
    let end = parse_time("end", form.get("end"))?;
    let at = |t| {
        grid::local_instant(state.timezone, date, t)
            .ok_or_else(|| ApiError::malformed("start", "does not exist on that day"))
    };
    let (s, mut e) = (at(start)?, at(end)?);
    if end == NaiveTime::MIN && start > NaiveTime::MIN {
        e += Duration::days(1); // 00:00 as the end means midnight after.
    }
    TimeRange::new(s, e, &state.rules)
}

#[derive(Debug, Deserialize)]
pub struct DayQuery {
    date: Option<String>,
    start: Option<String>,
    end: Option<String>,
    room: Option<String>,
    booked: Option<i64>,
    cancelled: Option<i64>,
    moved: Option<i64>,
}

fn today(state: &AppState) -> NaiveDate {
    state.clock.now().with_timezone(&state.timezone).date_naive()
}

/// Renders the day page (used for GET and for refused forms).
#[allow(clippy::too_many_arguments)]
async fn render_day(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    date: NaiveDate,
    highlight: Option<i64>,
    message: Option<Notice>,
    form_message: Option<String>,
    form: Option<BookingForm>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let (from, to) = crate::rooms::http::day_bounds(state.timezone, date);
    let bookings = {
        // Right after the person's own write (a notice) or a refused form, the primary answers (docs/SCALING.md §2).
        let pool = if message.is_some() || form_message.is_some() { &state.pool } else { &state.read_pool };
        let mut conn = pool.get().await.map_err(DbError::from)?;
        store::list(&mut conn, from, to, false).await?
    };
    let now = state.clock.now().with_timezone(&state.timezone);
    let now_min = match date.cmp(&now.date_naive()) {
        std::cmp::Ordering::Less => Some(1440),
        std::cmp::Ordering::Equal => Some((now.hour() * 60 + now.minute()) as i32),
        std::cmp::Ordering::Greater => None,
    };
    let grid = grid::layout(state.rooms.rooms(), &bookings, state.timezone, date, highlight, now_min);
    let csrf = Csrf::for_render(req, state);
    let form = form.unwrap_or_else(|| BookingForm {
        title: String::new(),
        date: date.to_string(),
        start: String::new(),
        end: String::new(),
        rooms: state
            .rooms
            .rooms()
            .iter()
            .map(|r| RoomChoice { code: r.code.clone(), name: r.name.clone(), checked: false })
            .collect(),
        idempotency_key: IdempotencyKey::generate().as_str().to_owned(),
    });
    let page = DayPage {
        nav: nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        date: date.to_string(),
        date_label: format!("{}년 {}월 {}일 ({})", date.year(), date.month(), date.day(), weekday(date.weekday())),
        prev: date.pred_opt().unwrap_or(date).to_string(),
        next: date.succ_opt().unwrap_or(date).to_string(),
        today: today(state).to_string(),
        is_today: date == today(state),
        grid_rows_class: (grid.rows + 59) / 60 * 60,
        grid,
        form,
        message,
        form_message,
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

pub async fn day(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    query: web::Query<DayQuery>,
) -> Result<HttpResponse, WebError> {
    let q = query.into_inner();
    let date = q.date.as_deref().and_then(|d| parse_date(d).ok()).unwrap_or_else(|| today(&state));
    let message = match (q.booked, q.moved, q.cancelled) {
        (Some(_), _, _) => Some(Notice::ok("예약했습니다.")),
        (_, Some(_), _) => Some(Notice::ok("예약 시간을 옮겼습니다.")),
        (_, _, Some(_)) => Some(Notice::ok("예약을 취소했습니다. 그 시간은 이제 비어 있습니다.")),
        _ => None,
    };
    // A free cell's link pre-fills the form.
    let form = q.start.as_ref().map(|start| BookingForm {
        title: String::new(),
        date: date.to_string(),
        start: start.clone(),
        end: q.end.clone().unwrap_or_default(),
        rooms: state
            .rooms
            .rooms()
            .iter()
            .map(|r| RoomChoice {
                code: r.code.clone(),
                name: r.name.clone(),
                checked: q.room.as_deref() == Some(r.code.as_str()),
            })
            .collect(),
        idempotency_key: IdempotencyKey::generate().as_str().to_owned(),
    });
    render_day(&state, &req, &user, date, q.booked.or(q.moved), message, None, form, StatusCode::OK).await
}

/// The stored answer of a booking command: the booking, or the refusal.
fn booking_of(outcome: Outcome) -> Result<Booking, ApiError> {
    match outcome {
        Outcome::Fresh(s) | Outcome::Replayed(s) => {
            if (200..300).contains(&s.status) {
                serde_json::from_str::<Booking>(&s.body).map_err(|_| ApiError::internal())
            } else {
                let v: serde_json::Value = serde_json::from_str(&s.body).unwrap_or_default();
                let code: ErrorCode = serde_json::from_value(v["code"].clone()).unwrap_or(ErrorCode::Internal);
                Err(ApiError::new(code, v["message"].as_str().unwrap_or_default()).with_details(v["details"].clone()))
            }
        }
        Outcome::FingerprintConflict => Err(ApiError::new(ErrorCode::IdempotencyFingerprintConflict, "")),
        Outcome::InProgress { .. } => Err(ApiError::new(ErrorCode::CommandInProgress, "")),
    }
}

fn status_of(err: &ApiError) -> StatusCode {
    match err.code.status() {
        s if s.is_server_error() => StatusCode::SERVICE_UNAVAILABLE,
        s => s,
    }
}

fn form_key(form: &FormData) -> Result<IdempotencyKey, ApiError> {
    IdempotencyKey::parse(form.get("idempotency_key")).map_err(|r| ApiError::malformed("idempotency_key", r))
}

pub async fn create(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    form: FormData,
) -> Result<HttpResponse, WebError> {
    if !Csrf::verify(&req, &state, &form) {
        return Err(csrf_refused());
    }
    let chosen = form.all("rooms");
    let kept = BookingForm {
        title: form.get("title").to_owned(),
        date: form.get("date").to_owned(),
        start: form.get("start").to_owned(),
        end: form.get("end").to_owned(),
        rooms: state
            .rooms
            .rooms()
            .iter()
            .map(|r| RoomChoice { code: r.code.clone(), name: r.name.clone(), checked: chosen.contains(&r.code) })
            .collect(),
        idempotency_key: form.get("idempotency_key").to_owned(),
    };
    let date = parse_date(form.get("date")).unwrap_or_else(|_| today(&state));
    let digest = digest(&state, &user);
    let attempt = async {
        let new = NewBooking {
            title: Title::parse(form.get("title"))?,
            rooms: state.rooms.parse_set(&chosen)?,
            range: form_range(&state, &form)?,
            organizer_name: Title::parse_field("organizerName", &user.display_name)?,
            organizer: Some(digest.clone()),
        };
        let key = form_key(&form)?;
        booking_of(service::create(&state, &staff_tenant(), key, &new, &digest).await?)
    };
    match attempt.await {
        Ok(b) => {
            let day = b.starts_at.with_timezone(&state.timezone).date_naive();
            Err(WebError::Redirect(format!("/rooms?date={day}&booked={}#booking-{}", b.id, b.id)))
        }
        Err(err) => {
            render_day(&state, &req, &user, date, None, None, Some(korean(&err)), Some(kept), status_of(&err)).await
        }
    }
}

async fn load(state: &AppState, id: i64) -> Result<Booking, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    store::find(&mut conn, id).await?.ok_or_else(|| {
        WebError::Page(StatusCode::NOT_FOUND, pages::message_page("예약을 찾을 수 없습니다", "없는 예약입니다."))
    })
}

fn may_change(state: &AppState, user: &StaffUser, b: &Booking) -> bool {
    user.is_admin || digest(state, user).as_str() == b.organizer_digest
}

#[allow(clippy::too_many_arguments)]
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
        date: s.date_naive().to_string(),
        rooms: b.rooms.join("+"),
        time: format!("{} {}–{}", s.format("%Y-%m-%d"), s.format("%H:%M"), e.format("%H:%M")),
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

fn actor(state: &AppState, user: &StaffUser) -> Actor {
    Actor { digest: digest(state, user), is_admin: user.is_admin }
}

pub async fn move_booking(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    id: web::Path<i64>,
    form: FormData,
) -> Result<HttpResponse, WebError> {
    if !Csrf::verify(&req, &state, &form) {
        return Err(csrf_refused());
    }
    let id = id.into_inner();
    let attempt = async {
        let change = MoveBooking { range: form_range(&state, &form)?, title: None, expected_version: None };
        let key = form_key(&form)?;
        booking_of(service::move_to(&state, &staff_tenant(), Some(key), id, &change, &actor(&state, &user)).await?)
    };
    match attempt.await {
        Ok(b) => {
            let day = b.starts_at.with_timezone(&state.timezone).date_naive();
            Err(WebError::Redirect(format!("/rooms?date={day}&moved={id}#booking-{id}")))
        }
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
    let tz = state.timezone;
    let csrf = Csrf::for_render(&req, &state);
    let page = CancelPage {
        nav: nav(&user, &csrf.token),
        csrf: csrf.token.clone(),
        id: b.id,
        title: b.title.clone(),
        time: format!(
            "{} {}–{}",
            b.starts_at.with_timezone(&tz).format("%Y-%m-%d"),
            b.starts_at.with_timezone(&tz).format("%H:%M"),
            b.ends_at.with_timezone(&tz).format("%H:%M")
        ),
        rooms: b.rooms.join("+"),
        idempotency_key: IdempotencyKey::generate().as_str().to_owned(),
    };
    Ok(csrf.attach(html_response(StatusCode::OK, pages::render(&page))))
}

pub async fn cancel(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    id: web::Path<i64>,
    form: FormData,
) -> Result<HttpResponse, WebError> {
    if !Csrf::verify(&req, &state, &form) {
        return Err(csrf_refused());
    }
    let id = id.into_inner();
    let attempt = async {
        let key = form_key(&form)?;
        let change = CancelBooking { expected_version: None };
        booking_of(service::cancel(&state, &staff_tenant(), Some(key), id, change, &actor(&state, &user)).await?)
    };
    match attempt.await {
        Ok(b) => {
            let day = b.starts_at.with_timezone(&state.timezone).date_naive();
            Err(WebError::Redirect(format!("/rooms?date={day}&cancelled={id}")))
        }
        Err(err) => {
            let b = load(&state, id).await?;
            render_detail(&state, &req, &user, b, Some(Notice::error(korean(&err))), None, status_of(&err)).await
        }
    }
}
