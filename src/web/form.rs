//! Form fields into domain values, and command outcomes into what a page
//! shows: the same rules as the JSON API, read from HTML inputs (a date,
//! HH:MM times in the configured zone) and answered in the page's language.

use actix_web::http::StatusCode;
use chrono::{Duration, NaiveDate, NaiveTime};
use chrono_tz::Tz;

use super::grid;
use super::FormData;
use crate::error::ApiError;
use crate::idempotency::IdempotencyKey;
use crate::rooms::domain::TimeRange;

pub fn parse_date(raw: &str) -> Result<NaiveDate, ApiError> {
    crate::day::parse_field("date", raw)
}

pub fn parse_time(field: &str, raw: &str) -> Result<NaiveTime, ApiError> {
    let raw = raw.trim();
    NaiveTime::parse_from_str(raw, "%H:%M")
        .or_else(|_| NaiveTime::parse_from_str(raw, "%H:%M:%S"))
        .map_err(|_| ApiError::malformed(field, "must be HH:MM"))
}

/// The instants of a date, start and end in zone `tz` ("00:00" as the end
/// means the midnight after).
pub fn local_range(tz: Tz, date: NaiveDate, start: NaiveTime, end: NaiveTime) -> Result<TimeRange, ApiError> {
    let at =
        |t| grid::local_instant(tz, date, t).ok_or_else(|| ApiError::malformed("start", "does not exist on that day"));
    let (s, mut e) = (at(start)?, at(end)?);
    if end == NaiveTime::MIN && start > NaiveTime::MIN {
        e += Duration::days(1);
    }
    TimeRange::new(s, e)
}

/// A form's `date`, `start` and `end` as a time range in zone `tz`.
pub fn form_range(tz: Tz, form: &FormData) -> Result<TimeRange, ApiError> {
    let date = parse_date(form.get("date"))?;
    let start = parse_time("start", form.get("start"))?;
    let end = parse_time("end", form.get("end"))?;
    local_range(tz, date, start, end)
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

/// An [`ApiError`] for a page: its status and text, in the page's language.
pub fn refused_page(err: &ApiError) -> super::WebError {
    super::WebError::Message(status_of(err), super::pages::Message::refusal("error-not-done", err.clone()))
}
