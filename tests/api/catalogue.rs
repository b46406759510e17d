//! Rooms as data (SPEC §8) through the JSON API: the admin routes, suites
//! that link like A, B, C, retirement, the free-room search, and a change
//! seen by a second process.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::*;
use crate::rooms::enc;

fn codes(list: &Value) -> Vec<String> {
    list["rooms"].as_array().unwrap().iter().map(|r| r["code"].as_str().unwrap().to_owned()).collect()
}

async fn book(app: &TestApp, idem: &str, rooms: &[&str], starts: &str, ends: &str) -> (StatusCode, Value) {
    body(app.create_booking(TENANT_ONE, "alice", idem, &booking("회의", rooms, starts, ends)).await).await
}

#[tokio::test]
async fn admins_create_change_and_retire_rooms_and_nobody_else_may() {
    let app = TestApp::spawn().await;
    let created = add_room(
        &app,
        json!({"code": "R1", "name": "큰 회의실", "area": "2층", "capacity": 12,
               "equipment": ["Projector", "video"], "horizonDays": 30}),
    )
    .await;
    assert_eq!(
        created,
        json!({"code": "R1", "name": "큰 회의실", "area": "2층", "capacity": 12, "equipment": ["projector", "video"],
               "suite": null, "position": 1, "checkInRequired": false, "approvalRequired": false,
               "maxDurationMinutes": 720, "horizonDays": 30, "active": true,
               "bufferBeforeMinutes": 0, "bufferAfterMinutes": 0,
               "timeZone": "Asia/Seoul", "kind": "room", "assignedTo": null, "x": null, "y": null}),
        "a new area takes the installation's zone"
    );

    // A replay answers the same; a duplicate code is a conflict.
    let replay = app
        .request(Method::POST, "/api/rooms", ADMIN, None)
        .header("Idempotency-Key", "same")
        .json(&json!({"code": "R2", "name": "작은 방", "area": "2층"}))
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), StatusCode::CREATED);
    let again = app
        .request(Method::POST, "/api/rooms", ADMIN, None)
        .header("Idempotency-Key", "same")
        .json(&json!({"code": "R2", "name": "작은 방", "area": "2층"}))
        .send()
        .await
        .unwrap();
    assert_eq!(again.headers()["Idempotency-Replayed"], "true");
    assert_eq!(body(again).await.1["position"], 2);
    let (status, dup) =
        send(&app, Method::POST, "/api/rooms", ADMIN, Some("dup"), json!({"code": "R1", "name": "x"})).await;
    assert_eq!((status, dup["code"].as_str()), (StatusCode::CONFLICT, Some("ROOM_CODE_TAKEN")), "{dup}");
    let (status, taken) = send(
        &app,
        Method::POST,
        "/api/rooms",
        ADMIN,
        Some("pos"),
        json!({"code": "R3", "name": "x", "area": "2층", "position": 1}),
    )
    .await;
    assert_eq!((status, taken["code"].as_str()), (StatusCode::CONFLICT, Some("ROOM_POSITION_TAKEN")), "{taken}");
    // A suite lives in one area.
    let (status, apart) = send(
        &app,
        Method::POST,
        "/api/rooms",
        ADMIN,
        Some("suite"),
        json!({"code": "R4", "name": "x", "area": "2층", "suite": "ABC"}),
    )
    .await;
    assert_eq!((status, apart["code"].as_str()), (StatusCode::CONFLICT, Some("SUITE_IN_OTHER_AREA")), "{apart}");

    // Integration keys may read the catalogue but not change it.
    let (status, refused) =
        send(&app, Method::POST, "/api/rooms", TENANT_ONE, Some("k"), json!({"code": "Z", "name": "x"})).await;
    assert_eq!((status, refused["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")));
    let (status, _) = send(&app, Method::PATCH, "/api/rooms/R1", TENANT_ONE, None, json!({"capacity": 2})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = send(&app, Method::POST, "/api/rooms/R1/retire", TENANT_TWO, None, json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = send(&app, Method::POST, "/api/rooms", ADMIN, None, json!({"code": "Z", "name": "x"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "creating needs an Idempotency-Key");

    // Invalid attributes name their field and change nothing.
    let bad = [
        (json!({"code": "a b", "name": "x"}), "code"),
        (json!({"code": "Z", "name": ""}), "name"),
        (json!({"code": "Z", "name": "x", "capacity": 0}), "capacity"),
        (json!({"code": "Z", "name": "x", "equipment": ["빔"]}), "equipment"),
        (json!({"code": "Z", "name": "x", "maxDurationMinutes": 0}), "maxDurationMinutes"),
        (json!({"code": "Z", "name": "x", "horizonDays": -1}), "horizonDays"),
        (json!({"code": "Z", "name": "x", "area": "   "}), "area"),
        (json!({"code": "Z", "name": "x", "position": 0}), "position"),
        (json!({"code": "Z", "name": "x", "capacity": "many"}), "capacity"),
    ];
    for (i, (room, field)) in bad.into_iter().enumerate() {
        let (status, err) = send(&app, Method::POST, "/api/rooms", ADMIN, Some(&format!("bad-{i}")), room).await;
        assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some(field)), "{err}");
    }
    assert_eq!(app.count("SELECT count(*) FROM room").await, 5);

    // A change keeps what it does not name; null clears.
    let (status, changed) = send(
        &app,
        Method::PATCH,
        "/api/rooms/R1",
        ADMIN,
        Some("p1"),
        json!({"name": "대회의실", "equipment": ["whiteboard"], "horizonDays": null, "checkInRequired": true}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(
        (
            &changed["name"],
            &changed["capacity"],
            &changed["equipment"],
            &changed["horizonDays"],
            &changed["checkInRequired"]
        ),
        (&json!("대회의실"), &json!(12), &json!(["whiteboard"]), &Value::Null, &json!(true))
    );
    let (status, err) = send(&app, Method::PATCH, "/api/rooms/R1", ADMIN, None, json!({"capacity": 0})).await;
    assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("capacity")));
    let (status, _) = send(&app, Method::PATCH, "/api/rooms/NOPE", ADMIN, None, json!({"capacity": 3})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Retired: out of the list and of bookings, kept with includeRetired.
    let (status, retired) = send(&app, Method::POST, "/api/rooms/R2/retire", ADMIN, Some("r"), json!({})).await;
    assert_eq!((status, &retired["active"]), (StatusCode::OK, &json!(false)), "{retired}");
    let (_, list) = app.get_json("/api/rooms", TENANT_ONE).await;
    assert!(!codes(&list).contains(&"R2".to_owned()) && codes(&list).contains(&"R1".to_owned()));
    let (_, all) = app.get_json("/api/rooms?includeRetired=true", TENANT_ONE).await;
    assert!(codes(&all).contains(&"R2".to_owned()));
    let (status, err) = book(&app, "b-r2", &["R2"], &at(1, 10, 0), &at(1, 11, 0)).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::BAD_REQUEST, Some("UNKNOWN_ROOM")));
    let (status, err) = send(&app, Method::PATCH, "/api/rooms/R2", ADMIN, None, json!({"capacity": 3})).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("INVALID_STATE")));
    // Its position is free again for a new room of the area.
    add_room(&app, json!({"code": "R5", "name": "새 방", "area": "2층", "position": 2})).await;
    app.assert_consistent().await;
}

