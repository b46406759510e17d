//! `/admin/areas` and `/admin/holidays` (SPEC §24, §29): admins add and
//! edit areas — time zone, working hours as text, holiday calendar, flags —
//! and add holiday calendars whose days an uploaded `.ics` file replaces.
//! A refused form answers 4xx in the page's language with what was typed
//! and changes nothing; so does a forged one (CSRF) or a non-admin's.
//! In Chromium: both pages pass axe-core in Korean and English.

use fantoccini::Locator;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::browser::{assert_accessible, browser, chromedriver, screenshot, set_value, shot_path, sign_in};
use crate::helpers::*;
use crate::holidays::KOREAN_HOLIDAYS_2027;
use crate::web::{Browser, Page, ADMIN_PASSWORD, ADMIN_USER};
use crate::web_rooms::staff_member;

/// The tables an area or holiday form could change.
const TABLES: &[&str] = &["area", "holiday_calendar", "holiday", "room"];

/// `타워` as a path segment or query value.
const TOWER: &str = "%ED%83%80%EC%9B%8C";

/// The area form with every field, as the page sends it.
fn area_form(code: &str, csrf: &str, key: &str) -> Vec<(&'static str, String)> {
    vec![
        ("code", code.to_owned()),
        ("name", "타워 동".to_owned()),
        ("time_zone", "Asia/Seoul".to_owned()),
        ("working_hours", "mon 08:00-17:00, tue 08:00-17:00".to_owned()),
        ("holiday_calendar", String::new()),
        ("restrict_to_working_hours", "1".to_owned()),
        ("position", String::new()),
        ("csrf_token", csrf.to_owned()),
        ("idempotency_key", key.to_owned()),
    ]
}

fn set(form: &mut [(&'static str, String)], name: &str, value: &str) {
    form.iter_mut().find(|(k, _)| *k == name).unwrap_or_else(|| panic!("no field {name}")).1 = value.to_owned();
}

async fn post(b: &Browser<'_>, path: &str, form: &[(&'static str, String)]) -> Page {
    let borrowed: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    b.post(path, &borrowed).await
}

async fn area(app: &TestApp, code: &str) -> Value {
    let (status, body) = app.get_json("/api/areas", ADMIN).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["areas"].as_array().unwrap().iter().find(|a| a["code"] == code).cloned().unwrap_or(Value::Null)
}

/// Posts a multipart form: text fields, then an optional `file` part.
async fn upload(b: &Browser<'_>, path: &str, fields: &[(&str, &str)], file: Option<&[u8]>) -> Page {
    let boundary = "----yeyak-test-boundary-7MA4YWxkTrZu0gW";
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
        );
    }
    if let Some(file) = file {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"holidays.ics\"\r\n\
                 Content-Type: text/calendar\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(file);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    let res = b
        .client
        .post(b.app.url(path))
        .header("Content-Type", format!("multipart/form-data; boundary={boundary}"))
        .body(body)
        .send()
        .await
        .unwrap();
    let status = res.status();
    let location = res.headers().get("location").map(|v| v.to_str().unwrap().to_owned());
    Page { status, location, cookies: Vec::new(), html: res.text().await.unwrap() }
}

