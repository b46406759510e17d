//! What every harness shares: the installation it pretends to be (zone,
//! room domain, secret, a fixed instant) and how it turns bytes into text
//! and into a request.

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::test::TestRequest;
use actix_web::HttpRequest;
use chrono::{DateTime, Months, Utc};
use chrono_tz::Tz;

use crate::rooms::domain::TimeRange;
use crate::series::domain::{self as series, Recurrence};

/// The configured zone the harnesses run in (`YEYAK_TIMEZONE`).
pub(super) const HOME: Tz = chrono_tz::Asia::Seoul;

/// `YEYAK_ROOM_MAIL_DOMAIN`.
pub(super) const ROOM_DOMAIN: &str = "rooms.example.com";

/// `YEYAK_SECRET_KEY`.
pub(super) const SECRET: &[u8] = b"fuzz-secret-key-0123456789abcdef";

/// The clock of every harness: a fixed instant, so a run replays exactly.
pub(super) fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_893_456_000, 0).expect("2030-01-01")
}

pub(super) fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// A request carrying `data` as the value of `name`; `None` when no HTTP
/// server would pass such a header on.
pub(super) fn request_with(name: HeaderName, data: &[u8]) -> Option<HttpRequest> {
    let value = HeaderValue::from_bytes(data).ok()?;
    Some(TestRequest::default().insert_header((name, value)).to_http_request())
}

/// A series' occurrences: at most `MAX_OCCURRENCES`, the first at the
/// first booking, in order, none past `MAX_YEARS`.
pub(super) fn occurrences(first: &TimeRange, recurrence: &Recurrence, tz: Tz) {
    let Ok(all) = recurrence.occurrences(first, tz) else { return };
    assert!(!all.is_empty() && all.len() <= series::MAX_OCCURRENCES, "{} occurrences", all.len());
    assert_eq!(all[0].starts_at(), first.starts_at(), "the first occurrence is the first booking");
    assert!(all.windows(2).all(|w| w[0].starts_at() < w[1].starts_at()), "occurrences in order");
    if let Some(limit) = first.starts_at().checked_add_months(Months::new(series::MAX_YEARS * 12)) {
        assert!(all.iter().all(|o| o.starts_at() <= limit), "an occurrence past {} years", series::MAX_YEARS);
    }
    for o in &all {
        booking_range(o);
    }
}

/// What commands compute from any booking's range (the check-in window,
/// "not in the past").
pub(super) fn booking_range(range: &TimeRange) {
    let _ = range.ensure_not_past(now());
    let _ = crate::policy::Policy::default().check_in_window(range.starts_at());
}
