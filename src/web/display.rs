//! Kiosk routes: `GET /display/{code}?token=…` (refreshes itself every 30 s
//! without JavaScript), `POST /display/{code}/book` (`token`, `minutes`) and
//! `POST /display/{code}/check-in` (`token`, `booking_id`). No sign-in: the
//! room's display token authorises each request; the forms carry it (a page
//! of another origin cannot know it) and a per-render idempotency key.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use chrono::{DateTime, Duration, DurationRound, Utc};
use serde::Deserialize;

use crate::catalogue::domain::Room;
use crate::checkin::CheckIn;
use crate::command::Principal;
use crate::db::DbError;
use crate::error::ApiError;
use crate::i18n::I18n;
use crate::idempotency::IdempotencyKey;
use crate::rooms::booking::{self as store, Booking};
use crate::rooms::desks::When;
use crate::rooms::domain::{RequestedRooms, Status, TimeRange, Title};
use crate::rooms::store::CreateBooking;
use crate::state::AppState;
use crate::web::form::status_of;
use crate::web::language::PageI18n;
use crate::web::pages::refusal;
use crate::web::{html_response, pages, FormData, WebError};

/// How often the display redraws itself, in seconds.
const REFRESH_SECONDS: u32 = 30;

/// Lengths offered by "book now".
const BOOK_NOW_MINUTES: [i64; 3] = [15, 30, 60];

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/display/{code}", web::get().to(page))
        .route("/display/{code}/book", web::post().to(book_now))
        .route("/display/{code}/check-in", web::post().to(check_in));
}

/// A booking on the display.
pub struct Shown {
    pub id: i64,
    pub title: String,
    pub organizer: String,
    pub time: String,
    pub can_check_in: bool,
    pub checked_in: bool,
    pub pending: bool,
}

#[derive(Template)]
#[template(path = "display.html")]
pub struct DisplayPage {
    pub i18n: PageI18n,
    pub room: Room,
    pub token: String,
    pub busy: bool,
    /// "until 14:30" or "for the rest of the day".
    pub until: String,
    pub clock: String,
    pub current: Option<Shown>,
    pub next: Vec<Shown>,
    /// Lengths that fit before the next booking.
    pub book_now: Vec<i64>,
    pub idempotency_key: String,
    pub message: Option<pages::Notice>,
}

fn not_found() -> WebError {
    WebError::message(StatusCode::NOT_FOUND, "display-not-found-heading", "display-not-found")
}

/// The room, when `token` opens its display.
async fn authorized(state: &AppState, code: &str, token: &str) -> Result<Room, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    if !crate::display::authorize(&mut conn, code, token).await? {
        return Err(not_found());
    }
    crate::catalogue::store::find(&mut conn, code).await?.ok_or_else(not_found)
}

/// Who acts at the door: the room's display (its own organizer digest; it
/// may check in any booking of its room, and book only its room).
fn display(state: &AppState, i18n: &I18n, room: &Room) -> Principal {
    Principal::display(&state.secret, &room.code, &door_name(i18n, room))
}

/// The display's name as organizer and in history, in the door's language.
fn door_name(i18n: &I18n, room: &Room) -> String {
    i18n.t1("display-organizer", "room", &room.name)
}

fn shown(state: &AppState, b: &Booking, now: DateTime<Utc>) -> Shown {
    let tz = b.zone(state.policy().timezone);
    let (opens, closes) = state.policy().check_in_window(b.starts_at);
    Shown {
        id: b.id,
        title: b.title.clone(),
        organizer: b.shown_organizer().into_owned(),
        time: format!(
            "{}–{}",
            b.starts_at.with_timezone(&tz).format("%H:%M"),
            b.ends_at.with_timezone(&tz).format("%H:%M")
        ),
        can_check_in: b.check_in_required
            && b.status == Status::Confirmed
            && b.checked_in_at.is_none()
            && now >= opens
            && now < closes,
        checked_in: b.checked_in_at.is_some(),
        pending: b.status == Status::Pending,
    }
}

