//! The day page (`/`, `/rooms?date=&area=`): the rooms of one area as
//! columns, the day's bookings at minute precision, free half hours as links
//! that fill the booking form, and the booking form itself. Two statements
//! per render however many rooms: the session, and the area's bookings (the
//! catalogue comes from its snapshot).

use super::grid::DayGrid;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use chrono::{NaiveDate, Timelike};
use chrono_tz::Tz;
use serde::Deserialize;

use super::form::parse_date;
use super::grid;
use super::language::PageI18n;
use super::pages::{self, nav, Nav, Notice};
use super::{html_response, Csrf, SignedIn, WebError};
use crate::auth::staff::StaffUser;
use crate::catalogue::domain::{Room, RoomCatalog};
use crate::db::DbError;
use crate::rooms::booking as store;
use crate::rooms::desks::Unit;
use crate::state::AppState;

/// Today in `tz` (an area's zone: SPEC §24).
pub fn today(state: &AppState, tz: Tz) -> NaiveDate {
    state.clock.now().with_timezone(&tz).date_naive()
}

/// Links to every area of the catalogue, the shown one marked.
pub fn area_links(catalogue: &RoomCatalog, current: &str, href: impl Fn(&str) -> String) -> Vec<AreaLink> {
    catalogue.areas().into_iter().map(|a| AreaLink { href: href(&a), current: a == current, name: a }).collect()
}

pub fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The room checkboxes of the booking form for an area's rooms.
pub fn room_choices(rooms: &[Room], checked: &[String]) -> Vec<RoomChoice> {
    rooms
        .iter()
        .map(|r| RoomChoice {
            code: r.code.clone(),
            name: r.name.clone(),
            capacity: r.capacity,
            checked: checked.contains(&r.code),
        })
        .collect()
}

/// What the day page shows besides the grid.
pub struct DayView {
    pub date: NaiveDate,
    pub area: Option<String>,
    pub highlight: Option<i64>,
    pub message: Option<Notice>,
    pub form_message: Option<String>,
    pub form: Option<BookingForm>,
    pub status: StatusCode,
}

/// Renders the day page (used for GET and for refused forms).
pub async fn render_day(
    state: &AppState,
    req: &HttpRequest,
    user: &StaffUser,
    view: DayView,
) -> Result<HttpResponse, WebError> {
    let catalogue = state.catalogue.current().await?;
    let area = catalogue.shown_area(view.area.as_deref());
    let mut rooms = catalogue.in_area(&area);
    rooms.truncate(grid::MAX_COLUMNS);
    let codes: Vec<String> = rooms.iter().map(|r| r.code.clone()).collect();
    let date = view.date;
    let tz = catalogue.zone_of_area(&area, state.policy().timezone);
    let (from, to) = crate::rooms::domain::day_bounds(tz, date);
    let bookings = {
        // Right after the person's own change (a notice, a refused form) the
        // primary answers; otherwise a standby may (docs/SCALING.md §2).
        let pool = if view.message.is_some() || view.form_message.is_some() { &state.pool } else { &state.read_pool };
        let mut conn = pool.get().await.map_err(DbError::from)?;
        store::list_in_rooms(&mut conn, from, to, &codes).await?
    };
    let label = PageI18n::of(req).t("private-booking");
    let bookings = super::bookings::page_reader(state, user, req).await?.show_all(bookings, &label);
    let now = state.clock.now().with_timezone(&tz);
    let now_min = match date.cmp(&now.date_naive()) {
        std::cmp::Ordering::Less => Some(1440),
        std::cmp::Ordering::Equal => Some((now.hour() * 60 + now.minute()) as i32),
        std::cmp::Ordering::Greater => None,
    };
    let i18n = PageI18n::of(req);
    let grid = grid::layout(&i18n, &rooms, &bookings, tz, date, view.highlight, now_min);
    let zone_note = super::zones::note(state, &i18n, user, tz);
    let csrf = Csrf::for_render(req, state);
    let mut form =
        view.form.unwrap_or_else(|| BookingForm::blank(date.to_string(), room_choices(&rooms, &[]), area.clone()));
    let named = actix_web::HttpMessage::extensions(req).get::<super::NamedDelegate>().is_some_and(|n| n.0);
    form.for_choices = if !named {
        Vec::new()
    } else {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        crate::people::delegation::people_of(&mut conn, user.id)
            .await?
            .into_iter()
            .map(|p| (p.username, p.display_name))
            .collect()
    };
    let today = today(state, tz);
    let page = DayPage {
        zone_note,
        date_label: i18n.date(date),
        i18n,
        nav: nav(user, &csrf.token),
        csrf: csrf.token.clone(),
        date: date.to_string(),
        prev: date.pred_opt().unwrap_or(date).to_string(),
        next: date.succ_opt().unwrap_or(date).to_string(),
        today: today.to_string(),
        is_today: date == today,
        areas: area_links(&catalogue, &area, |a| format!("/rooms?date={date}&area={}", enc(a))),
        area_q: enc(&area),
        area,
        cols: grid.rooms.len().max(1),
        grid_rows_class: (grid.rows + 59) / 60 * 60,
        grid,
        form,
        message: view.message,
        form_message: view.form_message,
    };
    Ok(csrf.attach(html_response(view.status, pages::render(&page))))
}

