//! Askama page types. Every value is escaped by the templates; titles with
//! HTML in them are shown as text.

use askama::Template;

use super::grid::DayGrid;
use crate::consistency::CheckResult;
use crate::rooms::Booking;

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
    /// Where to go after signing in (already checked to be a local path).
    pub next: String,
    pub message: Option<Notice>,
}

#[derive(Template)]
#[template(path = "account.html")]
pub struct AccountPage {
    pub nav: Option<Nav>,
    pub csrf: String,
    pub username: String,
    pub display_name: String,
    pub feed_url: String,
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
    /// `none`, `daily`, `weekly`, `biweekly` or `monthly`.
    pub repeat: String,
    pub repeat_until: String,
    /// Dates a series could not have (shown with "book the rest").
    pub conflicts: Vec<String>,
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
        }
    }

    pub fn repeats(&self) -> [(&'static str, &'static str, bool); 5] {
        let r = self.repeat.as_str();
        [
            ("none", "반복 없음", r == "none" || r.is_empty()),
            ("daily", "매일", r == "daily"),
            ("weekly", "매주", r == "weekly"),
            ("biweekly", "2주마다", r == "biweekly"),
            ("monthly", "매월", r == "monthly"),
        ]
    }
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
    pub me: i64,
    pub staff: Vec<crate::auth::staff::StaffEntry>,
    pub keys: Vec<crate::auth::keys::KeyEntry>,
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
    /// Live door-display tokens of the room.
    pub display_tokens: i64,
    /// The display address of a token just created (shown once).
    pub new_display: Option<String>,
}

pub struct PendingLine {
    pub booking: Booking,
    pub time: String,
    pub rooms: String,
    pub approve_key: String,
    pub reject_key: String,
}

#[derive(Template)]
#[template(path = "admin_approvals.html")]
pub struct ApprovalsPage {
    pub nav: Option<Nav>,
    pub csrf: String,
    pub pending: Vec<PendingLine>,
    pub message: Option<Notice>,
}

/// One room (or the total) of the utilisation report, formatted.
pub struct ReportLine {
    pub code: String,
    pub name: String,
    pub area: String,
    pub booked_hours: String,
    pub share: String,
    pub bookings: i64,
    pub cancellations: i64,
    pub releases: i64,
}

pub struct ReportView {
    pub period: String,
    pub working_hours: String,
    pub lines: Vec<ReportLine>,
    pub total: ReportLine,
    /// Inline `<svg>` from `reports::chart` (no text of people's in it).
    pub chart: Option<String>,
    pub utilisation_csv: String,
    pub bookings_csv: String,
}

#[derive(Template)]
#[template(path = "admin_reports.html")]
pub struct ReportsPage {
    pub nav: Option<Nav>,
    pub from: String,
    pub to: String,
    pub timezone: String,
    pub message: Option<Notice>,
    pub report: Option<ReportView>,
}

pub struct MyBooking {
    pub id: i64,
    pub title: String,
    pub day: String,
    pub time: String,
    pub rooms: String,
    pub status: &'static str,
    pub repeats: bool,
}

pub struct MySeries {
    pub id: i64,
    pub title: String,
    pub recurrence: String,
    pub rooms: String,
    pub ahead: i64,
    pub next: String,
    pub next_id: Option<i64>,
}

#[derive(Template)]
#[template(path = "my.html")]
pub struct MyPage {
    pub nav: Option<Nav>,
    pub bookings: Vec<MyBooking>,
    pub series: Vec<MySeries>,
}

pub struct WeekEntry {
    pub id: i64,
    pub time: String,
    pub title: String,
    pub pending: bool,
}

pub struct WeekCell {
    pub date: String,
    pub entries: Vec<WeekEntry>,
}

pub struct WeekRow {
    pub code: String,
    pub name: String,
    pub capacity: i32,
    pub cells: Vec<WeekCell>,
}

#[derive(Template)]
#[template(path = "week.html")]
pub struct WeekPage {
    pub nav: Option<Nav>,
    pub label: String,
    /// (date, label, is today) of Monday to Sunday.
    pub days: Vec<(String, String, bool)>,
    pub prev: String,
    pub next: String,
    pub this_week: String,
    pub areas: Vec<AreaLink>,
    pub area: String,
    pub area_q: String,
    pub rows: Vec<WeekRow>,
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
