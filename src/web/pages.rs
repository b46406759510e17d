//! What every page shares: the header, notices, the message page and the
//! renderer. Each page's own template struct lives beside its handler.
//! Every value is escaped by the templates; titles with HTML in them are
//! shown as text.

use askama::Template;

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

#[derive(Template)]
#[template(path = "message.html")]
pub struct MessagePage<'a> {
    pub nav: Option<Nav>,
    pub heading: &'a str,
    pub text: &'a str,
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
