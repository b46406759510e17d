//! The pages' form bodies and query strings, through the form reader and
//! the domain values the handlers build from them.

use actix_web::test::TestRequest;
use actix_web::FromRequest;
use chrono::{Datelike, Duration, NaiveDate};
use futures_util::FutureExt;

use crate::auth::staff;
use crate::catalogue::domain::Equipment;
use crate::i18n::{I18n, Lang};
use crate::rooms::domain::{day_bounds, RequestedRooms, Title};
use crate::rooms::store::decide::Decision;
use crate::series::domain::{self as series};
use crate::web::{self, FormData};

use super::inputs::{booking_range, now, occurrences, text, HOME};

// ------------------------------------------------------------------- forms

/// A form body as every form handler takes it (`web::FormData`).
pub(super) fn form(data: &[u8]) -> Option<FormData> {
    let (req, mut payload) = TestRequest::default().set_payload(data.to_vec()).to_http_parts();
    FormData::from_request(&req, &mut payload).now_or_never()?.ok()
}

/// The booking form (`web::bookings::book`: one booking or a series from
/// `repeat` and `repeat_until`) and the move form (`move_booking`).
pub fn form_booking(data: &[u8]) {
    let Some(form) = form(data) else { return };
    let _ = Title::parse(form.get("title"));
    let _ = RequestedRooms::parse(&form.all("rooms"));
    let _ = web::form::form_key(&form);
    let _ = web::form::checked(&form, "on_conflict");
    let Ok(range) = web::form::form_range(HOME, &form) else { return };
    booking_range(&range);
    match form.get("repeat") {
        "" | "none" => {}
        repeat => {
            let Ok(until) = web::form::parse_date(form.get("repeat_until")) else { return };
            if let Ok(recurrence) = series::from_form(repeat, until, HOME) {
                occurrences(&range, &recurrence, HOME);
            }
        }
    }
}

/// The sign-in form (`web::account::login`: username, password, `next`)
/// and the account and approval forms (app password label, language,
/// approval reason, the door display's booking id).
pub fn form_account(data: &[u8]) {
    let Some(form) = form(data) else { return };
    let username = form.get("username").trim().to_owned();
    let _ = staff::valid_username(&username);
    let _ = form.get("password");
    let next = web::account::safe_next(Some(form.get("next")).filter(|n| !n.is_empty()));
    let rest = next.strip_prefix('/').expect("`next` is a path");
    assert!(!rest.starts_with(['/', '\\']), "`next` {next:?} leaves the origin");
    assert!(!next.contains('\\') && !next.chars().any(|c| c.is_control() || c.is_whitespace()), "{next:?}");
    let _ = crate::auth::app_password::parse_label(form.get("label"));
    let _ = Lang::parse_exact(form.get("language"));
    for approve in [true, false] {
        let _ = Decision::parse(approve, Some(form.get("reason")));
    }
    let _ = form.get("booking_id").parse::<i64>();
}

/// The room forms of `/admin/rooms` (`new_room`, `room_patch`).
pub fn form_room(data: &[u8]) {
    let Some(form) = form(data) else { return };
    let _ = web::admin::rooms::new_room(&form);
    let _ = web::admin::rooms::room_patch(&form);
}

/// The query strings of the day, week and find pages (`?date=…`), read
/// with `serde_urlencoded` as `web::Query` does, then what each handler
/// computes from the date (keep in step with src/web/day.rs, week.rs and
/// find.rs, which do it inline); and the reports' `?from=&to=`
/// (`http::extract::RangeQuery`, `reports::domain::Period::parse`).
pub fn page_query(data: &[u8]) {
    let Some(query) = text(data) else { return };
    if let Ok(uri) = format!("/api/reports/utilisation?{query}").parse::<actix_web::http::Uri>() {
        let req = TestRequest::default().uri(&uri.to_string()).to_http_request();
        let range = crate::http::extract::RangeQuery::of(&req);
        let today = now().with_timezone(&HOME).date_naive();
        if let Ok(period) = crate::reports::domain::Period::parse(range.from.as_deref(), range.to.as_deref(), today) {
            assert!(period.from() <= period.to(), "a period ends after it starts");
            let _ = (day_bounds(HOME, period.from()), day_bounds(HOME, period.to()), period.slug());
        }
    }
    let day = serde_urlencoded::from_str::<web::day::DayQuery>(query).is_ok();
    let week = serde_urlencoded::from_str::<web::week::WeekQuery>(query).is_ok();
    let find = serde_urlencoded::from_str::<web::find::FindQuery>(query).is_ok();
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    let one = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let Some(date) = one("date").and_then(|d| web::form::parse_date(d).ok()) else { return };
    let i18n = I18n::new(Lang::En);
    if day {
        // web::day::render_day
        let _ = day_bounds(HOME, date);
        let _ = (i18n.date(date), date.pred_opt(), date.succ_opt());
    }
    if week {
        // web::week::week
        let monday = date - Duration::days(i64::from(date.weekday().num_days_from_monday()));
        let days: Vec<NaiveDate> = (0..7).map(|i| monday + Duration::days(i)).collect();
        let _ = (day_bounds(HOME, monday), day_bounds(HOME, days[6]));
        let _ = (i18n.week(monday, days[6]), monday - Duration::days(7), monday + Duration::days(7));
    }
    if find {
        // web::find::search
        let time = |name| web::form::parse_time(name, one(name).unwrap_or_default());
        if let (Ok(start), Ok(end)) = (time("start"), time("end")) {
            if let Ok(range) = web::form::local_range(HOME, date, start, end) {
                let _ = crate::http::rooms::FreeQuery::check(range.starts_at(), range.ends_at());
            }
        }
        let _ = Equipment::parse_list("equipment", one("equipment").unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_body_is_read_without_a_runtime() {
        let read = form(b"rooms=A&rooms=B&title=%EC%A3%BC%EA%B0%84").expect("an in-memory body is ready at once");
        assert_eq!(read.all("rooms"), ["A", "B"]);
        assert_eq!(read.get("title"), "주간");
    }
}