#[derive(Debug, Deserialize)]
pub struct DayQuery {
    date: Option<String>,
    area: Option<String>,
    start: Option<String>,
    end: Option<String>,
    room: Option<String>,
    title: Option<String>,
    /// A desk's unit, from a free place of the floor plan (SPEC §28).
    unit: Option<String>,
    booked: Option<i64>,
    cancelled: Option<i64>,
    moved: Option<i64>,
    series: Option<i64>,
    created: Option<usize>,
    skipped: Option<usize>,
}

pub async fn day(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    query: web::Query<DayQuery>,
) -> Result<HttpResponse, WebError> {
    let q = query.into_inner();
    // `/rooms` without a date (or with a bad one) is today (SPEC §19).
    let tz = super::zones::area_zone(&state, q.area.as_deref()).await?;
    let date = q.date.as_deref().and_then(|d| parse_date(d).ok()).unwrap_or_else(|| today(&state, tz));
    let i18n = PageI18n::of(&req);
    let created = q.created.unwrap_or(0);
    let message = match (q.booked, q.moved, q.cancelled) {
        _ if q.series.is_some() => Some(Notice::ok(match q.skipped.unwrap_or(0) {
            0 => i18n.t1("day-notice-series", "count", created),
            n => i18n.t2("day-notice-series-skipped", "count", created, "skipped", n),
        })),
        (Some(_), _, _) => Some(Notice::ok(i18n.t("day-notice-booked"))),
        (_, Some(_), _) => Some(Notice::ok(i18n.t("day-notice-moved"))),
        (_, _, Some(_)) => Some(Notice::ok(i18n.t("day-notice-cancelled"))),
        _ => None,
    };
    // A free cell's link (or a found room) pre-fills the form.
    let form = match (&q.start, &q.unit) {
        (None, None) => None,
        (start, unit) => {
            let catalogue = state.catalogue.current().await?;
            let area = catalogue.shown_area(q.area.as_deref());
            let checked: Vec<String> = q.room.iter().cloned().collect();
            let mut form =
                BookingForm::blank(date.to_string(), room_choices(&catalogue.in_area(&area), &checked), area);
            form.title = q.title.clone().unwrap_or_default();
            form.start = start.clone().unwrap_or_default();
            form.end = q.end.clone().unwrap_or_default();
            form.unit = unit.as_deref().and_then(|u| Unit::parse("unit", u).ok()).map_or("", Unit::as_str).to_owned();
            Some(form)
        }
    };
    let view = DayView {
        date,
        area: q.area,
        highlight: q.booked.or(q.moved),
        message,
        form_message: None,
        form,
        status: StatusCode::OK,
    };
    render_day(&state, &req, &user, view).await
}

