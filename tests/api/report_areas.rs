//! Reports per area (SPEC §24 "Reports", issue 39): each room's working
//! hours are its area's weekdays and hours in its area's zone, minus its
//! holidays; a booking on a holiday is booked time; the period is the
//! area's local dates; `utilisation.csv` names the area; `?area=` narrows
//! the page and both CSVs to one area, and an unknown area is a 400.

use chrono::{Duration, NaiveDate, TimeZone};
use chrono_tz::Tz;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::*;
use crate::reports::{book, monday, page_row, python_csv};
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

const SEOUL: Tz = chrono_tz::Asia::Seoul;
const NEW_YORK: Tz = chrono_tz::America::New_York;

/// `day hh:mm` in `tz` as RFC 3339 (the offset of that date, daylight
/// saving time included).
fn at(tz: Tz, day: NaiveDate, hh: u32, mm: u32) -> String {
    tz.from_local_datetime(&day.and_hms_opt(hh, mm, 0).unwrap()).unwrap().to_rfc3339()
}

async fn get(app: &TestApp, path: &str) -> (StatusCode, Vec<u8>) {
    let res = app.http.get(app.url(path)).bearer_auth(ADMIN).send().await.unwrap();
    (res.status(), res.bytes().await.unwrap().to_vec())
}

/// The CSV's rows after the header, as read by Python's csv module.
async fn csv_rows(app: &TestApp, path: &str) -> Vec<Vec<String>> {
    let (status, bytes) = get(app, path).await;
    assert_eq!(status, StatusCode::OK, "{path}: {}", String::from_utf8_lossy(&bytes));
    python_csv(&bytes).split_off(1)
}

/// `room, area, booked_hours, working_hours_booked, working_hours,
/// utilisation_percent, bookings` of a utilisation row.
fn summary(row: &[String]) -> Vec<&str> {
    [0, 2, 3, 4, 5, 6, 7].iter().map(|&i| row[i].as_str()).collect()
}

