//! `REPORT`s on a person's `bookings/` follow RFC 4791 (SPEC §23):
//! `calendar-query` filters on any component (`VTODO`, `VALARM`), property,
//! parameter, text (`text-match`, collations, negation), absence
//! (`is-not-defined`) and time (repeating events by their instances,
//! overrides by their own times, to-dos, alarms); `expand` writes a series
//! as its instances; `free-busy-query` answers on `bookings/` too.

use reqwest::StatusCode;

use crate::caldav::Dav;
use crate::helpers::*;

fn t(days: i64, h: u32) -> String {
    at(days, h, 0).replace(['-', ':'], "")[..15].to_owned() + "Z"
}

fn calendar(body: &str) -> String {
    format!("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Some App//EN\r\n{body}END:VCALENDAR\r\n")
}

/// Kim's collection with: a weekly series (four weeks from day 7, the
/// second week excluded, the third moved three hours later), a one-off
/// meeting with a location and a declined colleague, an all-day event
/// marked free, and a to-do due on day 3 with an alarm an hour before.
async fn collection(app: &TestApp) -> Dav<'_> {
    let dav = Dav::person(app, "kim").await;
    let weekly = calendar(&format!(
        "BEGIN:VEVENT\r\nUID:weekly\r\nDTSTAMP:20300101T000000Z\r\nDTSTART:{}\r\nDTEND:{}\r\n\
         RRULE:FREQ=WEEKLY;COUNT=4\r\nEXDATE:{}\r\nSUMMARY:Weekly Sync\r\nEND:VEVENT\r\n\
         BEGIN:VEVENT\r\nUID:weekly\r\nDTSTAMP:20300101T000000Z\r\nRECURRENCE-ID:{}\r\nDTSTART:{}\r\nDTEND:{}\r\n\
         SUMMARY:Weekly Sync (moved)\r\nEND:VEVENT\r\n",
        t(7, 1),
        t(7, 2),
        t(14, 1),
        t(21, 1),
        t(21, 4),
        t(21, 5)
    ));
    let once = calendar(&format!(
        "BEGIN:VEVENT\r\nUID:once\r\nDTSTAMP:20300101T000000Z\r\nDTSTART:{}\r\nDTEND:{}\r\nSUMMARY:Budget review\r\n\
         LOCATION:3층\r\nATTENDEE;PARTSTAT=DECLINED;CN=Lee:mailto:lee@example.com\r\n\
         BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:soon\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n",
        t(2, 5),
        t(2, 6)
    ));
    let free = calendar(&format!(
        "BEGIN:VEVENT\r\nUID:free\r\nDTSTAMP:20300101T000000Z\r\nDTSTART;VALUE=DATE:{}\r\nSUMMARY:휴가\r\nTRANSP:TRANSPARENT\r\nEND:VEVENT\r\n",
        &t(4, 0)[..8]
    ));
    let todo = calendar(&format!(
        "BEGIN:VTODO\r\nUID:todo\r\nDTSTAMP:20300101T000000Z\r\nDUE:{}\r\nSUMMARY:Send the minutes\r\n\
         BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:due\r\nTRIGGER;RELATED=START:-PT1H\r\nEND:VALARM\r\nEND:VTODO\r\n",
        t(3, 9)
    ));
    for (name, body) in [("weekly.ics", weekly), ("once.ics", once), ("free.ics", free), ("todo.ics", todo)] {
        let put = dav.put(name, &body, &[]).await;
        assert_eq!(put.status, StatusCode::CREATED, "{name}: {}", put.body);
    }
    dav
}

/// The member names a `calendar-query` with `filter` answers, sorted.
async fn query(dav: &Dav<'_>, filter: &str) -> Vec<String> {
    let body = format!(
        r#"<?xml version="1.0"?><C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
           <D:prop><D:getetag/></D:prop><C:filter>{filter}</C:filter></C:calendar-query>"#
    );
    let res = dav.report("/dav/calendars/kim/bookings/", &body).await;
    assert_eq!(res.status, StatusCode::MULTI_STATUS, "{filter}: {}", res.body);
    let mut names: Vec<String> = res
        .body
        .split("<D:href>")
        .skip(1)
        .filter_map(|s| s.split("</D:href>").next())
        .filter_map(|href| href.rsplit('/').next().map(str::to_owned))
        .collect();
    names.sort();
    names
}