async fn render(
    state: &AppState,
    req: &HttpRequest,
    room: Room,
    token: &str,
    message: Option<pages::Notice>,
    status: StatusCode,
) -> Result<HttpResponse, WebError> {
    let now = state.clock.now();
    // The door shows the room's local time.
    let tz = room.zone();
    let today = now.with_timezone(&tz).date_naive();
    let (_, day_end) = crate::rooms::domain::day_bounds(tz, today);
    let bookings = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        store::list_in_rooms(&mut conn, now, day_end.max(now + Duration::hours(12)), std::slice::from_ref(&room.code))
            .await?
    };
    // The corridor is anyone's (SPEC §26): private bookings show as such.
    let label = PageI18n::of(req).t("private-booking");
    let bookings = crate::rooms::privacy::Reader::anyone().show_all(bookings, &label);
    let live: Vec<&Booking> = bookings.iter().filter(|b| b.is_live()).collect();
    let current = live.iter().find(|b| b.starts_at <= now && now < b.ends_at).copied();
    let upcoming: Vec<&Booking> = live.iter().filter(|b| b.starts_at > now).copied().collect();
    let next_start = upcoming.first().map(|b| b.starts_at);
    let hhmm = |t: DateTime<Utc>| t.with_timezone(&tz).format("%H:%M").to_string();
    let i18n = PageI18n::of(req);
    let until = match (current, next_start) {
        (Some(c), _) => i18n.t1("display-until", "time", hhmm(c.ends_at)),
        (None, Some(n)) if n < day_end => i18n.t1("display-until", "time", hhmm(n)),
        (None, _) => i18n.t("display-rest-of-day"),
    };
    let start = now.duration_trunc(Duration::minutes(1)).unwrap_or(now);
    let book_now = if current.is_some() {
        Vec::new()
    } else {
        BOOK_NOW_MINUTES
            .into_iter()
            .filter(|m| next_start.is_none_or(|n| start + Duration::minutes(*m) <= n))
            .filter(|m| *m <= i64::from(room.max_duration_minutes))
            .collect()
    };
    // The next booking may open its check-in already (10 minutes before).
    let mut next: Vec<Shown> = upcoming.iter().take(3).map(|b| shown(state, b, now)).collect();
    let current = current.map(|b| shown(state, b, now));
    let res_room = room.code.clone();
    let page = DisplayPage {
        i18n,
        busy: current.is_some(),
        until,
        clock: hhmm(now),
        current,
        next: std::mem::take(&mut next),
        book_now,
        idempotency_key: IdempotencyKey::generate().as_str().to_owned(),
        token: token.to_owned(),
        room,
        message,
    };
    let html = page.render().unwrap_or_else(|e| {
        tracing::error!(error = %e, "display template failed");
        String::new()
    });
    // A kiosk redraws itself without JavaScript: the HTTP `Refresh` header
    // (not a `<meta>` refresh, which people reading a page would have to
    // stop; on a door display nobody reads for 30 s). The token is in the
    // address; `Referrer-Policy: no-referrer` keeps it from other sites.
    let mut res = html_response(status, html);
    let target = format!(
        "{REFRESH_SECONDS}; url=/display/{}?token={}",
        res_room,
        url::form_urlencoded::byte_serialize(token.as_bytes()).collect::<String>()
    );
    if let Ok(value) = actix_web::http::header::HeaderValue::from_str(&target) {
        res.headers_mut().insert(actix_web::http::header::HeaderName::from_static("refresh"), value);
    }
    Ok(res)
}

#[derive(Debug, Deserialize)]
pub struct TokenQuery {
    token: Option<String>,
    done: Option<String>,
}

