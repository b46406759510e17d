//! The mail a calendar app's event sends (SPEC §23, iMIP): a declining room
//! replies to the organizer; colleagues are invited once per change of
//! time, rooms or summary, and cancelled when taken off or when the event
//! goes; never those the app schedules itself, never with `YEYAK_IMIP=false`.
//! Received by a real SMTP server and read by Python's `email`.

use reqwest::StatusCode;
use serde_json::Value;

use crate::caldav::Dav;
use crate::calendar::{deliver, parse_mail};
use crate::helpers::*;
use crate::smtp_sink::Sink;

fn ics_time(days: i64, h: u32) -> String {
    at(days, h, 0).replace(['-', ':'], "")[..15].to_owned() + "Z"
}

/// Kim's event with rooms and colleagues (`;PARAMS:address` each).
fn event(
    uid: &str,
    summary: &str,
    rooms: &[&str],
    day: i64,
    (start, end): (u32, u32),
    guests: &[&str],
    extra: &str,
) -> String {
    let rooms: String = rooms
        .iter()
        .map(|r| format!("ATTENDEE;CUTYPE=ROOM;PARTSTAT=NEEDS-ACTION:mailto:room-{}@yeyak.local\r\n", r.to_lowercase()))
        .collect();
    let guests: String = guests.iter().map(|g| format!("ATTENDEE{g}\r\n")).collect();
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Some App//EN\r\nBEGIN:VEVENT\r\nUID:{uid}\r\n\
         DTSTAMP:20300101T000000Z\r\nDTSTART:{}\r\nDTEND:{}\r\nSUMMARY:{summary}\r\n{extra}\
         ORGANIZER;CN=Kim:mailto:kim@example.com\r\nATTENDEE;CN=Kim;PARTSTAT=ACCEPTED:mailto:kim@example.com\r\n\
         {guests}{rooms}BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:soon\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\n\
         END:VEVENT\r\nEND:VCALENDAR\r\n",
        ics_time(day, start),
        ics_time(day, end)
    )
}

/// Kim (Korean, kim@example.com) in the calendar door, and Park, a yeyak
/// person who reads English (park@example.com).
async fn people(app: &TestApp) -> Dav<'_> {
    let dav = Dav::person(app, "kim").await;
    let _park = Dav::person(app, "park").await;
    let db = app.db().await;
    db.batch_execute(
        "UPDATE staff_user SET email = 'kim@example.com', language = 'ko' WHERE username = 'kim';
         UPDATE staff_user SET email = 'Park@Example.com', language = 'en' WHERE username = 'park';",
    )
    .await
    .unwrap();
    dav
}

/// The iMIP messages received since `seen`: (method, to, the mail as read).
fn imip(sink: &Sink, seen: &mut usize) -> Vec<(String, String, Value)> {
    let all = sink.received();
    let new = all[*seen..].to_vec();
    *seen = all.len();
    new.into_iter()
        .map(|m| (m.to.join(",").replace(['<', '>'], ""), m.data))
        .filter_map(|(to, data)| {
            let mail = parse_mail(&data);
            let method = mail["parts"].as_array()?.iter().find_map(|p| p["method"].as_str().map(str::to_owned))?;
            let ics =
                mail["parts"].as_array()?.iter().find(|p| p["type"] == "text/calendar")?["text"].as_str()?.to_owned();
            // yeyak's own booking notices are not iMIP messages of the event.
            (ics.contains("PRODID:-//Some App//EN") || method == "REPLY").then(|| {
                let mut mail = mail;
                mail["raw"] = Value::String(data);
                (method, to, mail)
            })
        })
        .collect()
}

fn sorted(mut v: Vec<(String, String)>) -> Vec<(String, String)> {
    v.sort();
    v
}

fn calendar_of(mail: &Value) -> String {
    let part = mail["parts"].as_array().unwrap().iter().find(|p| p["type"] == "text/calendar").unwrap();
    part["text"].as_str().unwrap().replace("\r\n ", "")
}

