//! What every page shares: the header, notices, the message page and the
//! renderer. Each page's own template struct lives beside its handler.
//! Every value is escaped by the templates; titles with HTML in them are
//! shown as text.

use askama::Template;

use super::language::PageI18n;
use crate::error::ApiError;

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
        MessageText::Refusal(err) => super::form::refusal(&i18n, err),
    };
    render(&MessagePage { heading: i18n.t(message.heading), text, nav: None, i18n })
}
