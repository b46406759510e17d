//! Booking rules of SPEC §2 through the JSON API.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::*;

async fn create_ok(app: &TestApp, owner: &str, idem: &str, body: &Value) -> Value {
    let (status, body) = body_of(app.create_booking(TENANT_ONE, owner, idem, body).await).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

async fn body_of(res: reqwest::Response) -> (StatusCode, Value) {
    body(res).await
}

async fn assert_taken(res: reqwest::Response) {
    let (status, body) = body(res).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["code"], "ROOM_TIME_TAKEN");
    assert_eq!(body["message"], "이미 예약된 시간입니다");
}

#[tokio::test]
async fn overlap_is_refused_and_touching_is_allowed() {
    let app = TestApp::spawn().await;
    let first = create_ok(&app, "alice", "k1", &booking("회의", &["A"], &at(1, 10, 0), &at(1, 11, 0))).await;
    assert_eq!(first["rooms"], json!(["A"]));
    assert_eq!(first["version"], 1);
    assert_eq!(first["organizer"], "t1");

    // 10:30-11:30 overlaps.
    assert_taken(
        app.create_booking(TENANT_ONE, "bob", "k2", &booking("x", &["A"], &at(1, 10, 30), &at(1, 11, 30))).await,
    )
    .await;
    // 11:00-12:00 and 09:00-10:00 touch: both allowed.
    create_ok(&app, "bob", "k3", &booking("after", &["A"], &at(1, 11, 0), &at(1, 12, 0))).await;
    create_ok(&app, "bob", "k4", &booking("before", &["A"], &at(1, 9, 0), &at(1, 10, 0))).await;
    // Same time in another room is fine.
    create_ok(&app, "bob", "k5", &booking("elsewhere", &["B"], &at(1, 10, 0), &at(1, 11, 0))).await;

    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 4);
    app.assert_consistent().await;
}

#[tokio::test]
async fn cancel_frees_the_time_at_once() {
    let app = TestApp::spawn().await;
    let b = create_ok(&app, "alice", "k1", &booking("회의", &["B", "C"], &at(1, 10, 0), &at(1, 11, 0))).await;
    let id = b["id"].as_i64().unwrap();
    assert_taken(
        app.create_booking(TENANT_ONE, "bob", "k2", &booking("x", &["C"], &at(1, 10, 0), &at(1, 11, 0))).await,
    )
    .await;

    let (status, cancelled) = body(app.cancel_booking(TENANT_ONE, "alice", id, Some("c1"), &json!({})).await).await;
    assert_eq!(status, StatusCode::OK, "{cancelled}");
    assert!(cancelled["cancelledAt"].is_string());
    assert_eq!(cancelled["version"], 2);

    create_ok(&app, "bob", "k3", &booking("x", &["C"], &at(1, 10, 0), &at(1, 11, 0))).await;
    // Cancelled bookings leave the default list but stay readable.
    let (_, list) =
        app.get_json(&format!("/api/bookings?from={}&to={}", enc(&at(1, 0, 0)), enc(&at(2, 0, 0))), TENANT_ONE).await;
    assert_eq!(list["bookings"].as_array().unwrap().len(), 1);
    let (_, all) = app
        .get_json(
            &format!("/api/bookings?from={}&to={}&includeCancelled=true", enc(&at(1, 0, 0)), enc(&at(2, 0, 0))),
            TENANT_ONE,
        )
        .await;
    assert_eq!(all["bookings"].as_array().unwrap().len(), 2);
    // Cancelling twice is an invalid state, not a second effect.
    let (status, again) = body(app.cancel_booking(TENANT_ONE, "alice", id, None, &json!({})).await).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(again["code"], "INVALID_STATE");
    assert_eq!(again["details"]["state"], "CANCELLED");
    app.assert_consistent().await;
}

pub fn enc(s: &str) -> String {
    s.replace('+', "%2B").replace(':', "%3A")
}

