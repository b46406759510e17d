//! The `time-range` of CalDAV reports (RFC 4791 §9.9), shared by
//! `calendar-query` and `free-busy-query`.

use actix_web::http::StatusCode;
use chrono::{DateTime, NaiveDateTime, Utc};

use super::xml::{Element, CALDAV};
use super::DavError;

/// `YYYYMMDDTHHMMSSZ` of a `time-range`'s `start` or `end` attribute; a
/// malformed one is 403 `CALDAV:valid-filter`.
pub fn attr(el: &Element, name: &str) -> Result<Option<DateTime<Utc>>, DavError> {
    match el.attr(name) {
        None => Ok(None),
        Some(v) => NaiveDateTime::parse_from_str(v.trim().trim_end_matches('Z'), "%Y%m%dT%H%M%S")
            .map(|t| Some(t.and_utc()))
            .map_err(|_| {
                DavError::precondition(StatusCode::FORBIDDEN, CALDAV, "valid-filter", format!("bad time-range {name}"))
            }),
    }
}