#[tokio::test]
async fn admins_add_and_edit_areas_through_the_forms() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let page = admin.get("/admin/areas").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.html.contains("href=\"/admin/areas\"") && page.html.contains("href=\"/admin/holidays\""), "nav");
    assert!(page.html.contains("<td>본관</td>") || page.html.contains(">본관</a>"), "the default area is listed");
    assert!(page.html.contains("mon 09:00-18:00, tue 09:00-18:00, wed 09:00-18:00"), "default hours as text");
    assert_eq!(page.field("time_zone"), "Asia/Seoul", "a new area starts in the installation's zone");
    let (csrf, key) = (page.field("csrf_token"), page.field("idempotency_key"));

    // Added: 303 back to the list, which names it.
    let form = area_form("타워", &csrf, &key);
    let added = post(&admin, "/admin/areas", &form).await;
    assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.html);
    assert_eq!(added.location.as_deref(), Some(&*format!("/admin/areas?created={TOWER}")));
    let list = admin.get(&format!("/admin/areas?created={TOWER}")).await;
    assert!(list.html.contains("타워 동 (타워) 구역을 추가했습니다."), "{}", list.html);
    assert!(list.html.contains(&format!("href=\"/admin/areas/{TOWER}\"")));
    let tower = area(&app, "타워").await;
    assert_eq!(
        (&tower["name"], &tower["timeZone"], &tower["restrictToWorkingHours"], &tower["closedOnHolidays"]),
        (&json!("타워 동"), &json!("Asia/Seoul"), &json!(true), &json!(false))
    );
    assert_eq!(
        tower["workingHours"],
        json!({"mon": ["08:00", "17:00"], "tue": ["08:00", "17:00"], "wed": null, "thu": null, "fri": null,
               "sat": null, "sun": null})
    );
    // The same rendered form again adds nothing and lands on the same list.
    let again = post(&admin, "/admin/areas", &form).await;
    assert_eq!(again.status, StatusCode::SEE_OTHER);
    assert_eq!(app.count("SELECT count(*) FROM area WHERE code = '타워'").await, 1);

    // Refused forms: 4xx, the message, the typed values, nothing changed.
    let before = fingerprint(&app, TABLES).await;
    let mut bad_zone = area_form("신관", &csrf, "bad-zone");
    set(&mut bad_zone, "time_zone", "Mars/Olympus_Mons");
    let refused = post(&admin, "/admin/areas", &bad_zone).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.html.contains("시간대 이름이 아닙니다 (IANA 이름, 예: Asia/Seoul): Mars/Olympus_Mons"));
    assert!(refused.html.contains("value=\"신관\"") && refused.html.contains("value=\"Mars/Olympus_Mons\""));
    assert_ne!(refused.field("idempotency_key"), "bad-zone", "the corrected form is a new request");
    let mut bad_hours = area_form("신관", &csrf, "bad-hours");
    set(&mut bad_hours, "working_hours", "mon 9-5");
    let refused = post(&admin, "/admin/areas", &bad_hours).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.html.contains("근무 시간은 mon 09:00-18:00, tue 09:00-18:00 처럼 적어 주세요"), "{}", refused.html);
    assert!(refused.html.contains("value=\"mon 9-5\""));
    let mut no_calendar = area_form("신관", &csrf, "no-calendar");
    set(&mut no_calendar, "holiday_calendar", "nowhere");
    let refused = post(&admin, "/admin/areas", &no_calendar).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.html.contains("그런 휴일 달력은 없습니다"));
    let taken = post(&admin, "/admin/areas", &area_form("타워", &csrf, "taken")).await;
    assert_eq!(taken.status, StatusCode::CONFLICT);
    assert!(taken.html.contains("이미 있는 구역 코드입니다: 타워"));
    let mut bad_position = area_form("신관", &csrf, "bad-position");
    set(&mut bad_position, "position", "0");
    assert_eq!(post(&admin, "/admin/areas", &bad_position).await.status, StatusCode::BAD_REQUEST);
    assert_eq!(fingerprint(&app, TABLES).await, before, "refused forms changed nothing");

    // Edit: the form shows the area; hours, zone, calendar and flags change.
    let (status, _) = send(
        &app,
        reqwest::Method::POST,
        "/api/holiday-calendars",
        ADMIN,
        Some("cal-us"),
        json!({"code": "us", "name": "US holidays"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let edit = admin.get(&format!("/admin/areas/{TOWER}")).await;
    assert_eq!(edit.status, StatusCode::OK, "{}", edit.html);
    assert!(edit.html.contains("readonly") && edit.html.contains("<option value=\"us\">US holidays (us)</option>"));
    assert_eq!(edit.field("working_hours"), "mon 08:00-17:00, tue 08:00-17:00");
    let mut changed = area_form("타워", &csrf, &edit.field("idempotency_key"));
    set(&mut changed, "time_zone", "America/New_York");
    set(&mut changed, "working_hours", "mon 09:00-18:00, wed 09:30-17:30, sat closed");
    set(&mut changed, "holiday_calendar", "us");
    set(&mut changed, "restrict_to_working_hours", "");
    changed.push(("closed_on_holidays", "1".to_owned()));
    let saved = post(&admin, &format!("/admin/areas/{TOWER}"), &changed).await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.html);
    assert_eq!(saved.location.as_deref(), Some(&*format!("/admin/areas?updated={TOWER}")));
    let list = admin.get(saved.location.as_deref().unwrap()).await;
    assert!(list.html.contains("타워 동 (타워) 구역 정보를 바꿨습니다."));
    assert!(list.html.contains("America/New_York") && list.html.contains("US holidays (us)"));
    let tower = area(&app, "타워").await;
    assert_eq!(
        (&tower["timeZone"], &tower["holidayCalendar"], &tower["restrictToWorkingHours"], &tower["closedOnHolidays"]),
        (&json!("America/New_York"), &json!("us"), &json!(false), &json!(true))
    );
    assert_eq!(tower["workingHours"]["wed"], json!(["09:30", "17:30"]));
    assert_eq!(tower["workingHours"]["tue"], Value::Null);

    // A refused edit in English: the page's language, the typed values, nothing changed.
    assert_eq!(admin.get("/admin/areas?lang=en").await.status, StatusCode::OK);
    let before = fingerprint(&app, TABLES).await;
    let mut bad = changed.clone();
    set(&mut bad, "time_zone", "Europe/Atlantis");
    set(&mut bad, "idempotency_key", "edit-bad-zone");
    let refused = post(&admin, &format!("/admin/areas/{TOWER}"), &bad).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.html.contains("Not a time zone name (IANA, e.g. Asia/Seoul): Europe/Atlantis"), "{}", refused.html);
    assert!(refused.html.contains("value=\"Europe/Atlantis\"") && refused.html.contains("readonly"));
    set(&mut bad, "time_zone", "Asia/Seoul");
    set(&mut bad, "working_hours", "monday 09:00-18:00");
    set(&mut bad, "idempotency_key", "edit-bad-hours");
    let refused = post(&admin, &format!("/admin/areas/{TOWER}"), &bad).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.html.contains("Write the working hours as mon 09:00-18:00"), "{}", refused.html);
    assert_eq!(fingerprint(&app, TABLES).await, before);
    assert_eq!(admin.get("/admin/areas/nowhere").await.status, StatusCode::NOT_FOUND);

    // Any printable code is one path segment: the list links to its page.
    let (status, _) =
        send(&app, reqwest::Method::POST, "/api/areas", ADMIN, Some("odd"), json!({"code": "3F / B?#%"})).await;
    assert_eq!(status, StatusCode::CREATED);
    let list = admin.get("/admin/areas").await;
    let href = "/admin/areas/3F%20%2F%20B%3F%23%25";
    assert!(list.html.contains(&format!("href=\"{href}\"")), "{}", list.html);
    let odd = admin.get(href).await;
    assert_eq!(odd.status, StatusCode::OK);
    assert!(odd.html.contains("action=\"/admin/areas/3F%20%2F%20B%3F%23%25\""));
}

