//! Korean and English (SPEC §19): the message catalogues (Project Fluent,
//! one directory per language under `src/i18n/locales/`, one file per area:
//! `api.ftl`, `pages.ftl`, `mail.ftl`, `dates.ftl`, `dav.ftl`; compiled in), the
//! choice of a language from what a request says, and [`I18n`], the
//! translator pages, mail and invitations write their texts with. Korean is
//! the default; a key missing from either catalogue, or used in the sources
//! and missing from one, fails `tests/api/languages.rs`.

pub mod api;
mod translator;

pub use translator::{Arg, I18n, MISSING};

use std::borrow::Cow;
use std::collections::HashMap;

use fluent_templates::fluent_bundle::FluentValue;
use fluent_templates::LanguageIdentifier;

fluent_templates::static_loader! {
    static CATALOGUES = {
        locales: "./src/i18n/locales",
        fallback_language: "ko",
        // No Unicode isolation marks around arguments: the texts go into
        // JSON, mail headers and iCalendar, where they would be noise.
        customise: |bundle| bundle.set_use_isolating(false),
    };
}

/// A language yeyak speaks; Korean unless someone asks otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Lang {
    #[default]
    Ko,
    En,
}

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::Ko, Lang::En];

    /// The BCP 47 tag (`<html lang>`, `Content-Language`).
    pub fn tag(self) -> &'static str {
        match self {
            Lang::Ko => "ko",
            Lang::En => "en",
        }
    }

    /// `ko`, `en`, `en-GB`, `ko-KR`, … (case-insensitive); anything else is none of ours.
    pub fn parse(tag: &str) -> Option<Lang> {
        let primary = tag.trim().split(['-', '_']).next().unwrap_or_default();
        if primary.eq_ignore_ascii_case("ko") {
            Some(Lang::Ko)
        } else if primary.eq_ignore_ascii_case("en") {
            Some(Lang::En)
        } else {
            None
        }
    }

    /// `ko` or `en` exactly, as `?lang=`, the cookie and the account form say it.
    pub fn parse_exact(tag: &str) -> Option<Lang> {
        Lang::ALL.into_iter().find(|l| l.tag() == tag)
    }

    /// The language's name in itself, for the switch (`한국어`, `English`).
    pub fn own_name(self) -> &'static str {
        match self {
            Lang::Ko => "한국어",
            Lang::En => "English",
        }
    }

    /// The catalogue's identifier, parsed once (every text looks it up).
    fn id(self) -> &'static LanguageIdentifier {
        static KO: std::sync::LazyLock<LanguageIdentifier> = std::sync::LazyLock::new(|| "ko".parse().expect("ko"));
        static EN: std::sync::LazyLock<LanguageIdentifier> = std::sync::LazyLock::new(|| "en".parse().expect("en"));
        match self {
            Lang::Ko => &KO,
            Lang::En => &EN,
        }
    }

    /// The first of our languages an `Accept-Language` header prefers
    /// (RFC 9110 §12.5.4: highest q first, header order among equals;
    /// `q=0` means "not this"); `None` when it names neither.
    pub fn from_accept_language(header: &str) -> Option<Lang> {
        let mut best: Option<(u16, Lang)> = None;
        for item in header.split(',') {
            let mut parts = item.split(';');
            let Some(lang) = parts.next().and_then(Lang::parse) else { continue };
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q=").or_else(|| p.trim().strip_prefix("Q=")))
                .next()
                .map_or(Some(1000), quality);
            let Some(q) = q else { continue };
            if q > 0 && best.is_none_or(|(b, _)| q > b) {
                best = Some((q, lang));
            }
        }
        best.map(|(_, lang)| lang)
    }
}

/// A q-value in thousandths; `None` when it is not one.
fn quality(text: &str) -> Option<u16> {
    let value: f32 = text.trim().parse().ok()?;
    (0.0..=1.0).contains(&value).then(|| (value * 1000.0).round() as u16)
}

/// The text of `key` in `lang` with `args`, or `None` when the catalogue
/// lacks the key or the text needs an argument that was not given.
pub fn text(lang: Lang, key: &str, args: &HashMap<Cow<'static, str>, FluentValue<'_>>) -> Option<String> {
    let text = CATALOGUES.lookup_single_language(lang.id(), key, Some(args)).ok()?;
    // Fluent writes a missing argument as `{$name}`.
    (!text.contains("{$")).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_language_honours_q_values_and_order() {
        let cases = [
            ("en", Some(Lang::En)),
            ("en-US,en;q=0.9,ko;q=0.8", Some(Lang::En)),
            ("ko-KR,ko;q=0.9,en-US;q=0.8", Some(Lang::Ko)),
            ("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7", Some(Lang::En)),
            ("en;q=0.5, ko;q=0.9", Some(Lang::Ko)),
            ("en;q=0, ko;q=0.1", Some(Lang::Ko)),
            ("en;q=0", None),
            ("fr, de", None),
            ("*", None),
            ("EN-gb", Some(Lang::En)),
            ("en;q=nonsense, ko", Some(Lang::Ko)),
            ("en;q=0.8, ko;q=0.8", Some(Lang::En)),
            ("", None),
        ];
        for (header, expected) in cases {
            assert_eq!(Lang::from_accept_language(header), expected, "{header:?}");
        }
    }

    #[test]
    fn a_missing_argument_is_no_text() {
        let args = HashMap::new();
        assert_eq!(text(Lang::En, "api-UNKNOWN_ROOM", &args), None);
        let args = HashMap::from([(Cow::Borrowed("room"), FluentValue::from("Z9"))]);
        assert_eq!(text(Lang::En, "api-UNKNOWN_ROOM", &args).as_deref(), Some("Unknown room: Z9"));
        assert_eq!(text(Lang::Ko, "api-UNKNOWN_ROOM", &args).as_deref(), Some("알 수 없는 회의실입니다: Z9"));
        assert_eq!(text(Lang::En, "no-such-key", &args), None);
    }
}
