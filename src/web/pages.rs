//! Askama page types. Every value is escaped by the templates; titles with
//! HTML in them are shown as text.

use askama::Template;

use super::grid::DayGrid;
use crate::consistency::CheckResult;
use crate::rooms::store::Booking;

/// The header of a signed-in page.
pub struct Nav {
    pub user: String,
    pub is_admin: bool,
    pub csrf: String,
}

pub fn nav(user: &crate::auth::staff::StaffUser, csrf: &str) -> Option<Nav> {
    Some(Nav { user: user.display_name.clone(), is_admin: user.is_admin, csrf: csrf.to_owned() })
}

/// A link to one area of the catalogue.
pub struct AreaLink {
    pub name: String,
    pub href: String,
    pub current: bool,
}

pub struct Notice {
    pub kind: &'static str,
    pub text: String,
}

impl Notice {
    pub fn ok(text: impl Into<String>) -> Self {
        Notice { kind: "ok", text: text.into() }
    }
    pub fn error(text: impl Into<String>) -> Self {
        Notice { kind: "error", text: text.into() }
    }
}

#[derive(Template)]
#[template(path = "login.html")]
pub struct LoginPage {
    pub nav: Option<Nav>,
    pub csrf: String,
    pub username: String,
    pub message: Option<Notice>,
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
}

#[derive(Template)]
#[template(path = "day.html")]
pub struct DayPage {
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

/// One line of a booking's history as the page shows it.
pub struct HistoryLine {
    pub iso: String,
    pub at: String,
    pub action: &'static str,
    pub actor: String,
    pub detail: String,
}

#[derive(Template)]
#[template(path = "booking.html")]
pub struct BookingPage {
    pub nav: Option<Nav>,
    pub csrf: String,
    pub booking: Booking,
    /// The day page the booking is on.
    pub back: String,
    pub rooms: String,
    pub time: String,
    pub status: &'static str,
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

#[derive(Template)]
#[template(path = "message.html")]
pub struct MessagePage<'a> {
    pub nav: Option<Nav>,
    pub heading: &'a str,
    pub text: &'a str,
}

#[derive(Template)]
#[template(path = "admin_consistency.html")]
pub struct ConsistencyPage {
    pub nav: Option<Nav>,
    pub ok: bool,
    pub checks: Vec<CheckResult>,
}

#[derive(Template)]
#[template(path = "admin_staff.html")]
pub struct StaffPage {
    pub nav: Option<Nav>,
    pub csrf: String,
    pub staff: Vec<crate::auth::staff::StaffUser>,
    pub message: Option<Notice>,
    pub new_key: Option<String>,
}

pub struct FoundRoom {
    pub code: String,
    pub name: String,
    pub area: String,
    pub capacity: i32,
    pub equipment: String,
    /// The booking form, filled in.
    pub book: String,
}

#[derive(Template)]
#[template(path = "find.html")]
pub struct FindPage {
    pub nav: Option<Nav>,
    pub date: String,
    pub start: String,
    pub end: String,
    pub capacity: String,
    pub equipment: String,
    pub area: String,
    pub areas: Vec<String>,
    pub known_equipment: String,
    /// `None` before a search.
    pub results: Option<Vec<FoundRoom>>,
    pub message: Option<String>,
}

/// The values of a room form (as typed, kept when refused).
pub struct RoomForm {
    pub code: String,
    /// The code of an existing room cannot change.
    pub code_locked: bool,
    pub name: String,
    pub area: String,
    pub capacity: String,
    pub equipment: String,
    pub suite: String,
    pub position: String,
    pub check_in_required: bool,
    pub approval_required: bool,
    pub max_duration_minutes: String,
    pub horizon_days: String,
    pub idempotency_key: String,
}

#[derive(Template)]
#[template(path = "admin_rooms.html")]
pub struct RoomsAdminPage {
    pub nav: Option<Nav>,
    pub csrf: String,
    pub rooms: Vec<crate::catalogue::domain::Room>,
    pub message: Option<Notice>,
    pub form: RoomForm,
}

#[derive(Template)]
#[template(path = "admin_room.html")]
pub struct RoomEditPage {
    pub nav: Option<Nav>,
    pub csrf: String,
    pub room: crate::catalogue::domain::Room,
    pub form: RoomForm,
    pub retire_key: String,
    pub message: Option<Notice>,
}

/// Renders a template; a template that cannot render is a bug, shown as a plain 500 text.
pub fn render<T: Template>(page: &T) -> String {
    page.render().unwrap_or_else(|e| {
        tracing::error!(error = %e, "template failed");
        "<!doctype html><title>오류</title><p>페이지를 그리지 못했습니다.</p>".to_owned()
    })
}

pub fn message_page(heading: &str, text: &str) -> String {
    render(&MessagePage { nav: None, heading, text })
}