#[tokio::test]
async fn working_hours_are_each_areas_own_and_area_narrows_every_report() {
    let app = TestApp::spawn().await;
    let mon = monday(&app);
    let day = |n: i64| mon + Duration::days(n);
    let holiday = day(2);

    let (status, cal) =
        send(&app, Method::POST, "/api/holiday-calendars", ADMIN, Some("kr"), json!({"code": "kr", "name": "Korea"}))
            .await;
    assert_eq!(status, StatusCode::CREATED, "{cal}");
    let days = json!({"days": [
        {"date": holiday.to_string(), "name": "휴일"},
        {"date": day(30).to_string(), "name": "after the period"}
    ]});
    let (status, cal) = send(&app, Method::PUT, "/api/holiday-calendars/kr/days", ADMIN, None, days).await;
    assert_eq!(status, StatusCode::OK, "{cal}");
    let seoul = json!({"code": "서울", "timeZone": "Asia/Seoul", "holidayCalendar": "kr"});
    let (status, area) = send(&app, Method::POST, "/api/areas", ADMIN, Some("area-seoul"), seoul).await;
    assert_eq!(status, StatusCode::CREATED, "{area}");
    // New York: Monday–Thursday 08–16, Friday 08–12, Saturday 10–14: 40 hours a week.
    let eight = json!(["08:00", "16:00"]);
    let new_york = json!({"code": "뉴욕", "timeZone": "America/New_York", "workingHours": {
        "mon": eight, "tue": eight, "wed": eight, "thu": eight, "fri": ["08:00", "12:00"], "sat": ["10:00", "14:00"]}});
    let (status, area) = send(&app, Method::POST, "/api/areas", ADMIN, Some("area-ny"), new_york).await;
    assert_eq!(status, StatusCode::CREATED, "{area}");
    let (status, area) = send(&app, Method::POST, "/api/areas", ADMIN, Some("area-empty"), json!({"code": "빈"})).await;
    assert_eq!(status, StatusCode::CREATED, "{area}");
    add_room(&app, json!({"code": "SEL1", "name": "서울 1", "area": "서울"})).await;
    add_room(&app, json!({"code": "SEL2", "name": "서울 2", "area": "서울"})).await;
    add_room(&app, json!({"code": "NYC1", "name": "New York 1", "area": "뉴욕"})).await;

    let s = |d: NaiveDate, hh| at(SEOUL, d, hh, 0);
    let n = |d: NaiveDate, hh| at(NEW_YORK, d, hh, 0);
    // Seoul: 2 h on Monday inside the hours; 3 h on the holiday (booked,
    // not working time); 1 h on Saturday (closed).
    book(&app, ADMIN, "월요일", &["SEL1"], s(mon, 10), s(mon, 12)).await;
    book(&app, ADMIN, "휴일 회의", &["SEL1"], s(holiday, 10), s(holiday, 13)).await;
    book(&app, ADMIN, "토요일", &["SEL1"], s(day(5), 10), s(day(5), 11)).await;
    // New York: Sunday evening before the period (Monday morning in Seoul:
    // not this report's, since the period is New York's dates); 07–09
    // Monday (1 h working); 15–17 Wednesday (1 h: Seoul's holiday is not
    // New York's); 10–11 Saturday (open); 23:00 on the last Sunday to 01:00
    // after the period (1 h inside it, none working).
    book(&app, ADMIN, "before", &["NYC1"], n(day(-1), 20), n(day(-1), 21)).await;
    let ny_monday = book(&app, ADMIN, "early", &["NYC1"], n(mon, 7), n(mon, 9)).await;
    book(&app, ADMIN, "late", &["NYC1"], n(day(2), 15), n(day(2), 17)).await;
    book(&app, ADMIN, "saturday", &["NYC1"], n(day(5), 10), n(day(5), 11)).await;
    book(&app, ADMIN, "midnight", &["NYC1"], n(day(6), 23), n(day(7), 1)).await;

    let range = format!("from={mon}&to={}", day(6));
    let rows = csv_rows(&app, &format!("/api/admin/reports/utilisation.csv?{range}")).await;
    let ours: Vec<Vec<&str>> =
        rows.iter().filter(|r| ["서울", "뉴욕"].contains(&r[2].as_str())).map(|r| summary(r)).collect();
    assert_eq!(
        ours,
        [
            ["NYC1", "뉴욕", "6.00", "3.00", "40.00", "7.5", "4"],
            ["SEL1", "서울", "6.00", "2.00", "36.00", "5.6", "3"],
            ["SEL2", "서울", "0.00", "0.00", "36.00", "0.0", "0"],
        ],
        "area order (뉴욕 < 본관 < 서울); Seoul 4 days × 9 h (the holiday left out), New York 40 h"
    );
    let a = rows.iter().find(|r| r[0] == "A").expect("room A");
    assert_eq!((a[2].as_str(), a[5].as_str()), ("본관", "45.00"), "an area with the defaults: 5 × 9 h");

    // One area: its rooms only, the same figures.
    let rows = csv_rows(&app, &format!("/api/admin/reports/utilisation.csv?{range}&area=%EC%84%9C%EC%9A%B8")).await;
    let codes: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(codes, ["SEL1", "SEL2"]);
    assert_eq!(summary(&rows[0]), ["SEL1", "서울", "6.00", "2.00", "36.00", "5.6", "3"]);
    let rows = csv_rows(&app, &format!("/api/admin/reports/utilisation.csv?{range}&area=뉴욕")).await;
    assert_eq!(
        rows.iter().map(|r| summary(r)).collect::<Vec<_>>(),
        [["NYC1", "뉴욕", "6.00", "3.00", "40.00", "7.5", "4"]]
    );
    assert!(csv_rows(&app, &format!("/api/admin/reports/utilisation.csv?{range}&area=빈")).await.is_empty());

    // The bookings of one area: period and times in its zone.
    let rows = csv_rows(&app, &format!("/api/admin/reports/bookings.csv?{range}&area=뉴욕")).await;
    let seen: Vec<(&str, &str, &str)> = rows.iter().map(|r| (r[1].as_str(), r[3].as_str(), r[4].as_str())).collect();
    let (mon_7, wed_15, sat_10, sun_23) = (
        format!("{mon} 07:00:00"),
        format!("{} 15:00:00", day(2)),
        format!("{} 10:00:00", day(5)),
        format!("{} 23:00:00", day(6)),
    );
    assert_eq!(
        seen,
        [
            (mon_7.as_str(), "NYC1", "early"),
            (wed_15.as_str(), "NYC1", "late"),
            (sat_10.as_str(), "NYC1", "saturday"),
            (sun_23.as_str(), "NYC1", "midnight")
        ]
    );
    assert_eq!(rows[0][0], ny_monday["id"].to_string());
    let rows = csv_rows(&app, &format!("/api/admin/reports/bookings.csv?{range}&area=서울")).await;
    let titles: Vec<&str> = rows.iter().map(|r| r[4].as_str()).collect();
    assert_eq!(titles, ["월요일", "휴일 회의", "토요일"]);
    assert_eq!(rows[1][1], format!("{holiday} 10:00:00"));
    assert!(csv_rows(&app, &format!("/api/admin/reports/bookings.csv?{range}&area=빈")).await.is_empty());
    // Every area: the installation's zone (Asia/Seoul), so New York's
    // Sunday evening is Monday morning and in the period.
    let rows = csv_rows(&app, &format!("/api/admin/reports/bookings.csv?{range}")).await;
    assert!(rows.iter().any(|r| r[4] == "before") && !rows.iter().any(|r| r[4] == "midnight"));

    // The page: the same figures, each area's zone and hours, the form
    // keeping the area, the downloads narrowed to it.
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let page = admin.get(&format!("/admin/reports?{range}")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.html);
    assert_eq!(page_row(&page.html, "NYC1"), ["6.0", "7.5%", "4", "0", "0", "0.0", "0.0", "0.0%"]);
    assert_eq!(page_row(&page.html, "SEL1"), ["6.0", "5.6%", "3", "0", "0", "0.0", "0.0", "0.0%"]);
    assert!(page.html.contains("<li>뉴욕 (America/New_York): 회의실마다 업무시간 40.0시간</li>"), "{}", page.html);
    assert!(page.html.contains("<li>서울 (Asia/Seoul): 회의실마다 업무시간 36.0시간</li>"));
    assert!(page.html.contains("<li>빈 (Asia/Seoul): 회의실마다 업무시간 45.0시간</li>"), "an area without rooms");
    let page = admin.get(&format!("/admin/reports?{range}&area=%EB%89%B4%EC%9A%95")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.html);
    assert_eq!(page_row(&page.html, "NYC1"), ["6.0", "7.5%", "4", "0", "0", "0.0", "0.0", "0.0%"]);
    assert!(!page.html.contains("room-SEL1") && !page.html.contains("room-A\""), "one area's rooms only");
    assert!(page.html.contains("<option value=\"뉴욕\" selected>"));
    assert!(page.html.contains(&format!(
        "/api/admin/reports/utilisation.csv?from={mon}&#38;to={}&#38;area=%EB%89%B4%EC%9A%95",
        day(6)
    )));
    assert!(page.html.contains(&format!(
        "/api/admin/reports/bookings.csv?from={mon}&#38;to={}&#38;area=%EB%89%B4%EC%9A%95",
        day(6)
    )));

    // An unknown area: 400 naming `area` from both CSVs, a message on the page.
    for path in ["/api/admin/reports/utilisation.csv", "/api/admin/reports/bookings.csv"] {
        let res =
            app.http.get(app.url(&format!("{path}?{range}&area=nowhere"))).bearer_auth(ADMIN).send().await.unwrap();
        let (status, err) = body(res).await;
        assert_eq!(
            (status, err["code"].as_str(), err["details"]["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some("MALFORMED_REQUEST"), Some("area")),
            "{path}: {err}"
        );
    }
    let page = admin.get(&format!("/admin/reports?{range}&area=nowhere")).await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(page.html.contains("role=\"alert\"") && page.html.contains("“nowhere” 구역이 없습니다"), "{}", page.html);
    assert!(!page.html.contains("<svg"));
}

#[tokio::test]
async fn a_report_sends_one_statement_however_many_areas() {
    let app = TestApp::spawn().await;
    let statements = |path: String| {
        let app = &app;
        async move {
            let before = app.state.db_stats.statements();
            let (status, _) = get(app, &path).await;
            assert_eq!(status, StatusCode::OK, "{path}");
            app.state.db_stats.statements() - before
        }
    };
    let range = "from=2030-01-01&to=2030-12-31";
    let utilisation = format!("/api/admin/reports/utilisation.csv?{range}");
    let bookings = format!("/api/admin/reports/bookings.csv?{range}");
    let one_area = (statements(utilisation.clone()).await, statements(bookings.clone()).await);
    for i in 0..5 {
        let code = format!("area-{i}");
        let zone = ["Europe/Berlin", "America/New_York", "Asia/Seoul"][i % 3];
        let (status, area) =
            send(&app, Method::POST, "/api/areas", ADMIN, Some(&code), json!({"code": code, "timeZone": zone})).await;
        assert_eq!(status, StatusCode::CREATED, "{area}");
        add_room(&app, json!({"code": format!("R{i}"), "name": format!("방 {i}"), "area": code})).await;
    }
    let many = (statements(utilisation).await, statements(bookings).await);
    // bookings.csv names people: its one statement and its access record (SPEC §26).
    assert_eq!(one_area, (1, 2));
    assert_eq!(many, one_area);
    let known: Value = json!(statements(format!("/api/admin/reports/utilisation.csv?{range}&area=area-1")).await);
    assert_eq!(known, json!(1), "one area: the same statement");
}