#[tokio::test]
async fn move_is_checked_but_never_against_its_own_old_time() {
    let app = TestApp::spawn().await;
    let b = create_ok(&app, "alice", "k1", &booking("회의", &["A", "B"], &at(1, 10, 0), &at(1, 11, 0))).await;
    let id = b["id"].as_i64().unwrap();
    create_ok(&app, "bob", "k2", &booking("옆", &["B"], &at(1, 12, 0), &at(1, 13, 0))).await;

    // Overlaps its own old time only: allowed.
    let (status, moved) = body(
        app.move_booking(TENANT_ONE, "alice", id, None, &json!({"startsAt": at(1, 10, 30), "endsAt": at(1, 11, 30)}))
            .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(moved["version"], 2);
    assert_eq!(
        moved["startsAt"],
        json!(chrono::DateTime::parse_from_rfc3339(&at(1, 10, 30)).unwrap().with_timezone(&chrono::Utc))
    );

    // Into Bob's B booking: refused, and nothing changed.
    assert_taken(
        app.move_booking(TENANT_ONE, "alice", id, None, &json!({"startsAt": at(1, 11, 30), "endsAt": at(1, 12, 30)}))
            .await,
    )
    .await;
    let (_, now) = app.get_json(&format!("/api/bookings/{id}"), TENANT_ONE).await;
    assert_eq!(now["version"], 2);
    assert_eq!(now["startsAt"], moved["startsAt"]);

    // The old time is free after the move.
    create_ok(&app, "carol", "k3", &booking("old slot", &["A"], &at(1, 10, 0), &at(1, 10, 30))).await;

    // Stale expectedVersion is a conflict; the right one works and may retitle.
    let (status, stale) = body(
        app.move_booking(
            TENANT_ONE,
            "alice",
            id,
            None,
            &json!({"startsAt": at(1, 14, 0), "endsAt": at(1, 15, 0), "expectedVersion": 1}),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(stale["code"], "VERSION_CONFLICT");
    assert_eq!(stale["currentRevision"], 2);
    let (status, ok) = body(
        app.move_booking(
            TENANT_ONE,
            "alice",
            id,
            None,
            &json!({"startsAt": at(1, 14, 0), "endsAt": at(1, 15, 0), "expectedVersion": 2, "title": "새 제목"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{ok}");
    assert_eq!(ok["title"], "새 제목");
    assert_eq!(ok["rooms"], json!(["A", "B"]));
    app.assert_consistent().await;
}

#[tokio::test]
async fn only_the_organizer_or_an_admin_may_change_a_booking() {
    let app = TestApp::spawn().await;
    let b = create_ok(&app, "alice", "k1", &booking("회의", &["C"], &at(1, 10, 0), &at(1, 11, 0))).await;
    let id = b["id"].as_i64().unwrap();
    let change = json!({"startsAt": at(1, 12, 0), "endsAt": at(1, 13, 0)});

    // Another owner of the same tenant, and the same owner name in another tenant.
    for (key, owner) in [(TENANT_ONE, "mallory"), (TENANT_TWO, "alice")] {
        let (status, err) = body(app.move_booking(key, owner, id, None, &change).await).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
        assert_eq!(err["code"], "NOT_ORGANIZER");
        let (status, _) = body(app.cancel_booking(key, owner, id, None, &json!({})).await).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
    // An organizerName that looks like someone else's changes nothing either:
    // mallory books under alice's displayed name, and is still not alice.
    let mut lookalike = booking("흉내", &["A"], &at(2, 10, 0), &at(2, 11, 0));
    lookalike["organizerName"] = b["organizer"].clone();
    let mine = create_ok(&app, "mallory", "k-lookalike", &lookalike).await;
    assert_eq!(mine["organizer"], b["organizer"], "the same name is shown");
    let (status, err) = body(app.move_booking(TENANT_ONE, "mallory", id, None, &change).await).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
    assert_eq!(err["code"], "NOT_ORGANIZER");
    let (_, now) = app.get_json(&format!("/api/bookings/{id}"), TENANT_TWO).await;
    assert_eq!(now["version"], 1);

    let (status, moved) = body(app.move_booking(ADMIN, "ops-person", id, None, &change).await).await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    let (status, _) = body(app.cancel_booking(TENANT_ONE, "alice", id, None, &json!({})).await).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_and_c_are_refused_and_linked_bookings_take_all_rooms_or_none() {
    let app = TestApp::spawn().await;
    let (status, err) = body(
        app.create_booking(TENANT_ONE, "alice", "k1", &booking("x", &["A", "C"], &at(1, 10, 0), &at(1, 11, 0))).await,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(err["code"], "ROOM_COMBINATION_NOT_ALLOWED");

    for (i, rooms) in [vec!["A", "B"], vec!["B", "C"], vec!["C", "B", "A"]].into_iter().enumerate() {
        let b = create_ok(
            &app,
            "alice",
            &format!("ok{i}"),
            &booking("x", &rooms, &at(2 + i as i64, 10, 0), &at(2 + i as i64, 11, 0)),
        )
        .await;
        let mut sorted = rooms.clone();
        sorted.sort();
        assert_eq!(b["rooms"], json!(sorted));
    }

    // B is taken at 10:00-11:00 on day 1: A+B must not leave A booked.
    create_ok(&app, "bob", "b", &booking("B only", &["B"], &at(1, 10, 0), &at(1, 11, 0))).await;
    let before = app.count("SELECT count(*) FROM reservation").await;
    assert_taken(
        app.create_booking(TENANT_ONE, "alice", "k2", &booking("x", &["A", "B"], &at(1, 10, 0), &at(1, 11, 0))).await,
    )
    .await;
    assert_taken(
        app.create_booking(TENANT_ONE, "alice", "k3", &booking("x", &["A", "B", "C"], &at(1, 10, 30), &at(1, 11, 30)))
            .await,
    )
    .await;
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, before);
    // Only the two earlier linked bookings hold A.
    assert_eq!(app.count("SELECT count(*) FROM reservation_room WHERE room = 'A'").await, 2);
    // A alone is still free.
    create_ok(&app, "alice", "k4", &booking("x", &["A"], &at(1, 10, 0), &at(1, 11, 0))).await;
    app.assert_consistent().await;
}

#[tokio::test]
async fn bad_input_gets_its_400_code_and_stores_nothing() {
    let app = TestApp::spawn().await;
    let ok = booking("회의", &["A"], &at(1, 10, 0), &at(1, 11, 0));
    let with = |field: &str, value: Value| {
        let mut b = ok.clone();
        b[field] = value;
        b
    };
    let cases: Vec<(Value, &str)> = vec![
        (with("rooms", json!(["A", "C"])), "ROOM_COMBINATION_NOT_ALLOWED"),
        (with("rooms", json!(["D"])), "UNKNOWN_ROOM"),
        (with("rooms", json!([])), "MALFORMED_REQUEST"),
        (with("rooms", json!(["A", "A"])), "MALFORMED_REQUEST"),
        (with("rooms", json!("A")), "MALFORMED_REQUEST"),
        (with("endsAt", json!(at(1, 10, 0))), "INVALID_TIME_RANGE"),
        (with("endsAt", json!(at(1, 9, 0))), "INVALID_TIME_RANGE"),
        (with("startsAt", json!(at(1, 9, 0).replace(":00+", ":30+"))), "TIME_NOT_MINUTE_ALIGNED"),
        (with("startsAt", json!(at(1, 9, 0).replace("+00:00", ".5+00:00"))), "TIME_NOT_MINUTE_ALIGNED"),
        (with("endsAt", json!(at(1, 22, 1))), "BOOKING_TOO_LONG"),
        (json!({"title": "x", "rooms": ["A"], "startsAt": at(-1, 10, 0), "endsAt": at(-1, 11, 0)}), "BOOKING_IN_PAST"),
        (with("startsAt", json!("2030-01-01T10:00:00")), "MALFORMED_REQUEST"),
        (with("startsAt", json!("tomorrow")), "MALFORMED_REQUEST"),
        (with("startsAt", json!(12)), "MALFORMED_REQUEST"),
        (with("title", json!("   ")), "MALFORMED_REQUEST"),
        (with("title", json!("가".repeat(201))), "MALFORMED_REQUEST"),
        (with("title", json!(null)), "MALFORMED_REQUEST"),
        (with("unexpected", json!(1)), "MALFORMED_REQUEST"),
        (json!({"rooms": ["A"], "startsAt": at(1, 10, 0), "endsAt": at(1, 11, 0)}), "MALFORMED_REQUEST"),
        (json!([1, 2]), "MALFORMED_REQUEST"),
    ];
    for (i, (payload, code)) in cases.iter().enumerate() {
        let (status, err) = body(app.create_booking(TENANT_ONE, "alice", &format!("bad-{i}"), payload).await).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "case {i}: {payload} -> {err}");
        assert_eq!(err["code"], *code, "case {i}: {payload} -> {err}");
        assert_eq!(err["retryable"], false);
    }
    // The field is named for malformed input.
    let (_, err) =
        body(app.create_booking(TENANT_ONE, "alice", "f", &with("startsAt", json!("2030-01-01T10:00:00"))).await).await;
    assert_eq!(err["details"]["field"], "startsAt");
    let (_, err) = body(
        app.create_booking(
            TENANT_ONE,
            "alice",
            "g",
            &json!({"rooms": ["A"], "startsAt": at(1, 10, 0), "endsAt": at(1, 11, 0)}),
        )
        .await,
    )
    .await;
    assert_eq!(err["details"]["field"], "title");

    // Transport-level refusals.
    let raw = |body: &'static str, ct: &'static str| {
        app.request(reqwest::Method::POST, "/api/bookings", TENANT_ONE, Some("alice"))
            .header("Idempotency-Key", "raw")
            .header("Content-Type", ct)
            .body(body)
            .send()
    };
    assert_eq!(raw("{not json", "application/json").await.unwrap().status(), StatusCode::BAD_REQUEST);
    assert_eq!(raw("{}", "text/plain").await.unwrap().status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let huge = app
        .request(reqwest::Method::POST, "/api/bookings", TENANT_ONE, Some("alice"))
        .header("Idempotency-Key", "huge")
        .header("Content-Type", "application/json")
        .body(vec![b' '; 1 << 20])
        .send()
        .await
        .unwrap();
    assert_eq!(huge.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let (status, err) = body(
        app.request(reqwest::Method::POST, "/api/bookings", TENANT_ONE, Some("alice")).json(&ok).send().await.unwrap(),
    )
    .await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("IDEMPOTENCY_KEY_REQUIRED")));
    let (status, err) = body(
        app.request(reqwest::Method::POST, "/api/bookings", TENANT_ONE, None)
            .header("Idempotency-Key", "x")
            .json(&ok)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("X-Reservation-Owner")));
    let (status, err) = body(app.create_booking(TENANT_ONE, "alice", &"k".repeat(256), &ok).await).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("MALFORMED_REQUEST")));
    let (status, err) = body(app.create_booking("wrong-key", "alice", "k", &ok).await).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("UNAUTHENTICATED")));

    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM reservation_room").await, 0);
    // Malformed input is never stored. "In the past" depends on when it was
    // asked, so it is the one refusal stored as the command's answer.
    assert_eq!(app.count("SELECT count(*) FROM idempotency_record").await, 1);
    assert_eq!(
        app.count("SELECT count(*) FROM idempotency_record WHERE response_body LIKE '%BOOKING_IN_PAST%'").await,
        1
    );
}

#[tokio::test]
async fn lists_rooms_days_and_free_intervals() {
    let app = TestApp::spawn_with(|c| c.timezone = chrono_tz::Asia::Seoul).await;
    let (status, rooms) = app.get_json("/api/rooms", TENANT_ONE).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rooms["combinations"], json!([["A"], ["B"], ["C"], ["A", "B"], ["B", "C"], ["A", "B", "C"]]));
    // SPEC §8 adds every attribute to each room; A keeps its code, name and position.
    let a = &rooms["rooms"][0];
    assert_eq!((&a["code"], &a["name"], &a["position"]), (&json!("A"), &json!("회의실 A"), &json!(1)));

    let day = (test_now() + chrono::Duration::days(3)).date_naive();
    let seoul = |h: u32, m: u32| format!("{day}T{h:02}:{m:02}:00+09:00");
    create_ok(&app, "alice", "k1", &booking("아침", &["A", "B"], &seoul(9, 0), &seoul(10, 30))).await;
    create_ok(&app, "alice", "k2", &booking("점심", &["B"], &seoul(12, 0), &seoul(13, 0))).await;

    let (status, list) = app.get_json(&format!("/api/bookings?date={day}"), TENANT_ONE).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let titles: Vec<&str> = list["bookings"].as_array().unwrap().iter().map(|b| b["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["아침", "점심"]);

    let (status, free) = app.get_json(&format!("/api/rooms/B/availability?date={day}"), TENANT_ONE).await;
    assert_eq!(status, StatusCode::OK, "{free}");
    let utc = |s: String| chrono::DateTime::parse_from_rfc3339(&s).unwrap().with_timezone(&chrono::Utc);
    let expect = |a: String, b: String| json!({"startsAt": utc(a), "endsAt": utc(b)});
    let next = day.succ_opt().unwrap();
    assert_eq!(
        free["free"],
        json!([
            expect(seoul(0, 0), seoul(9, 0)),
            expect(seoul(10, 30), seoul(12, 0)),
            expect(seoul(13, 0), format!("{next}T00:00:00+09:00")),
        ])
    );
    let (status, _) = app.get_json(&format!("/api/rooms/Z/availability?date={day}"), TENANT_ONE).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, err) = app.get_json("/api/bookings?date=2030-13-01", TENANT_ONE).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("MALFORMED_REQUEST")));
    let (status, _) = app.get_json("/api/bookings/999999", TENANT_ONE).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