fn events(inner: &str) -> String {
    format!(r#"<C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT">{inner}</C:comp-filter></C:comp-filter>"#)
}

fn range(from: (i64, u32), to: (i64, u32)) -> String {
    format!(r#"<C:time-range start="{}" end="{}"/>"#, t(from.0, from.1), t(to.0, to.1))
}

#[tokio::test]
async fn components_properties_parameters_and_text_are_filtered_as_rfc_4791_says() {
    let app = TestApp::spawn().await;
    let dav = collection(&app).await;
    let todos = r#"<C:comp-filter name="VCALENDAR"><C:comp-filter name="VTODO"/></C:comp-filter>"#;
    assert_eq!(query(&dav, todos).await, vec!["todo.ics"]);
    assert_eq!(query(&dav, &events("")).await, vec!["free.ics", "once.ics", "weekly.ics"]);
    let text = |needle: &str, extra: &str| {
        events(&format!(
            r#"<C:prop-filter name="SUMMARY"><C:text-match {extra}>{needle}</C:text-match></C:prop-filter>"#
        ))
    };
    assert_eq!(query(&dav, &text("weekly", "")).await, vec!["weekly.ics"], "ascii-casemap by default");
    assert_eq!(query(&dav, &text("weekly", r#"collation="i;octet""#)).await, Vec::<String>::new());
    assert_eq!(query(&dav, &text("Weekly", r#"collation="i;octet""#)).await, vec!["weekly.ics"]);
    assert_eq!(query(&dav, &text("weekly", r#"negate-condition="yes""#)).await, vec!["free.ics", "once.ics"]);
    assert_eq!(query(&dav, &text("휴가", r#"collation="i;unicode-casemap""#)).await, vec!["free.ics"]);
    let no_location = events(r#"<C:prop-filter name="LOCATION"><C:is-not-defined/></C:prop-filter>"#);
    assert_eq!(query(&dav, &no_location).await, vec!["free.ics", "weekly.ics"]);
    let declined = events(
        r#"<C:prop-filter name="ATTENDEE"><C:param-filter name="PARTSTAT"><C:text-match>DECLINED</C:text-match></C:param-filter></C:prop-filter>"#,
    );
    assert_eq!(query(&dav, &declined).await, vec!["once.ics"]);
    let with_alarm = events(r#"<C:comp-filter name="VALARM"/>"#);
    assert_eq!(query(&dav, &with_alarm).await, vec!["once.ics"]);
    let without_alarm = events(r#"<C:comp-filter name="VALARM"><C:is-not-defined/></C:comp-filter>"#);
    assert_eq!(query(&dav, &without_alarm).await, vec!["free.ics", "weekly.ics"]);

    let odd = dav
        .report(
            "/dav/calendars/kim/bookings/",
            &format!(
                r#"<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><C:filter>{}</C:filter></C:calendar-query>"#,
                text("x", r#"collation="i;klingon""#)
            ),
        )
        .await;
    assert_eq!(odd.status, StatusCode::FORBIDDEN);
    assert!(odd.body.contains("supported-collation"), "{}", odd.body);
}

#[tokio::test]
async fn time_ranges_find_series_instances_overrides_to_dos_and_alarms() {
    let app = TestApp::spawn().await;
    let dav = collection(&app).await;
    let weekly_in = |from: (i64, u32), to: (i64, u32)| events(&range(from, to));
    assert_eq!(query(&dav, &weekly_in((28, 0), (28, 23))).await, vec!["weekly.ics"], "the fourth week");
    assert_eq!(query(&dav, &weekly_in((14, 0), (14, 23))).await, Vec::<String>::new(), "the excluded week");
    assert_eq!(query(&dav, &weekly_in((21, 0), (21, 2))).await, Vec::<String>::new(), "where the override left");
    assert_eq!(query(&dav, &weekly_in((21, 4), (21, 5))).await, vec!["weekly.ics"], "where the override went");
    assert_eq!(query(&dav, &weekly_in((35, 0), (40, 0))).await, Vec::<String>::new(), "after COUNT");
    assert_eq!(query(&dav, &weekly_in((4, 12), (4, 13))).await, vec!["free.ics"], "an all-day event lasts the day");
    let todos = |from: (i64, u32), to: (i64, u32)| {
        format!(
            r#"<C:comp-filter name="VCALENDAR"><C:comp-filter name="VTODO">{}</C:comp-filter></C:comp-filter>"#,
            range(from, to)
        )
    };
    assert_eq!(query(&dav, &todos((3, 0), (3, 10))).await, vec!["todo.ics"], "due inside");
    assert_eq!(query(&dav, &todos((3, 10), (3, 12))).await, Vec::<String>::new(), "due before");
    let weekly_todo = calendar(&format!(
        "BEGIN:VTODO\r\nUID:weekly-todo\r\nDTSTAMP:20300101T000000Z\r\nDTSTART:{}\r\nDUE:{}\r\n\
         RRULE:FREQ=WEEKLY;COUNT=3\r\nSUMMARY:Water the plants\r\nEND:VTODO\r\n",
        t(5, 12),
        t(5, 13)
    ));
    assert_eq!(dav.put("weekly-todo.ics", &weekly_todo, &[]).await.status, StatusCode::CREATED);
    assert_eq!(query(&dav, &todos((12, 12), (12, 13))).await, vec!["weekly-todo.ics"], "a to-do's second week");
    assert_eq!(query(&dav, &todos((26, 0), (27, 0))).await, Vec::<String>::new(), "after its COUNT");
    let alarms = |from: (i64, u32), to: (i64, u32)| {
        events(&format!(r#"<C:comp-filter name="VALARM">{}</C:comp-filter>"#, range(from, to)))
    };
    // once.ics starts at 05:00 on day 2; its alarm rings at 04:45.
    assert_eq!(query(&dav, &alarms((2, 4), (2, 5))).await, vec!["once.ics"]);
    assert_eq!(query(&dav, &alarms((2, 5), (2, 6))).await, Vec::<String>::new(), "the meeting, not its alarm");
}

#[tokio::test]
async fn expand_writes_a_series_as_its_instances_and_free_busy_answers_on_bookings() {
    let app = TestApp::spawn().await;
    let dav = collection(&app).await;
    let body = format!(
        r#"<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><C:calendar-data>
           <C:expand start="{}" end="{}"/></C:calendar-data></D:prop><C:filter>{}</C:filter></C:calendar-query>"#,
        t(0, 0),
        t(30, 0),
        events(&range((0, 0), (30, 0)))
    );
    let res = dav.report("/dav/calendars/kim/bookings/", &body).await;
    assert_eq!(res.status, StatusCode::MULTI_STATUS, "{}", res.body);
    let weekly = res.body.split("<D:response>").find(|r| r.contains("weekly.ics")).unwrap().replace("&#13;", "");
    assert!(!weekly.contains("RRULE") && !weekly.contains("EXDATE") && !weekly.contains("VTIMEZONE"), "{weekly}");
    assert_eq!(weekly.matches("BEGIN:VEVENT").count(), 3, "four weeks less the excluded one: {weekly}");
    for (day, h) in [(7, 1), (21, 4), (28, 1)] {
        assert!(weekly.contains(&format!("DTSTART:{}", t(day, h))), "day {day}: {weekly}");
    }
    assert!(weekly.contains(&format!("RECURRENCE-ID:{}", t(21, 1))), "{weekly}");

    let fb = format!(
        r#"<C:free-busy-query xmlns:C="urn:ietf:params:xml:ns:caldav"><C:time-range start="{}" end="{}"/></C:free-busy-query>"#,
        t(0, 0),
        t(10, 0)
    );
    let res = dav.report("/dav/calendars/kim/bookings/", &fb).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let busy: Vec<&str> = res.body.lines().filter(|l| l.starts_with("FREEBUSY")).collect();
    assert_eq!(
        busy,
        vec![
            format!("FREEBUSY;FBTYPE=BUSY:{}/{}", t(2, 5), t(2, 6)).as_str(),
            format!("FREEBUSY;FBTYPE=BUSY:{}/{}", t(7, 1), t(7, 2)).as_str(),
        ],
        "the transparent day and the to-do are free: {}",
        res.body
    );
}