fn text_of(mail: &Value) -> String {
    mail["parts"].as_array().unwrap().iter().find(|p| p["type"] == "text/plain").unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_declining_room_replies_to_the_organizer_and_colleagues_are_invited_in_their_language() {
    let (sink, smtp) = Sink::start().await;
    let app = TestApp::spawn_with(|c| c.smtp_url = Some(smtp.clone())).await;
    let dav = people(&app).await;
    let (status, _) = body(
        app.create_booking(TENANT_ONE, "ops", "taken", &booking("먼저", &["A"], &at(1, 1, 0), &at(1, 2, 0))).await,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let guests = [
        ";CN=\"Lee, Young\";PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:lee@example.com",
        ";CN=Park:mailto:park@example.com",
        ";SCHEDULE-AGENT=CLIENT:mailto:choi@example.com",
    ];
    let put = dav.put("plan.ics", &event("plan-1", "분기 계획", &["A"], 1, (1, 2), &guests, ""), &[]).await;
    assert_eq!(put.status, StatusCode::CREATED, "the event is stored though its room declines: {}", put.body);
    deliver(&app, &smtp).await;
    let mut seen = 0;
    let mails = imip(&sink, &mut seen);
    let who: Vec<(String, String)> = mails.iter().map(|(m, to, _)| (m.clone(), to.clone())).collect();
    assert_eq!(
        sorted(who),
        vec![
            ("REPLY".into(), "kim@example.com".into()),
            ("REQUEST".into(), "lee@example.com".into()),
            ("REQUEST".into(), "park@example.com".into()),
        ],
        "choi schedules themselves (SCHEDULE-AGENT=CLIENT), kim is the organizer"
    );
    let (_, _, reply) = mails.iter().find(|(m, _, _)| m == "REPLY").unwrap();
    let ics = calendar_of(reply);
    assert!(ics.contains("METHOD:REPLY\r\n") && ics.contains("UID:plan-1\r\n"), "{ics}");
    assert!(ics.contains("PARTSTAT=DECLINED:mailto:room-a@yeyak.local\r\n"), "{ics}");
    assert!(ics.contains("COMMENT:이미 예약된 시간입니다"), "the reason in Kim's language: {ics}");
    assert!(reply["raw"].as_str().unwrap().contains("room-a@yeyak.local>"), "from the room's address");
    assert!(text_of(reply).contains("이미 예약된 시간입니다"), "{}", text_of(reply));
    for (_, to, mail) in mails.iter().filter(|(m, _, _)| m == "REQUEST") {
        let ics = calendar_of(mail);
        assert!(ics.contains("METHOD:REQUEST\r\n") && ics.contains("UID:plan-1\r\n"), "{ics}");
        assert!(!ics.contains("VALARM"), "Kim's alarms are Kim's: {ics}");
        assert!(ics.contains("PARTSTAT=DECLINED") && ics.contains("X-YEYAK-CODE=ROOM_TIME_TAKEN"), "as stored: {ics}");
        let text = text_of(mail);
        if to == "park@example.com" {
            assert!(text.contains("invites you"), "Park reads English: {text}");
        } else {
            assert!(text.contains("회의에 초대했습니다"), "anyone else reads Kim's language: {text}");
        }
    }
    // The same bytes again change nothing and mail nobody.
    let again = dav.put("plan.ics", &event("plan-1", "분기 계획", &["A"], 1, (1, 2), &guests, ""), &[]).await;
    assert_eq!(again.status, StatusCode::NO_CONTENT);
    deliver(&app, &smtp).await;
    assert!(imip(&sink, &mut seen).is_empty());
}

#[tokio::test]
async fn colleagues_hear_once_per_change_and_are_cancelled_when_taken_off_or_when_it_goes() {
    let (sink, smtp) = Sink::start().await;
    let app = TestApp::spawn_with(|c| c.smtp_url = Some(smtp.clone())).await;
    let dav = people(&app).await;
    let both = [":mailto:lee@example.com", ";CN=Park:mailto:park@example.com"];
    let mut seen = 0;
    let mut put = async |ics: String| {
        let res = dav.put("m.ics", &ics, &[]).await;
        assert!(res.status.is_success(), "{}", res.body);
        deliver(&app, &smtp).await;
        let got: Vec<(String, String)> = imip(&sink, &mut seen).into_iter().map(|(m, to, _)| (m, to)).collect();
        sorted(got)
    };
    let request = |to: &str| ("REQUEST".to_owned(), to.to_owned());
    let cancel = |to: &str| ("CANCEL".to_owned(), to.to_owned());

    let first = put(event("m-1", "주간 회의", &["B"], 2, (3, 4), &both, "")).await;
    assert_eq!(first, vec![request("lee@example.com"), request("park@example.com")]);
    let described = put(event("m-1", "주간 회의", &["B"], 2, (3, 4), &both, "DESCRIPTION:자료 첨부\r\n")).await;
    assert_eq!(described, vec![], "a description asks nobody again");
    let moved = put(event("m-1", "주간 회의", &["B"], 2, (5, 6), &both, "DESCRIPTION:자료 첨부\r\n")).await;
    assert_eq!(moved, vec![request("lee@example.com"), request("park@example.com")], "a new time asks everyone");
    let retitled = put(event("m-1", "주간 회의 (변경)", &["B"], 2, (5, 6), &both, "DESCRIPTION:자료 첨부\r\n")).await;
    assert_eq!(retitled, vec![request("lee@example.com"), request("park@example.com")]);
    let added = [":mailto:lee@example.com", ";CN=Park:mailto:park@example.com", ":mailto:choi@example.com"];
    let one_more = put(event("m-1", "주간 회의 (변경)", &["B"], 2, (5, 6), &added, "DESCRIPTION:자료 첨부\r\n")).await;
    assert_eq!(one_more, vec![request("choi@example.com")], "only the one added hears of it");
    let without_park = [":mailto:lee@example.com", ":mailto:choi@example.com"];
    let dropped =
        put(event("m-1", "주간 회의 (변경)", &["B"], 2, (5, 6), &without_park, "DESCRIPTION:자료 첨부\r\n")).await;
    assert_eq!(dropped, vec![cancel("park@example.com")]);
    let cancelled = sink.received().last().unwrap().data.clone();
    let ics = calendar_of(&parse_mail(&cancelled));
    assert!(
        ics.contains("METHOD:CANCEL\r\n") && ics.contains("STATUS:CANCELLED\r\n") && ics.contains("UID:m-1\r\n"),
        "{ics}"
    );

    let gone = dav.send("DELETE", "/dav/calendars/kim/bookings/m.ics", &[], "").await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT);
    deliver(&app, &smtp).await;
    let got: Vec<(String, String)> = imip(&sink, &mut seen).into_iter().map(|(m, to, _)| (m, to)).collect();
    assert_eq!(sorted(got), vec![cancel("choi@example.com"), cancel("lee@example.com")]);
    app.assert_consistent().await;
}

#[tokio::test]
async fn with_yeyak_imip_false_nobody_is_mailed_but_the_rooms_still_answer() {
    let (sink, smtp) = Sink::start().await;
    let app = TestApp::spawn_with(|c| {
        c.smtp_url = Some(smtp.clone());
        c.imip = false;
    })
    .await;
    let dav = people(&app).await;
    let (status, _) = body(
        app.create_booking(TENANT_ONE, "ops", "taken", &booking("먼저", &["A"], &at(1, 1, 0), &at(1, 2, 0))).await,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let put = dav.put("x.ics", &event("x-1", "회의", &["A"], 1, (1, 2), &[":mailto:lee@example.com"], ""), &[]).await;
    assert_eq!(put.status, StatusCode::CREATED);
    let got = dav.send("GET", "/dav/calendars/kim/bookings/x.ics", &[], "").await;
    assert!(got.body.replace("\r\n ", "").contains("X-YEYAK-CODE=ROOM_TIME_TAKEN"), "{}", got.body);
    deliver(&app, &smtp).await;
    assert!(imip(&sink, &mut 0).is_empty());
    assert_eq!(app.count("SELECT count(*) FROM notification_outbox WHERE kind LIKE 'imip.%'").await, 0);
}