#[tokio::test]
async fn a_new_suite_links_like_a_b_c_and_suites_never_mix() {
    let app = TestApp::spawn().await;
    for (code, suite) in [("S1", Some("S")), ("S2", Some("S")), ("S3", Some("S")), ("X", None), ("P1", Some("P"))] {
        add_room(&app, json!({"code": code, "name": code, "area": "3층", "suite": suite})).await;
    }
    let (_, list) = app.get_json("/api/rooms", TENANT_ONE).await;
    let combos = list["combinations"].as_array().unwrap();
    for expected in [json!(["S1", "S2"]), json!(["S2", "S3"]), json!(["S1", "S2", "S3"]), json!(["A", "B", "C"])] {
        assert!(combos.contains(&expected), "{expected} in {combos:?}");
    }
    assert!(!combos.contains(&json!(["S3", "X"])) && !combos.contains(&json!(["S1", "S3"])));

    let mut hour = 8;
    let mut try_book = |rooms: &'static [&'static str]| {
        hour += 1;
        let app = &app;
        async move { book(app, &format!("k{hour}"), rooms, &at(1, hour, 0), &at(1, hour, 30)).await }
    };
    for ok in [&["S1", "S2"][..], &["S3", "S2"], &["S1", "S2", "S3"], &["X"], &["P1"], &["A", "B"]] {
        let (status, b) = try_book(ok).await;
        assert_eq!(status, StatusCode::CREATED, "{ok:?}: {b}");
    }
    for refused in [&["S1", "S3"][..], &["S3", "X"], &["S3", "P1"], &["X", "P1"], &["A", "C"], &["C", "S1"]] {
        let (status, err) = try_book(refused).await;
        assert_eq!(
            (status, err["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("ROOM_COMBINATION_NOT_ALLOWED")),
            "{refused:?}"
        );
        assert!(err["message"].as_str().unwrap().starts_with("이어진 회의실만 함께 예약할 수 있습니다"));
    }
    // Linked bookings of the new suite take every room or none.
    let (status, _) = book(&app, "whole", &["S1", "S2", "S3"], &at(2, 10, 0), &at(2, 11, 0)).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = book(&app, "part", &["S3"], &at(2, 10, 30), &at(2, 11, 30)).await;
    assert_eq!(status, StatusCode::CONFLICT);
    // Moving a room out of the suite unlinks it at once.
    let (status, _) = send(&app, Method::PATCH, "/api/rooms/S3", ADMIN, None, json!({"suite": null})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = book(&app, "unlinked", &["S2", "S3"], &at(3, 10, 0), &at(3, 11, 0)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    app.assert_consistent().await;
}

#[tokio::test]
async fn retiring_a_room_with_future_bookings_refuses_or_cancels_them_whole() {
    let app = TestApp::spawn().await;
    let (_, linked) = book(&app, "k1", &["B", "C"], &at(1, 10, 0), &at(1, 11, 0)).await;
    let (_, alone) = book(&app, "k2", &["C"], &at(2, 10, 0), &at(2, 11, 0)).await;
    let (_, other) = book(&app, "k3", &["A"], &at(1, 10, 0), &at(1, 11, 0)).await;

    let (status, err) = send(&app, Method::POST, "/api/rooms/C/retire", ADMIN, Some("r1"), json!({})).await;
    assert_eq!((status, err["code"].as_str()), (StatusCode::CONFLICT, Some("ROOM_HAS_FUTURE_BOOKINGS")), "{err}");
    assert_eq!(err["details"]["count"], 2);
    assert_eq!(app.count("SELECT count(*) FROM room WHERE active").await, 3, "nothing changed");

    let (status, room) =
        send(&app, Method::POST, "/api/rooms/C/retire", ADMIN, Some("r2"), json!({"cancelFutureBookings": true})).await;
    assert_eq!((status, &room["active"]), (StatusCode::OK, &json!(false)), "{room}");
    for (b, cancelled) in [(&linked, true), (&alone, true), (&other, false)] {
        let (_, now) = app.get_json(&format!("/api/bookings/{}", b["id"]), TENANT_ONE).await;
        assert_eq!(now["cancelledAt"].is_string(), cancelled, "{now}");
        assert_eq!(now["rooms"], b["rooms"], "history keeps its rooms");
    }
    // B's half of the linked booking is free again; C takes nothing new.
    let (status, _) = book(&app, "k4", &["B"], &at(1, 10, 0), &at(1, 11, 0)).await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, rooms) = app.get_json("/api/rooms", TENANT_ONE).await;
    assert_eq!(rooms["combinations"], json!([["A"], ["B"], ["A", "B"]]));
    let (_, all) = app.get_json("/api/rooms?includeRetired=true", TENANT_ONE).await;
    assert_eq!(codes(&all), ["A", "B", "C"]);
    let (status, _) = send(&app, Method::POST, "/api/rooms/C/retire", ADMIN, Some("r3"), json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "already retired");
    app.assert_consistent().await;
}

#[tokio::test]
async fn a_retirement_and_a_booking_racing_for_the_room_never_leave_a_booking_on_a_retired_room() {
    let app = std::sync::Arc::new(TestApp::spawn().await);
    for round in 0..10 {
        let code = format!("Q{round}");
        add_room(&app, json!({"code": code, "name": code, "area": "경합"})).await;
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(2));
        let (a, b1) = (app.clone(), barrier.clone());
        let c = code.clone();
        let booking = tokio::spawn(async move {
            b1.wait().await;
            let rooms = [c.as_str()];
            book(&a, &format!("q{round}"), &rooms, &at(1, 10, 0), &at(1, 11, 0)).await.0
        });
        let (a, b2) = (app.clone(), barrier.clone());
        let c = code.clone();
        let retire = tokio::spawn(async move {
            b2.wait().await;
            send(&a, Method::POST, &format!("/api/rooms/{c}/retire"), ADMIN, None, json!({})).await.0
        });
        let (booked, retired) = (booking.await.unwrap(), retire.await.unwrap());
        // Either the booking came first (and the retirement is refused) or
        // the retirement did (and the booking finds no such room).
        assert!(
            (booked == StatusCode::CREATED && retired == StatusCode::CONFLICT)
                || (booked == StatusCode::BAD_REQUEST && retired == StatusCode::OK),
            "round {round}: booking {booked}, retirement {retired}"
        );
    }
    assert_eq!(
        app.count(
            "SELECT count(*) FROM reservation_room rr JOIN room r ON r.code = rr.room WHERE rr.active AND NOT r.active"
        )
        .await,
        0
    );
}

#[tokio::test]
async fn the_free_room_search_is_exact() {
    let app = TestApp::spawn().await;
    let rooms = [
        ("F1", 4, json!(["projector"]), None),
        ("F2", 6, json!(["projector", "video"]), None),
        ("F3", 6, json!(["video"]), None),
        ("F4", 10, json!(["projector", "video", "whiteboard"]), Some("FS")),
        ("F5", 12, json!(["projector", "video"]), Some("FS")),
        ("F6", 20, json!([]), None),
        ("F7", 30, json!(["projector"]), None),
    ];
    for (code, capacity, equipment, suite) in rooms {
        add_room(
            &app,
            json!({"code": code, "name": code, "area": "F", "capacity": capacity,
                                "equipment": equipment, "suite": suite}),
        )
        .await;
    }
    send(&app, Method::POST, "/api/rooms/F7/retire", ADMIN, None, json!({})).await;
    // Window: 10:00-11:00 of day 1.
    assert_eq!(book(&app, "t-before", &["F2"], &at(1, 9, 0), &at(1, 10, 0)).await.0, StatusCode::CREATED);
    assert_eq!(book(&app, "t-after", &["F3"], &at(1, 11, 0), &at(1, 12, 0)).await.0, StatusCode::CREATED);
    let (_, linked) = book(&app, "linked", &["F4", "F5"], &at(1, 10, 30), &at(1, 11, 30)).await;
    assert_eq!(book(&app, "edge", &["F1"], &at(1, 10, 59), &at(1, 11, 30)).await.0, StatusCode::CREATED);
    let (_, gone) = book(&app, "gone", &["F6"], &at(1, 10, 0), &at(1, 11, 0)).await;
    app.cancel_booking(TENANT_ONE, "alice", gone["id"].as_i64().unwrap(), None, &json!({})).await;

    let search = |query: String| {
        let app = &app;
        async move {
            let path = format!("/api/rooms/free?from={}&to={}{query}", enc(&at(1, 10, 0)), enc(&at(1, 11, 0)));
            let (status, body) = app.get_json(&path, TENANT_ONE).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            codes(&body)
        }
    };
    assert_eq!(search("&area=F".into()).await, ["F2", "F3", "F6"]);
    assert_eq!(search("&area=F&minCapacity=5&equipment=projector".into()).await, ["F2"]);
    assert_eq!(search("&area=F&equipment=video&equipment=projector".into()).await, ["F2"]);
    assert_eq!(search("&area=F&equipment=whiteboard".into()).await, Vec::<String>::new());
    assert_eq!(search("&minCapacity=7".into()).await, ["A", "B", "C", "F6"]);
    // The best `limit`, in the same order.
    assert_eq!(search("&minCapacity=7&limit=2".into()).await, ["A", "B"]);
    // The linked booking frees both rooms when it goes.
    app.cancel_booking(TENANT_ONE, "alice", linked["id"].as_i64().unwrap(), None, &json!({})).await;
    assert_eq!(search("&area=F&minCapacity=5&equipment=projector".into()).await, ["F2", "F4", "F5"]);

    let bad = [
        (format!("/api/rooms/free?to={}", enc(&at(1, 11, 0))), "from"),
        (format!("/api/rooms/free?from={}&to={}", enc(&at(1, 11, 0)), enc(&at(1, 10, 0))), "to"),
        (
            format!("/api/rooms/free?from={}&to={}&minCapacity=many", enc(&at(1, 10, 0)), enc(&at(1, 11, 0))),
            "minCapacity",
        ),
        (format!("/api/rooms/free?from={}&to={}&equipment=a%20b", enc(&at(1, 10, 0)), enc(&at(1, 11, 0))), "equipment"),
        ("/api/rooms/free?from=yesterday&to=today".to_owned(), "from"),
        (format!("/api/rooms/free?from={}&to={}&limit=0", enc(&at(1, 10, 0)), enc(&at(1, 11, 0))), "limit"),
        (format!("/api/rooms/free?from={}&to={}&limit=1001", enc(&at(1, 10, 0)), enc(&at(1, 11, 0))), "limit"),
        (format!("/api/rooms/free?from={}&to={}&limit=all", enc(&at(1, 10, 0)), enc(&at(1, 11, 0))), "limit"),
    ];
    for (path, field) in bad {
        let (status, err) = app.get_json(&path, TENANT_ONE).await;
        assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some(field)), "{path}: {err}");
    }
}

