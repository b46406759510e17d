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

/// The message of an error with `code` and `details` in `lang`, always
/// from the catalogue: `api-CODE` with the details as arguments (strings
/// and numbers as they are, an array as its number of items), or
/// `api-CODE-plain` when the text needs an argument the details lack. The
/// code holds no words (issue 37): what a text needs beyond the code travels
/// in the details, so Korean and English say the same. `_made_with`, the
/// message the error was made with, is not consulted; it stays in the
/// signature for the doors that pass it.
pub fn message(lang: Lang, code: &str, details: &Value, _made_with: &str) -> Option<String> {
    let args: HashMap<Cow<'static, str>, FluentValue<'_>> = details
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| {
            let value = match value {
                Value::String(s) => FluentValue::from(s.clone()),
                Value::Number(n) => FluentValue::from(n.as_f64()?),
                Value::Array(items) => FluentValue::from(items.len()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_catalogue_decides_even_over_korean_words_made_in_code() {
        // A Korean message made where the error arose no longer wins: the
        // catalogue writes every language, Korean included.
        let made_in_code = json!({"code": "NOT_ORGANIZER", "message": "다른 말로 쓴 메시지", "details": {}});
        let ko: Value =
            serde_json::from_slice(&localise(Lang::Ko, made_in_code.to_string().as_bytes()).unwrap()).unwrap();
        assert_eq!(ko["message"], "예약한 사람(또는 관리자)만 바꿀 수 있습니다.");
        let taken = json!({"code": "ROOM_TIME_TAKEN", "message": "이미 예약된 시간입니다", "details": {}});
        let ko: Value = serde_json::from_slice(&localise(Lang::Ko, taken.to_string().as_bytes()).unwrap()).unwrap();
        assert_eq!(ko["message"], "이미 예약된 시간입니다", "SPEC §19's words");
        let english = json!({"code": "NOT_FOUND", "message": "booking not found", "details": {"what": "booking"}});
        let ko: Value = serde_json::from_slice(&localise(Lang::Ko, english.to_string().as_bytes()).unwrap()).unwrap();
        assert_eq!(ko["message"], "찾을 수 없습니다: booking");
        let en: Value = serde_json::from_slice(&localise(Lang::En, taken.to_string().as_bytes()).unwrap()).unwrap();
        assert_eq!(en["message"], "This time is already booked");
        assert_eq!((en["code"].clone(), en["details"].clone()), (taken["code"].clone(), taken["details"].clone()));
    }

    #[test]
    fn what_a_text_needs_comes_from_the_details() {
        let window = json!({"opensMinutesBefore": 10, "closesMinutesAfter": 15});
        assert_eq!(
            message(Lang::Ko, "CHECK_IN_CLOSED", &window, "").as_deref(),
            Some("체크인은 시작 10분 전부터 시작 후 15분까지 할 수 있습니다.")
        );
        assert_eq!(
            message(Lang::Ko, "CHECK_IN_CLOSED", &json!({}), "").as_deref(),
            Some("지금은 체크인할 수 없습니다.")
        );
        let cancelled = json!({"what": "booking", "state": "CANCELLED"});
        assert_eq!(message(Lang::Ko, "INVALID_STATE", &cancelled, "").as_deref(), Some("이미 취소된 예약입니다."));
        assert_eq!(
            message(Lang::En, "INVALID_STATE", &cancelled, "").as_deref(),
            Some("This booking is already cancelled.")
        );
        let hold = json!({"state": "CONFIRMED"});
        assert_eq!(message(Lang::Ko, "INVALID_STATE", &hold, "").as_deref(), Some("지금 상태에서는 할 수 없습니다."));
        let taken = json!({"conflicts": [{"bookingId": 1}, {"bookingId": 2}]});
        assert_eq!(
            message(Lang::Ko, "SERIES_CONFLICT", &taken, "").as_deref(),
            Some("이미 예약된 날짜가 2개 있습니다. 나머지만 예약하려면 onConflict를 skip으로 보내 주세요.")
        );
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