#[tokio::test]
async fn holiday_calendars_are_added_and_filled_from_an_uploaded_ics_file() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let page = admin.get("/admin/holidays").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.html.contains("아직 휴일 달력이 없습니다."));
    let csrf = page.field("csrf_token");
    let form = vec![
        ("code", "kr".to_owned()),
        ("name", "대한민국 공휴일".to_owned()),
        ("csrf_token", csrf.clone()),
        ("idempotency_key", page.field("idempotency_key")),
    ];
    let added = post(&admin, "/admin/holidays", &form).await;
    assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.html);
    let list = admin.get(added.location.as_deref().unwrap()).await;
    assert!(list.html.contains("대한민국 공휴일 (kr) 휴일 달력을 추가했습니다."), "{}", list.html);
    assert!(list.html.contains("action=\"/admin/holidays/kr/days\"") && list.html.contains("multipart/form-data"));
    let taken = post(&admin, "/admin/holidays", &[("code", "kr".into()), ("csrf_token", csrf.clone())]).await;
    assert_eq!(taken.status, StatusCode::BAD_REQUEST, "no idempotency key");
    let mut dup = form.clone();
    dup[3].1 = "dup".into();
    let taken = post(&admin, "/admin/holidays", &dup).await;
    assert_eq!(taken.status, StatusCode::CONFLICT);
    assert!(taken.html.contains("이미 있는 휴일 달력 코드입니다: kr") && taken.html.contains("value=\"kr\""));

    // The file replaces the days: 303 back, and the page lists them.
    let uploaded =
        upload(&admin, "/admin/holidays/kr/days", &[("csrf_token", &csrf)], Some(KOREAN_HOLIDAYS_2027.as_bytes()))
            .await;
    assert_eq!(uploaded.status, StatusCode::SEE_OTHER, "{}", uploaded.html);
    assert_eq!(uploaded.location.as_deref(), Some("/admin/holidays?replaced=kr"));
    let list = admin.get("/admin/holidays?replaced=kr").await;
    assert!(list.html.contains("대한민국 공휴일의 휴일을 파일의 5일로 바꿨습니다."), "{}", list.html);
    assert!(list.html.contains("<time datetime=\"2027-02-07\">2027-02-07</time></td><td>Seollal</td>"));
    let (_, calendars) = app.get_json("/api/holiday-calendars", ADMIN).await;
    assert_eq!(calendars["calendars"][0]["days"].as_array().unwrap().len(), 5);

    // What is not a holiday file: 400, said so, nothing changed.
    let before = fingerprint(&app, TABLES).await;
    let recurring =
        KOREAN_HOLIDAYS_2027.replace("SUMMARY:Seollal\r\n", "SUMMARY:Seollal\r\nRRULE:FREQ=YEARLY\r\n").into_bytes();
    let not_utf8: &[u8] = &[0xff, 0xfe, 0x00, 0x42];
    for (what, file) in [
        ("text", &b"hello, world"[..]),
        ("recurring", &recurring[..]),
        ("binary", not_utf8),
        ("half", &recurring[..60]),
    ] {
        let refused = upload(&admin, "/admin/holidays/kr/days", &[("csrf_token", &csrf)], Some(file)).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{what}");
        assert!(refused.html.contains("올린 파일은 휴일 달력(.ics)이 아닙니다"), "{what}: {}", refused.html);
        assert!(refused.html.contains("<td>Seollal</td>"), "the days shown are the old ones");
    }
    let empty = upload(&admin, "/admin/holidays/kr/days", &[("csrf_token", &csrf)], None).await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST);
    assert!(empty.html.contains("kr 달력에 올릴 .ics 파일을 골라 주세요"));
    let big = vec![b'x'; 1024 * 1024 + 1];
    let too_large = upload(&admin, "/admin/holidays/kr/days", &[("csrf_token", &csrf)], Some(&big)).await;
    assert_eq!(too_large.status, StatusCode::PAYLOAD_TOO_LARGE);
    let unknown =
        upload(&admin, "/admin/holidays/nope/days", &[("csrf_token", &csrf)], Some(KOREAN_HOLIDAYS_2027.as_bytes()))
            .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert!(unknown.html.contains("nope 휴일 달력은 없습니다."));
    // Forged: no token, or another session's.
    let other = Browser::new(&app);
    other.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let other_token = other.get("/admin/holidays").await.field("csrf_token");
    for fields in [vec![], vec![("csrf_token", other_token.as_str())]] {
        let forged =
            upload(&admin, "/admin/holidays/kr/days", &fields, Some(b"BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n")).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
    }
    // In English, the refusal is in English.
    admin.get("/admin/holidays?lang=en").await;
    let refused = upload(&admin, "/admin/holidays/kr/days", &[("csrf_token", &csrf)], Some(b"hello")).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.html.contains("The file is not a holiday calendar (.ics)"));
    assert_eq!(fingerprint(&app, TABLES).await, before, "refused uploads changed nothing");
}

