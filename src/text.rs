//! Names and titles people type, which yeyak writes into other formats
//! (HTML, iCalendar, mail headers, CSV): none may hold a control character,
//! so no line of those formats can be broken or forged from inside a value
//! (SPEC §20). No I/O.

use crate::error::ApiError;

/// A character no title, name or label may hold: C0 controls (tab and line
/// breaks included), DEL, C1 controls, and the Unicode line and paragraph
/// separators (U+2028, U+2029) that some readers take for line breaks.
pub fn is_forbidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Refuses `value` with 400 `MALFORMED_REQUEST` naming `field` when it holds
/// a forbidden character.
pub fn ensure_plain(field: &str, value: &str) -> Result<(), ApiError> {
    if value.chars().any(is_forbidden) {
        return Err(ApiError::malformed(field, "must not contain control characters or line breaks"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_characters() {
        for c in ['\0', '\t', '\n', '\r', '\u{1b}', '\u{1f}', '\u{7f}', '\u{85}', '\u{9f}', '\u{2028}', '\u{2029}'] {
            assert!(is_forbidden(c), "{c:?}");
            assert_eq!(ensure_plain("title", &format!("a{c}b")).unwrap_err().details["field"], "title");
        }
        for ok in ["주간 회의", "a, b; c: \"d\" \\ e", "<b>&amp;</b>", "emoji 🎉", "\u{200b}zero width"] {
            assert!(ensure_plain("title", ok).is_ok(), "{ok}");
        }
    }
}