pub async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    code: web::Path<String>,
    query: web::Query<TokenQuery>,
) -> Result<HttpResponse, WebError> {
    let token = query.token.clone().unwrap_or_default();
    let room = authorized(&state, &code, &token).await?;
    let i18n = PageI18n::of(&req);
    let message = match query.done.as_deref() {
        Some("booked") => Some(pages::Notice::ok(i18n.t("day-notice-booked"))),
        Some("checked-in") => Some(pages::Notice::ok(i18n.t("booking-checked-in"))),
        _ => None,
    };
    render(&state, &req, room, &token, message, StatusCode::OK).await
}

fn back(code: &str, token: &str, done: &str) -> WebError {
    let token: String = url::form_urlencoded::byte_serialize(token.as_bytes()).collect();
    WebError::Redirect(format!("/display/{code}?token={token}&done={done}"))
}

fn key_of(form: &FormData) -> Result<IdempotencyKey, ApiError> {
    IdempotencyKey::parse(form.get("idempotency_key")).map_err(|r| ApiError::malformed("idempotency_key", r))
}

/// "Book now": from this minute for 15, 30 or 60 minutes, in the display's name.
pub async fn book_now(
    state: web::Data<AppState>,
    req: HttpRequest,
    code: web::Path<String>,
    form: FormData,
) -> Result<HttpResponse, WebError> {
    let token = form.get("token").to_owned();
    let room = authorized(&state, &code, &token).await?;
    let i18n = PageI18n::of(&req);
    let attempt = async {
        let minutes: i64 = form
            .get("minutes")
            .parse()
            .ok()
            .filter(|m| BOOK_NOW_MINUTES.contains(m))
            .ok_or_else(|| ApiError::malformed("minutes", "must be 15, 30 or 60"))?;
        let now = state.clock.now();
        let start = now.duration_trunc(Duration::minutes(1)).unwrap_or(now);
        let command = CreateBooking {
            title: Title::parse(&i18n.t("display-book-now-title"))?,
            rooms: RequestedRooms::parse(std::slice::from_ref(&room.code))?,
            when: When::Range(TimeRange::new(start, start + Duration::minutes(minutes))?),
            organizer_name: Title::parse_field("organizerName", &door_name(&i18n, &room))?,
            private: false,
        };
        state.pipeline.run(&display(&state, &i18n, &room), Some(key_of(&form)?), &command).await
    };
    match attempt.await {
        Ok(_) => Err(back(&code, &token, "booked")),
        Err(err) => {
            let notice = pages::Notice::error(refusal(&PageI18n::of(&req), &err));
            render(&state, &req, room, &token, Some(notice), status_of(&err)).await
        }
    }
}

/// Check-in at the door, for a booking of this room only.
pub async fn check_in(
    state: web::Data<AppState>,
    req: HttpRequest,
    code: web::Path<String>,
    form: FormData,
) -> Result<HttpResponse, WebError> {
    let token = form.get("token").to_owned();
    let room = authorized(&state, &code, &token).await?;
    let attempt = async {
        let id: i64 =
            form.get("booking_id").parse().map_err(|_| ApiError::malformed("booking_id", "must be a booking id"))?;
        let booking = {
            let mut conn = state.pool.get().await.map_err(DbError::from)?;
            store::find(&mut conn, id).await.map_err(DbError::from)?
        };
        // A booking's rooms never change: checked here, it holds in the command.
        if !booking.is_some_and(|b| b.rooms.contains(&room.code)) {
            return Err(ApiError::not_found("booking"));
        }
        state.pipeline.run(&display(&state, &PageI18n::of(&req), &room), Some(key_of(&form)?), &CheckIn { id }).await
    };
    match attempt.await {
        Ok(_) => Err(back(&code, &token, "checked-in")),
        Err(err) => {
            let notice = pages::Notice::error(refusal(&PageI18n::of(&req), &err));
            render(&state, &req, room, &token, Some(notice), status_of(&err)).await
        }
    }
}