#[tokio::test]
async fn forged_forms_and_staff_who_are_not_admins_change_nothing() {
    let app = TestApp::spawn().await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let kim = staff_member(&app, &admin, "kim").await;
    let before = fingerprint(&app, TABLES).await;
    for path in ["/admin/areas", "/admin/areas/%EB%B3%B8%EA%B4%80", "/admin/holidays"] {
        assert_eq!(kim.get(path).await.status, StatusCode::FORBIDDEN, "{path}");
    }
    let kim_csrf = kim.get("/my").await.field("csrf_token");
    for path in ["/admin/areas", "/admin/areas/%EB%B3%B8%EA%B4%80", "/admin/holidays"] {
        let mut form = area_form("본관", &kim_csrf, &format!("kim-{path}"));
        assert_eq!(post(&kim, path, &form).await.status, StatusCode::FORBIDDEN, "{path} by staff");
        set(&mut form, "csrf_token", "");
        assert_eq!(post(&admin, path, &form).await.status, StatusCode::FORBIDDEN, "{path} without a token");
        set(&mut form, "csrf_token", &kim_csrf);
        assert_eq!(post(&admin, path, &form).await.status, StatusCode::FORBIDDEN, "{path} with kim's token");
    }
    let file = Some(KOREAN_HOLIDAYS_2027.as_bytes());
    let by_kim = upload(&kim, "/admin/holidays/kr/days", &[("csrf_token", &kim_csrf)], file).await;
    assert_eq!(by_kim.status, StatusCode::FORBIDDEN);
    let forged = upload(&admin, "/admin/holidays/kr/days", &[("csrf_token", &kim_csrf)], file).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    assert_eq!(fingerprint(&app, TABLES).await, before);
}

