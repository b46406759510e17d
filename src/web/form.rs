//! Form fields into domain values, and command outcomes into what a page
//! shows: the same rules as the JSON API, read from HTML inputs (a date,
//! HH:MM times in the configured zone) and answered in Korean.

use actix_web::http::StatusCode;
use chrono::{Duration, NaiveDate, NaiveTime};

use super::grid;
use super::FormData;
use crate::error::{ApiError, ErrorCode};
use crate::idempotency::IdempotencyKey;
use crate::rooms::domain::TimeRange;
use crate::state::AppState;

pub fn parse_date(raw: &str) -> Result<NaiveDate, ApiError> {
    NaiveDate::parse_from_str(raw.trim(), "%Y-%m-%d").map_err(|_| ApiError::malformed("date", "must be YYYY-MM-DD"))
}

pub fn parse_time(field: &str, raw: &str) -> Result<NaiveTime, ApiError> {
    let raw = raw.trim();
    NaiveTime::parse_from_str(raw, "%H:%M")
        .or_else(|_| NaiveTime::parse_from_str(raw, "%H:%M:%S"))
        .map_err(|_| ApiError::malformed(field, "must be HH:MM"))
}

/// The instants of a date, start and end in the configured zone ("00:00" as
/// the end means the midnight after).
pub fn local_range(state: &AppState, date: NaiveDate, start: NaiveTime, end: NaiveTime) -> Result<TimeRange, ApiError> {
    let at = |t| {
        grid::local_instant(state.policy().timezone, date, t)
            .ok_or_else(|| ApiError::malformed("start", "does not exist on that day"))
    };
    let (s, mut e) = (at(start)?, at(end)?);
    if end == NaiveTime::MIN && start > NaiveTime::MIN {
        e += Duration::days(1);
    }
    TimeRange::new(s, e)
}

/// A form's `date`, `start` and `end` as a time range.
pub fn form_range(state: &AppState, form: &FormData) -> Result<TimeRange, ApiError> {
    let date = parse_date(form.get("date"))?;
    let start = parse_time("start", form.get("start"))?;
    let end = parse_time("end", form.get("end"))?;
    local_range(state, date, start, end)
}

/// The per-render key of a form.
pub fn form_key(form: &FormData) -> Result<IdempotencyKey, ApiError> {
    IdempotencyKey::parse(form.get("idempotency_key")).map_err(|r| ApiError::malformed("idempotency_key", r))
}

/// A checkbox: checked when it sent `1`, `on`, `true` or `yes`.
pub fn checked(form: &FormData, name: &str) -> bool {
    matches!(form.get(name), "1" | "on" | "true" | "yes")
}

/// The status of a refused form's page (a server fault is a 503: retry).
pub fn status_of(err: &ApiError) -> StatusCode {
    match err.code.status() {
        s if s.is_server_error() => StatusCode::SERVICE_UNAVAILABLE,
        s => s,
    }
}

/// What a person reads for a refusal.
pub fn korean(err: &ApiError) -> String {
    let field = err.details.get("field").and_then(|f| f.as_str()).unwrap_or("");
    match err.code {
        ErrorCode::MalformedRequest => match field {
            "title" => "제목을 1~200자로 적어 주세요.".into(),
            "rooms" => "회의실을 하나 이상 고르세요 (같은 방은 한 번만).".into(),
            "date" => "날짜를 YYYY-MM-DD 형식으로 골라 주세요.".into(),
            "start" | "end" => "시작과 끝 시간을 HH:MM 형식으로 골라 주세요.".into(),
            "code" => "코드는 영문·숫자·_- 1~32자입니다.".into(),
            "name" => "이름을 1~100자로 적어 주세요.".into(),
            "area" => "구역 이름을 1~100자로 적어 주세요.".into(),
            "suite" => "묶음 이름은 1~100자입니다 (없으면 비워 두세요).".into(),
            "capacity" => "좌석 수는 1~10000 사이의 숫자입니다.".into(),
            "equipment" => "장비는 쉼표로 나눈 영문 소문자·숫자·- 태그입니다 (예: projector, video).".into(),
            "position" => "순서는 1 이상의 숫자입니다.".into(),
            "maxDurationMinutes" => "최대 예약 시간은 1~10080분입니다.".into(),
            "horizonDays" => "예약 가능 기간은 1~3650일입니다 (제한이 없으면 비워 두세요).".into(),
            "repeat_until" => "반복이 끝나는 날짜를 골라 주세요.".into(),
            "repeat" => "반복 방법을 골라 주세요.".into(),
            _ => "입력을 확인해 주세요.".into(),
        },
        ErrorCode::IdempotencyFingerprintConflict => {
            "이 양식은 이미 다른 내용으로 제출되었습니다. 페이지를 새로 고친 뒤 다시 시도해 주세요.".into()
        }
        ErrorCode::SeriesConflict => {
            let n = err.details["conflicts"].as_array().map_or(0, Vec::len);
            format!("이미 예약된 날짜가 {n}개 있습니다. 아래 날짜를 빼고 나머지만 예약할 수 있습니다.")
        }
        ErrorCode::CommandInProgress => "같은 요청을 처리하고 있습니다. 잠시 후 새로 고쳐 주세요.".into(),
        ErrorCode::AdmissionRejected | ErrorCode::DatabaseUnavailable => {
            "지금은 요청이 많습니다. 잠시 후 다시 시도해 주세요.".into()
        }
        _ => err.message.clone(),
    }
}