/// A link to one area of the catalogue.
pub struct AreaLink {
    pub name: String,
    pub href: String,
    pub current: bool,
}

pub struct RoomChoice {
    pub code: String,
    pub name: String,
    pub capacity: i32,
    pub checked: bool,
}

/// The booking form's values (kept when a submission is refused).
pub struct BookingForm {
    pub title: String,
    pub date: String,
    pub start: String,
    pub end: String,
    pub rooms: Vec<RoomChoice>,
    pub idempotency_key: String,
    /// The area whose rooms the form offers.
    pub area: String,
    /// `none`, `daily`, `weekly`, `biweekly` or `monthly`.
    pub repeat: String,
    pub repeat_until: String,
    /// Dates a series could not have (shown with "book the rest").
    pub conflicts: Vec<String>,
    /// Whom the person may book for (SPEC §25): `(username, name)` of the
    /// people who named them their delegate; empty hides the choice.
    pub for_choices: Vec<(String, String)>,
    /// The chosen one (`for_username`; empty: oneself).
    pub for_username: String,
    /// `private` ticked (SPEC §26).
    pub private: bool,
    /// A desk's `day`, `am` or `pm` (SPEC §28): the form asks for a unit
    /// instead of start and end. Empty for rooms.
    pub unit: String,
}

impl BookingForm {
    /// A blank form for an area's rooms.
    pub fn blank(date: String, rooms: Vec<RoomChoice>, area: String) -> Self {
        BookingForm {
            title: String::new(),
            date,
            start: String::new(),
            end: String::new(),
            rooms,
            idempotency_key: crate::idempotency::IdempotencyKey::generate().as_str().to_owned(),
            area,
            repeat: "none".into(),
            repeat_until: String::new(),
            conflicts: Vec::new(),
            for_choices: Vec::new(),
            for_username: String::new(),
            private: false,
            unit: String::new(),
        }
    }

    /// `(value, catalogue key, chosen)` of each desk unit.
    pub fn units(&self) -> [(&'static str, &'static str, bool); 3] {
        let u = self.unit.as_str();
        [("day", "desk-unit-day", u == "day"), ("am", "desk-unit-am", u == "am"), ("pm", "desk-unit-pm", u == "pm")]
    }

    /// `(value, catalogue key, chosen)` of each way to repeat.
    pub fn repeats(&self) -> [(&'static str, &'static str, bool); 5] {
        let r = self.repeat.as_str();
        [
            ("none", "day-repeat-none", r == "none" || r.is_empty()),
            ("daily", "day-repeat-daily", r == "daily"),
            ("weekly", "day-repeat-weekly", r == "weekly"),
            ("biweekly", "day-repeat-biweekly", r == "biweekly"),
            ("monthly", "day-repeat-monthly", r == "monthly"),
        ]
    }
}

#[derive(Template)]
#[template(path = "day.html")]
pub struct DayPage {
    pub i18n: PageI18n,
    /// Both zones, when the area's is not the viewer's.
    pub zone_note: Option<String>,
    pub nav: Option<Nav>,
    pub csrf: String,
    pub date: String,
    pub date_label: String,
    pub prev: String,
    pub next: String,
    pub today: String,
    pub is_today: bool,
    pub areas: Vec<AreaLink>,
    pub area: String,
    /// `area`, URL-encoded for links.
    pub area_q: String,
    /// Room columns (for the stylesheet's `cols{n}`).
    pub cols: usize,
    pub grid: DayGrid,
    pub grid_rows_class: i32,
    pub form: BookingForm,
    pub message: Option<Notice>,
    pub form_message: Option<String>,
}