/// Both pages in Chromium, in Korean and English, axe-core clean — with a
/// calendar of days, an area naming it, and a refused form.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_area_and_holiday_pages_in_a_real_browser() {
    let app = TestApp::spawn().await;
    let (status, _) = send(
        &app,
        reqwest::Method::POST,
        "/api/holiday-calendars",
        ADMIN,
        Some("cal-kr"),
        json!({"code": "kr", "name": "대한민국 공휴일"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let res = app
        .request(reqwest::Method::PUT, "/api/holiday-calendars/kr/days", ADMIN, None)
        .header("Content-Type", "text/calendar")
        .body(KOREAN_HOLIDAYS_2027)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    for (i, (code, zone, hours)) in [
        ("타워", "Asia/Seoul", json!({"mon": ["08:00", "17:00"], "fri": ["08:00", "15:00"]})),
        ("뉴욕", "America/New_York", json!({"mon": ["09:00", "18:00"], "tue": ["09:00", "18:00"]})),
    ]
    .into_iter()
    .enumerate()
    {
        let body = json!({"code": code, "name": format!("{code} 사무소"), "timeZone": zone, "workingHours": hours,
                          "holidayCalendar": if i == 0 { json!("kr") } else { Value::Null },
                          "restrictToWorkingHours": i == 0, "closedOnHolidays": i == 0});
        let idem = format!("area-{i}");
        let (status, area) = send(&app, reqwest::Method::POST, "/api/areas", ADMIN, Some(&idem), body).await;
        assert_eq!(status, StatusCode::CREATED, "{area}");
    }
    let (_driver, port) = chromedriver().await;
    let c = browser(port).await;
    let result = async {
        sign_in(&app, &c).await?;
        c.goto(&app.url("/admin/areas")).await?;
        c.find(Locator::Css("nav a[href='/admin/holidays']")).await?;
        assert_eq!(c.find_all(Locator::Css("table.list tbody tr")).await?.len(), 3);
        screenshot(&c, "admin-areas").await;
        assert_accessible(&c, "areas page").await;
        // A refused form: the message and the typed zone, still accessible.
        set_value(&c, "#code", "신관").await;
        set_value(&c, "#time_zone", "Mars/Olympus_Mons").await;
        c.find(Locator::Css("form[action='/admin/areas'] button[type=submit]")).await?.click().await?;
        c.wait().for_element(Locator::Css(".notice.error")).await?;
        assert!(c.find(Locator::Css(".notice.error")).await?.text().await?.contains("Mars/Olympus_Mons"));
        assert_accessible(&c, "areas page with a refused form").await;
        c.goto(&app.url("/admin/areas/%ED%83%80%EC%9B%8C")).await?;
        assert_eq!(
            c.find(Locator::Css("#working_hours")).await?.prop("value").await?.as_deref(),
            Some("mon 08:00-17:00, fri 08:00-15:00")
        );
        assert_accessible(&c, "area page").await;
        c.goto(&app.url("/admin/holidays")).await?;
        assert_eq!(c.find_all(Locator::Css("table.holidays tbody tr")).await?.len(), 5);
        screenshot(&c, "admin-holidays").await;
        assert_accessible(&c, "holidays page").await;
        for page in ["/admin/areas?lang=en", "/admin/areas/%EB%89%B4%EC%9A%95", "/admin/holidays"] {
            c.goto(&app.url(page)).await?;
            assert_eq!(c.find(Locator::Css("html")).await?.attr("lang").await?.as_deref(), Some("en"), "{page}");
            assert_accessible(&c, &format!("{page} in English")).await;
        }
        c.goto(&app.url("/admin/areas")).await?;
        assert!(c.source().await?.contains("<h1>Areas</h1>"));
        screenshot(&c, "admin-areas-en").await;
        Ok::<_, fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.unwrap();
    assert!(shot_path("admin-areas").exists());
}
