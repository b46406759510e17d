//! Calendar text is always escaped (SPEC §20): every text property and
//! parameter yeyak writes in feeds, downloads and invitations, read back as
//! a calendar reads it.

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;
use crate::smtp_sink::Sink;
use crate::web::{Browser, ADMIN_PASSWORD, ADMIN_USER};

/// The content lines of an iCalendar text, unfolded.
fn unfolded(text: &str) -> Vec<String> {
    text.replace("\r\n ", "").split("\r\n").map(str::to_owned).collect()
}

fn line<'a>(lines: &'a [String], name: &str) -> &'a str {
    let prefix = format!("{name}:");
    lines.iter().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("no {name} in {lines:#?}"))
}

#[tokio::test]
async fn calendar_text_is_escaped_in_feeds_downloads_and_invitations() {
    let (sink, smtp) = Sink::start().await;
    let app = TestApp::spawn_with(|c| c.smtp_url = Some(smtp.clone())).await;
    let admin = Browser::new(&app);
    admin.sign_in(ADMIN_USER, ADMIN_PASSWORD).await;
    let room = r#"회의실; 1, 2 \ 3: "큰 방""#;
    add_room(&app, json!({"code": "Q", "name": room})).await;
    let display = r#"김, 민지; 팀장: A\B"#;
    let (kim, kim_browser) = add_person_signed_in(&app, &admin, "kim", display).await;
    let title = r#"분기, 계획; "검토" \ 끝: X-INJECT"#;
    let date = crate::web::tomorrow(&app);
    let booked = kim_browser.book(&date, title, "10:00", "11:00", &["Q"]).await;
    assert_eq!(booked.status, StatusCode::SEE_OTHER, "{}", booked.html);
    let id = crate::web::booked_id(&booked);

    let esc = |s: &str| s.replace('\\', "\\\\").replace(';', "\\;").replace(',', "\\,");
    let token = yeyak::calendar::token::token(&app.state.secret, kim, 1);
    let room_feed = app.http.get(app.url(&format!("/ical/rooms/Q.ics?token={token}"))).send().await.unwrap();
    let room_feed = room_feed.text().await.unwrap();
    let lines = unfolded(&room_feed);
    assert_eq!(line(&lines, "NAME"), format!("NAME:{}", esc(room)), "the room's name, escaped");
    assert_eq!(line(&lines, "X-WR-CALNAME"), format!("X-WR-CALNAME:{}", esc(room)));
    assert_eq!(line(&lines, "SUMMARY"), format!("SUMMARY:{}", esc(title)));
    assert_eq!(line(&lines, "LOCATION"), format!("LOCATION:{}", esc(room)));
    assert_eq!(line(&lines, "DESCRIPTION"), format!("DESCRIPTION:{}", esc(&format!("예약한 사람: {display}"))));
    let events = crate::calendar::parse_ics(&room_feed);
    assert_eq!((events[0]["summary"].as_str(), events[0]["location"].as_str()), (Some(title), Some(room)));

    let me = app.http.get(app.url(&format!("/ical/me.ics?token={token}"))).send().await.unwrap();
    let lines = unfolded(&me.text().await.unwrap());
    assert_eq!(line(&lines, "NAME"), format!("NAME:{}", esc(&format!("{display}의 회의실 예약"))));
    let file = kim_browser.get(&format!("/bookings/{id}.ics")).await;
    let lines = unfolded(&file.html);
    assert_eq!(line(&lines, "NAME"), format!("NAME:{}", esc(title)), "a download is named by its title");
    assert_eq!(line(&lines, "SUMMARY"), format!("SUMMARY:{}", esc(title)));

    // The invitation: NAME escaped, CN quoted (it holds `,`, `;` and `:`).
    let mailer =
        yeyak::mail::smtp::Mailer::new(&smtp, "yeyak <rooms@example.com>", app.state.policy().timezone, "yeyak.local")
            .unwrap();
    let worker = yeyak::outbox::worker::DeliveryWorker::new(
        app.state.pool.clone(),
        app.state.clock.clone(),
        yeyak::outbox::provider::Provider::Log,
    )
    .with_mail(yeyak::outbox::provider::Provider::Smtp(Arc::new(mailer)));
    assert_eq!(worker.run_once(10).await.unwrap().delivered, 2, "the webhook (log) and the mail");
    let mails = sink.received();
    assert_eq!(mails.len(), 1);
    let parsed = crate::calendar::parse_mail(&mails[0].data);
    let part = parsed["parts"].as_array().unwrap().iter().find(|p| p["type"] == "text/calendar").unwrap().clone();
    let lines = unfolded(part["text"].as_str().unwrap());
    assert_eq!(line(&lines, "NAME"), format!("NAME:{}", esc(title)), "{lines:#?}");
    assert_eq!(line(&lines, "SUMMARY"), format!("SUMMARY:{}", esc(title)));
    // The organizer is the person (SPEC §18), the room an attendee; both CNs quoted.
    let organizer = lines.iter().find(|l| l.starts_with("ORGANIZER;")).unwrap();
    assert!(organizer.contains(&format!("CN=\"{display}\"")), "{organizer}");
    let attendee = lines.iter().find(|l| l.starts_with("ATTENDEE;")).unwrap();
    let room_cn = room.replace('"', "");
    assert!(attendee.contains("CUTYPE=ROOM") && attendee.contains(&format!("CN=\"{room_cn}\"")), "{attendee}");
}
