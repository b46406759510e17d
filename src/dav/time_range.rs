//! The `time-range` of CalDAV reports (RFC 4791 §9.9), shared by
//! `calendar-query` and `free-busy-query`.

use actix_web::http::StatusCode;
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

use super::xml::{Element, CALDAV};
use super::DavError;

/// `YYYYMMDDTHHMMSSZ` of a `time-range`'s `start` or `end` attribute, held
/// within [`earliest`]..=[`latest`] (what PostgreSQL can compare); a
/// malformed one is 403 `CALDAV:valid-filter`.
pub fn attr(el: &Element, name: &str) -> Result<Option<DateTime<Utc>>, DavError> {
    match el.attr(name) {
        None => Ok(None),
        Some(v) => NaiveDateTime::parse_from_str(v.trim().trim_end_matches('Z'), "%Y%m%dT%H%M%S")
            .map(|t| Some(t.and_utc().clamp(earliest(), latest())))
            .map_err(|_| {
                DavError::precondition(StatusCode::FORBIDDEN, CALDAV, "valid-filter", format!("bad time-range {name}"))
            }),
    }
}

/// A range with only `start` or only `end` is open on the other side
/// (RFC 4791 §9.9): from the earliest or to the latest instant compared.
pub fn open_window(el: &Element) -> Result<(DateTime<Utc>, DateTime<Utc>), DavError> {
    Ok((attr(el, "start")?.unwrap_or_else(earliest), attr(el, "end")?.unwrap_or_else(latest)))
}

/// The first instant a window compares: chrono's own minimum lies before
/// what PostgreSQL's `timestamptz` holds, and failed as a parameter (a 500).
pub fn earliest() -> DateTime<Utc> {
    NaiveDate::from_ymd_opt(1, 1, 1).and_then(|d| d.and_hms_opt(0, 0, 0)).map(|t| t.and_utc()).unwrap_or_default()
}

/// The last instant a window compares.
pub fn latest() -> DateTime<Utc> {
    NaiveDate::from_ymd_opt(9999, 12, 31)
        .and_then(|d| d.and_hms_opt(23, 59, 59))
        .map(|t| t.and_utc())
        .unwrap_or_default()
}
