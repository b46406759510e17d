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
    pub grid: DayGrid,
    pub grid_rows_class: i32,
    pub form: BookingForm,
    pub message: Option<Notice>,
    pub form_message: Option<String>,
}

#[derive(Template)]
#[template(path = "booking.html")]
pub struct BookingPage {
    pub nav: Option<Nav>,
    pub csrf: String,
    pub booking: Booking,
    pub date: String,
    pub rooms: String,
    pub time: String,
    pub cancelled: bool,
    pub can_change: bool,
    pub idempotency_key: String,
    pub form_date: String,
    pub form_start: String,
    pub form_end: String,
    pub message: Option<Notice>,
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
