//! Holiday calendars (SPEC §24): admin keys create them and replace their
//! days from JSON or from a public-holiday `.ics` file; an area names one.
//! What is not a calendar file, a date named twice or an unknown calendar is
//! a 4xx that changes nothing.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::*;

/// A public-holiday file as calendar apps publish it: all-day events, one
/// of them three days long (DTEND exclusive), one without DTEND.
pub const KOREAN_HOLIDAYS_2027: &str =
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Google Inc//Google Calendar 70.9054//EN\r\n\
X-WR-CALNAME:Holidays in South Korea\r\n\
BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20270101\r\nDTEND;VALUE=DATE:20270102\r\nDTSTAMP:20261201T000000Z\r\n\
UID:20270101_ko@google.com\r\nSUMMARY:New Year's Day\r\nTRANSP:TRANSPARENT\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20270206\r\nDTEND;VALUE=DATE:20270209\r\nDTSTAMP:20261201T000000Z\r\n\
UID:20270206_ko@google.com\r\nSUMMARY:Seollal\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20270301\r\nDTSTAMP:20261201T000000Z\r\n\
UID:20270301_ko@google.com\r\nSUMMARY:Independence Movement Day\r\nEND:VEVENT\r\n\
END:VCALENDAR\r\n";

async fn put_ics(app: &TestApp, code: &str, text: &str) -> (StatusCode, Value) {
    let req = app
        .request(Method::PUT, &format!("/api/holiday-calendars/{code}/days"), ADMIN, None)
        .header("Content-Type", "text/calendar; charset=utf-8")
        .body(text.to_owned());
    body(req.send().await.expect("request sent")).await
}

#[tokio::test]
async fn holiday_calendars_take_json_or_an_ics_file_and_areas_name_them() {
    let app = TestApp::spawn().await;
    let (status, created) = send(
        &app,
        Method::POST,
        "/api/holiday-calendars",
        ADMIN,
        Some("kr-1"),
        json!({ "code": "kr", "name": "Korea" }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created, json!({ "code": "kr", "name": "Korea", "days": [] }));
    let (status, err) =
        send(&app, Method::POST, "/api/holiday-calendars", ADMIN, Some("kr-2"), json!({ "code": "kr" })).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("HOLIDAY_CALENDAR_CODE_TAKEN")));

    let (status, cal) = put_ics(&app, "kr", KOREAN_HOLIDAYS_2027).await;
    assert_eq!(status, StatusCode::OK, "{cal}");
    let days: Vec<String> = cal["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{} {}", d["date"].as_str().unwrap(), d["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        days,
        [
            "2027-01-01 New Year's Day",
            "2027-02-06 Seollal",
            "2027-02-07 Seollal",
            "2027-02-08 Seollal",
            "2027-03-01 Independence Movement Day"
        ]
    );

    let stored = fingerprint(&app, &["holiday", "holiday_calendar", "area"]).await;
    for bad in ["not a calendar", "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:x\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"] {
        let (status, err) = put_ics(&app, "kr", bad).await;
        assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("body")), "{err}");
    }
    let twice = json!({ "days": [{ "date": "2027-05-05", "name": "a" }, { "date": "2027-05-05", "name": "b" }] });
    let (status, err) = send(&app, Method::PUT, "/api/holiday-calendars/kr/days", ADMIN, None, twice).await;
    assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("days")), "{err}");
    let (status, err) = send(
        &app,
        Method::PUT,
        "/api/holiday-calendars/kr/days",
        ADMIN,
        None,
        json!({ "days": [{ "date": "2027-02-30", "name": "x" }] }),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    let (status, _) = put_ics(&app, "none", KOREAN_HOLIDAYS_2027).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) =
        send(&app, Method::PUT, "/api/holiday-calendars/kr/days", TENANT_ONE, None, json!({ "days": [] })).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let req = app
        .request(Method::PUT, "/api/holiday-calendars/kr/days", ADMIN, None)
        .header("Content-Type", "text/plain")
        .body("2027-01-01");
    let (status, _) = body(req.send().await.unwrap()).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(fingerprint(&app, &["holiday", "holiday_calendar", "area"]).await, stored, "refusals change nothing");

    // JSON replaces the days whole.
    let days = json!({ "days": [{ "date": "2027-12-25", "name": "Christmas" }] });
    let (status, cal) = send(&app, Method::PUT, "/api/holiday-calendars/kr/days", ADMIN, None, days).await;
    assert_eq!((status, cal["days"].as_array().map(Vec::len)), (StatusCode::OK, Some(1)), "{cal}");

    // An area names the calendar; an unknown code is a 400 naming the field.
    let (status, area) =
        send(&app, Method::POST, "/api/areas", ADMIN, Some("a-1"), json!({ "code": "서울", "holidayCalendar": "kr" }))
            .await;
    assert_eq!((status, area["holidayCalendar"].as_str()), (StatusCode::CREATED, Some("kr")), "{area}");
    let (status, err) =
        send(&app, Method::PATCH, "/api/areas/서울", ADMIN, Some("a-2"), json!({ "holidayCalendar": "xx" })).await;
    assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("holidayCalendar")), "{err}");
    let (status, area) =
        send(&app, Method::PATCH, "/api/areas/서울", ADMIN, Some("a-3"), json!({ "holidayCalendar": null })).await;
    assert_eq!((status, area["holidayCalendar"].clone()), (StatusCode::OK, Value::Null), "{area}");

    let (status, list) = app.get_json("/api/holiday-calendars", TENANT_ONE).await;
    assert_eq!((status, list["calendars"][0]["code"].as_str()), (StatusCode::OK, Some("kr")), "{list}");
}