/// SPEC §27: a search answers the best 100 rooms unless asked for more (at
/// most 1,000), smallest sufficient capacity first; `/find` says when it
/// stopped at its limit.
#[tokio::test]
async fn the_free_room_search_answers_the_best_limit_rooms() {
    let app = TestApp::spawn().await;
    // 150 more rooms of 2..=151 seats, in an area of their own.
    app.db()
        .await
        .batch_execute(
            "INSERT INTO area (code, name, position) VALUES ('Z', 'Z', 99);
             INSERT INTO room (code, name, area, position, capacity)
             SELECT 'Z' || n, 'Z ' || n, 'Z', n, n + 1 FROM generate_series(1, 150) n;",
        )
        .await
        .unwrap();
    let path = |q: &str| format!("/api/rooms/free?from={}&to={}&area=Z{q}", enc(&at(1, 10, 0)), enc(&at(1, 11, 0)));
    let (status, body) = app.get_json(&path(""), TENANT_ONE).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let want: Vec<String> = (1..=100).map(|n| format!("Z{n}")).collect();
    assert_eq!(codes(&body), want, "the default: the 100 smallest");
    let (_, body) = app.get_json(&path("&limit=1000"), TENANT_ONE).await;
    assert_eq!(codes(&body).len(), 150);
    let (_, body) = app.get_json(&path("&limit=3&minCapacity=50"), TENANT_ONE).await;
    assert_eq!(codes(&body), ["Z49", "Z50", "Z51"]);

    let browser = crate::web::Browser::new(&app);
    browser.sign_in(crate::web::ADMIN_USER, crate::web::ADMIN_PASSWORD).await;
    let page = browser.get("/find?date=2031-03-03&start=10:00&end=11:00&area=Z&limit=5").await;
    assert_eq!(page.status, 200);
    assert!(page.html.contains(">Z 5 <") && !page.html.contains(">Z 6 <"), "{}", page.html);
    assert!(page.html.contains("5곳만") || page.html.contains("The best 5 rooms"), "the cut is said: {}", page.html);
    let page = browser.get("/find?date=2031-03-03&start=10:00&end=11:00&area=Z&limit=0").await;
    assert_eq!(page.status, 400);
}

