//! What every page shares: the header, notices, the message page and the
//! renderer. Each page's own template struct lives beside its handler.
//! Every value is escaped by the templates; titles with HTML in them are
//! shown as text.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::web;
use askama::Template;

use super::language::{self, PageI18n};
use crate::error::{ApiError, ErrorCode};
use crate::i18n::I18n;
use crate::state::AppState;

/// The header of a signed-in page.
pub struct Nav {
    pub user: String,
    pub is_admin: bool,
    pub csrf: String,
}

pub fn nav(user: &crate::auth::staff::StaffUser, csrf: &str) -> Option<Nav> {
    Some(Nav { user: user.display_name.clone(), is_admin: user.is_admin, csrf: csrf.to_owned() })
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

/// A message page's words, written when the page's language is known
/// (`web::language` writes the ones an extractor or a fault leaves).
#[derive(Debug, Clone)]
pub struct Message {
    /// The heading's catalogue key.
    pub heading: &'static str,
    pub text: MessageText,
}

#[derive(Debug, Clone)]
pub enum MessageText {
    /// A catalogue key.
    Key(&'static str),
    /// A refused command, in words for people (`form::refusal`).
    Refusal(ApiError),
}

impl Message {
    pub fn new(heading: &'static str, text: &'static str) -> Self {
        Message { heading, text: MessageText::Key(text) }
    }

    pub fn refusal(heading: &'static str, err: ApiError) -> Self {
        Message { heading, text: MessageText::Refusal(err) }
    }
}

#[derive(Template)]
#[template(path = "message.html")]
pub struct MessagePage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub heading: String,
    pub text: String,
}

/// Renders a template; a template that cannot render is a bug, shown as a plain 500 text.
pub fn render<T: Template>(page: &T) -> String {
    page.render().unwrap_or_else(|e| {
        tracing::error!(error = %e, "template failed");
        "<!doctype html><title>yeyak</title><p>500</p>".to_owned()
    })
}

pub fn message_page(i18n: PageI18n, message: &Message) -> String {
    let text = match &message.text {
        MessageText::Key(key) => i18n.t(key),
        MessageText::Refusal(err) => refusal(&i18n, err),
    };
    render(&MessagePage { heading: i18n.t(message.heading), text, nav: None, i18n })
}

/// Outermost middleware of the pages: remembers `?lang=` in its cookie, and
/// writes the message pages that left their text to be written
/// ([`Message`]) in the page's language.
pub async fn in_their_language(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    if !crate::transport::is_page(req.path()) {
        return Ok(next.call(req).await?.map_into_boxed_body());
    }
    let asked = language::asked(req.request());
    let mut res = next.call(req).await?.map_into_boxed_body();
    let message = res.response().extensions().get::<Message>().cloned();
    if let Some(message) = message {
        let i18n = PageI18n::of(res.request());
        let html = message_page(i18n, &message);
        res = res.map_body(|_, _| BoxBody::new(html));
    }
    if let Some(lang) = asked {
        if let Some(state) = res.request().app_data::<web::Data<AppState>>().cloned() {
            let _ = res.response_mut().add_cookie(&language::remember(&state, lang));
        }
    }
    Ok(res)
}

/// What a person reads for a refusal, in the page's language: a form's
/// own words for a field it got wrong, else the catalogue's message for the
/// code, its details as arguments (the check-in window's minutes).
pub fn refusal(i18n: &I18n, err: &ApiError) -> String {
    let field = err.details.get("field").and_then(|f| f.as_str()).unwrap_or("");
    let key = match err.code {
        ErrorCode::MalformedRequest if err.details["rule"] == "desk" => Some("form-field-desk-shape"),
        ErrorCode::MalformedRequest => Some(match field {
            "title" => "form-field-title",
            "rooms" => "form-field-rooms",
            "date" => "form-field-date",
            "start" | "end" => "form-field-times",
            "code" => "form-field-code",
            "name" => "form-field-name",
            "area" => "form-field-area",
            "suite" => "form-field-suite",
            "capacity" => "form-field-capacity",
            "equipment" => "form-field-equipment",
            "position" => "form-field-position",
            "maxDurationMinutes" => "form-field-max-duration",
            "horizonDays" => "form-field-horizon",
            "bufferBeforeMinutes" | "bufferAfterMinutes" => "form-field-buffer",
            "repeat_until" => "form-field-repeat-until",
            "repeat" => "form-field-repeat",
            "unit" => "form-field-unit",
            "kind" => "form-field-kind",
            "assignedTo" => "form-field-assigned-to",
            "x" | "y" => "form-field-place",
            "from" | "to" => "form-field-away",
            "plan" => "form-field-plan",
            _ => "form-field-other",
        }),
        ErrorCode::IdempotencyFingerprintConflict => Some("form-refused-resubmitted"),
        ErrorCode::SeriesConflict => {
            let n = err.details["conflicts"].as_array().map_or(0, Vec::len);
            return i18n.t1("form-refused-series-conflict", "count", n);
        }
        ErrorCode::CommandInProgress => Some("form-refused-in-progress"),
        ErrorCode::AdmissionRejected | ErrorCode::DatabaseUnavailable => Some("form-refused-busy"),
        _ => None,
    };
    match key {
        Some(key) => i18n.t(key),
        None => {
            let code = serde_json::to_value(err.code).ok().and_then(|c| c.as_str().map(str::to_owned));
            code.and_then(|code| crate::i18n::api::message(i18n.lang(), &code, &err.details, &err.message))
                .unwrap_or_else(|| err.message.clone())
        }
    }
}
