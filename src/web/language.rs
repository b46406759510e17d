//! The language of a page (SPEC §19), decided in one place: `?lang=ko|en`
//! (remembered in a cookie), else the remembered choice, else the signed-in
//! person's choice on `/account`, else `Accept-Language` (q-values
//! honoured), else Korean. Every page's template holds a [`PageI18n`] (the
//! base template writes `<html lang>` and the switcher from it, so a page
//! without one does not compile), and the only way to make one is from the
//! request. Message pages made where no template is at hand (a refused
//! form, a database fault, a missing page) are written in the same language
//! by `pages::in_their_language`.

use std::ops::Deref;

use actix_web::http::header;
use actix_web::{web, HttpMessage, HttpRequest};

use crate::i18n::{I18n, Lang};
use crate::state::AppState;

/// The query parameter that picks a language.
pub const QUERY: &str = "lang";

/// The signed-in person's stored choice, left on the request by the
/// sign-in extractor for the page to read.
#[derive(Debug, Clone, Copy)]
pub struct PersonChoice(pub Option<Lang>);

/// `?lang=` when it names one of ours.
pub fn asked(req: &HttpRequest) -> Option<Lang> {
    url::form_urlencoded::parse(req.query_string().as_bytes())
        .find(|(k, _)| k == QUERY)
        .and_then(|(_, v)| Lang::parse_exact(&v))
}

fn cookie_name(req: &HttpRequest) -> &'static str {
    req.app_data::<web::Data<AppState>>().map_or("yeyak_lang", |s| s.transport.lang_cookie())
}

/// The language of this request's page.
pub fn decide(req: &HttpRequest) -> Lang {
    asked(req)
        .or_else(|| req.cookie(cookie_name(req)).and_then(|c| Lang::parse_exact(c.value())))
        .or_else(|| req.extensions().get::<PersonChoice>().and_then(|c| c.0))
        .or_else(|| {
            req.headers()
                .get(header::ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok())
                .and_then(Lang::from_accept_language)
        })
        .unwrap_or(Lang::Ko)
}

/// A page's translator and where its language switch leads.
#[derive(Debug, Clone)]
pub struct PageI18n {
    i18n: I18n,
    /// This page's address without `lang` (the day page for an answer to a form).
    here: String,
}

/// One entry of the language switch.
pub struct Switch {
    pub tag: &'static str,
    /// The language's own name (`한국어`, `English`).
    pub name: &'static str,
    pub href: String,
    pub current: bool,
}

impl PageI18n {
    /// The page of `req` in the language decided for it.
    pub fn of(req: &HttpRequest) -> Self {
        Self::in_lang(req, decide(req))
    }

    /// Korean, for a page written before its request is known (the
    /// middleware writes it again in the page's language).
    pub fn korean() -> Self {
        PageI18n { i18n: I18n::new(Lang::Ko), here: "/".to_owned() }
    }

    /// A page in `lang` whose request is gone (the panic boundary's).
    pub fn plain(lang: Lang) -> Self {
        PageI18n { i18n: I18n::new(lang), here: "/".to_owned() }
    }

    /// The page of `req` in `lang` (the answer to choosing a language).
    pub fn in_lang(req: &HttpRequest, lang: Lang) -> Self {
        let here = if req.method() == actix_web::http::Method::GET {
            let kept: Vec<(String, String)> = url::form_urlencoded::parse(req.query_string().as_bytes())
                .filter(|(k, _)| k != QUERY)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            let query = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(kept).finish();
            if query.is_empty() {
                req.path().to_owned()
            } else {
                format!("{}?{query}", req.path())
            }
        } else {
            "/".to_owned()
        };
        PageI18n { i18n: I18n::new(lang), here }
    }

    /// Both languages, each named in itself, linking to this page in it.
    pub fn switch(&self) -> [Switch; 2] {
        Lang::ALL.map(|lang| {
            let sep = if self.here.contains('?') { '&' } else { '?' };
            Switch {
                tag: lang.tag(),
                name: lang.own_name(),
                href: format!("{}{sep}{QUERY}={}", self.here, lang.tag()),
                current: lang == self.i18n.lang(),
            }
        })
    }
}

impl Deref for PageI18n {
    type Target = I18n;

    fn deref(&self) -> &I18n {
        &self.i18n
    }
}

/// The cookie that remembers a language asked for.
pub fn remember(state: &AppState, lang: Lang) -> actix_web::cookie::Cookie<'static> {
    let mut c = state.transport.cookie(state.transport.lang_cookie(), lang.tag().to_owned());
    c.set_max_age(actix_web::cookie::time::Duration::days(365));
    c
}
