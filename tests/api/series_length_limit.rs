//! A series ends at most 5 years after its first occurrence
//! (`SERIES_TOO_LONG`, SPEC §20), whatever its frequency and interval.

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::*;

async fn long_series(app: &TestApp, room: &str, rule: &str, idem: &str) -> (StatusCode, Value) {
    let new =
        json!({"title": "장기", "rooms": [room], "startsAt": at(1, 1, 0), "endsAt": at(1, 2, 0), "recurrence": rule});
    post(app, "/api/series", TENANT_ONE, "alice", idem, new).await
}

#[tokio::test]
async fn a_series_ends_at_most_five_years_after_its_first_occurrence() {
    let app = TestApp::spawn().await;
    // Two occurrences 30 years apart; six a year apart for six years; a
    // monthly rule until ten years on; daily steps of 366 days past 5 years.
    let ten_years = (utc(&json!(at(1, 1, 0))) + Duration::days(3653)).format("%Y%m%d").to_string();
    for (i, rule) in [
        "FREQ=MONTHLY;INTERVAL=366;COUNT=2".to_owned(),
        "FREQ=WEEKLY;INTERVAL=53;COUNT=6".to_owned(),
        format!("FREQ=MONTHLY;UNTIL={ten_years}"),
        "FREQ=DAILY;INTERVAL=366;COUNT=6".to_owned(),
    ]
    .iter()
    .enumerate()
    {
        let (status, body) = long_series(&app, "A", rule, &format!("long{i}")).await;
        assert_eq!(
            (status, body["code"].as_str(), body["details"]["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some("SERIES_TOO_LONG"), Some("recurrence")),
            "{rule}: {body}"
        );
    }
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM booking_series").await, 0);
    // Within five years is fine: 5 × 366 days is 1830 days (too long), 5 × 52
    // weeks is 1820 (fine), and 1464 days is fine.
    for (room, rule, n) in [("A", "FREQ=WEEKLY;INTERVAL=52;COUNT=6", 6), ("B", "FREQ=DAILY;INTERVAL=366;COUNT=5", 5)] {
        let (status, body) = long_series(&app, room, rule, &format!("ok{room}")).await;
        assert_eq!(status, StatusCode::CREATED, "{rule}: {body}");
        let created = body["created"].as_array().unwrap();
        assert_eq!(created.len(), n);
        let span = utc(&created[n - 1]["startsAt"]) - utc(&created[0]["startsAt"]);
        assert!(span <= Duration::days(1827), "{rule}: {span}");
    }
    assert!(
        app.count("SELECT count(*) FROM reservation WHERE starts_at > now() + interval '5 years 2 days'").await == 0
    );
}
