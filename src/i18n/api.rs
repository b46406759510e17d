//! The JSON API's error messages in the caller's language (SPEC §19): the
//! `code`, `details` and status are the contract and never change; the
//! `message` follows `Accept-Language`, Korean by default. One place turns
//! an error body into its language, so every answer — refusals built in a
//! handler, in an extractor, or replayed from an idempotency record — reads
//! the same.

use std::borrow::Cow;
use std::collections::HashMap;

use fluent_templates::fluent_bundle::FluentValue;
use serde_json::Value;

use super::{text, Lang};

/// The message of an error with `code` and `details` in `lang`; `current`
/// is the message the error was made with. Korean keeps a Korean message
/// made where the error arose (it can say more than the catalogue, e.g. the
/// check-in window's minutes); everything else comes from the catalogue,
/// with the details as arguments, or without them when the text needs one
/// the details lack (`api-CODE-plain`).
pub fn message(lang: Lang, code: &str, details: &Value, current: &str) -> Option<String> {
    if lang == Lang::Ko && current.chars().any(is_hangul) {
        return None;
    }
    let args: HashMap<Cow<'static, str>, FluentValue<'_>> = details
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| {
            let value = match value {
                Value::String(s) => FluentValue::from(s.clone()),
                Value::Number(n) => FluentValue::from(n.as_f64()?),
                _ => return None,
            };
            Some((Cow::Owned(name.clone()), value))
        })
        .collect();
    text(lang, &format!("api-{code}"), &args).or_else(|| text(lang, &format!("api-{code}-plain"), &args))
}

/// `body` (an error answer's JSON) with its message in `lang`; `None` when
/// it is not an error answer or its message stays.
pub fn localise(lang: Lang, body: &[u8]) -> Option<Vec<u8>> {
    let mut json: Value = serde_json::from_slice(body).ok()?;
    let code = json.get("code")?.as_str()?.to_owned();
    let current = json.get("message")?.as_str()?.to_owned();
    let message = message(lang, &code, json.get("details").unwrap_or(&Value::Null), &current)?;
    json["message"] = Value::String(message);
    serde_json::to_vec(&json).ok()
}

fn is_hangul(c: char) -> bool {
    matches!(c, '\u{AC00}'..='\u{D7A3}' | '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn korean_keeps_its_own_words_and_replaces_english_ones() {
        let taken = json!({"code": "ROOM_TIME_TAKEN", "message": "이미 예약된 시간입니다", "details": {}});
        assert_eq!(localise(Lang::Ko, taken.to_string().as_bytes()), None);
        let english = json!({"code": "NOT_FOUND", "message": "booking not found", "details": {"what": "booking"}});
        let ko: Value = serde_json::from_slice(&localise(Lang::Ko, english.to_string().as_bytes()).unwrap()).unwrap();
        assert_eq!(ko["message"], "찾을 수 없습니다: booking");
        let en: Value = serde_json::from_slice(&localise(Lang::En, taken.to_string().as_bytes()).unwrap()).unwrap();
        assert_eq!(en["message"], "This time is already booked");
        assert_eq!((en["code"].clone(), en["details"].clone()), (taken["code"].clone(), taken["details"].clone()));
    }

    #[test]
    fn details_fill_the_arguments_and_their_absence_falls_back_to_plain_text() {
        let quota = json!({"maxActiveBookings": 3, "active": 3, "adding": 1});
        assert_eq!(
            message(Lang::En, "QUOTA_EXCEEDED", &quota, "").as_deref(),
            Some("Each person may have at most 3 upcoming bookings.")
        );
        assert_eq!(
            message(Lang::En, "QUOTA_EXCEEDED", &json!({}), "").as_deref(),
            Some("Each person has a limit of upcoming bookings.")
        );
    }
}