#[tokio::test]
async fn a_room_added_through_one_process_is_bookable_and_shown_through_another() {
    let first = TestApp::spawn().await;
    let second = first.another_process().await;
    // The second process has drawn its catalogue before the change.
    let browser = crate::web::Browser::new(&second);
    browser.sign_in(crate::web::ADMIN_USER, crate::web::ADMIN_PASSWORD).await;
    assert!(!browser.get("/rooms?area=%EC%8B%A0%EA%B4%80").await.html.contains("신관 101"));

    add_room(&first, json!({"code": "N1", "name": "신관 101", "area": "신관"})).await;
    let started = std::time::Instant::now();
    // Bookable at once: bookings read the catalogue inside their transaction.
    let (status, b) = book(&second, "n1", &["N1"], &at(1, 10, 0), &at(1, 11, 0)).await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    let (_, rooms) = second.get_json("/api/rooms", TENANT_ONE).await;
    assert!(codes(&rooms).contains(&"N1".to_owned()));
    // Shown on its pages within two seconds.
    loop {
        if browser.get("/rooms?area=%EC%8B%A0%EA%B4%80").await.html.contains("신관 101") {
            break;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "not shown within 2 s");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // Retired through the second, refused by the first at once.
    let (status, _) =
        send(&second, Method::POST, "/api/rooms/N1/retire", ADMIN, None, json!({"cancelFutureBookings": true})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = book(&first, "n2", &["N1"], &at(2, 10, 0), &at(2, 11, 0)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

/// A page that finds the catalogue snapshot stale draws with it while one
/// reload runs beside it: here the reload waits for a lock another session
/// holds on `room`, and the search form (which draws its area choices from
/// the snapshot and sends no statement on `room`) keeps answering.
#[tokio::test]
async fn a_stale_catalogue_draws_pages_while_its_reload_waits() {
    let app = TestApp::spawn().await;
    let browser = crate::web::Browser::new(&app);
    browser.sign_in(crate::web::ADMIN_USER, crate::web::ADMIN_PASSWORD).await;
    let page = "/find";
    assert_eq!(browser.get(page).await.status, 200);

    let watcher = app.db().await;
    let area: String = watcher.query_one("SELECT area FROM room WHERE code = 'A'", &[]).await.unwrap().get(0);
    let locker = app.db().await;
    locker.batch_execute("BEGIN; LOCK TABLE room IN ACCESS EXCLUSIVE MODE").await.unwrap();
    let reload_waits = || async {
        watcher
            .query_one("SELECT count(*) FROM pg_locks WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database())
                   AND relation = 'room'::regclass AND NOT granted", &[])
            .await
            .unwrap()
            .get::<_, i64>(0)
            > 0
    };
    let get = || async {
        let drawn = tokio::time::timeout(std::time::Duration::from_secs(10), browser.get(page))
            .await
            .expect("a page never waits for a catalogue reload another page started");
        assert_eq!(drawn.status, 200);
        assert!(drawn.html.contains(&format!(">{area}<")), "the areas of the old snapshot: {}", drawn.html);
    };
    // Pages answer until the snapshot ages past its second and one of
    // them starts the reload, which then waits on the lock.
    let started = std::time::Instant::now();
    while !reload_waits().await {
        get().await;
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "no reload started");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    for _ in 0..3 {
        get().await;
    }
    assert!(reload_waits().await, "the reload still waits");
    locker.batch_execute("ROLLBACK").await.unwrap();
}
