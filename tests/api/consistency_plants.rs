//! Every consistency check fires (issue 25): for each, real data is made
//! through the API, one violation is planted with raw SQL the schema allows,
//! and exactly that check reports it — its count and a sample row — while
//! every other check stays at 0.

use std::collections::BTreeSet;

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{json, Map, Value};

use crate::helpers::*;

/// What the API makes before the violation is planted.
#[derive(Debug, Clone, Copy)]
enum Setup {
    /// One booking of room A tomorrow 10:00–11:00: `booking`.
    Booking,
    /// A daily series of three on room A from tomorrow 10:00: `series`,
    /// `first` and `last` occurrence.
    Series,
    /// Resource `plant` (capacity 3), alice holds 1: `resource`, `hold`.
    Hold,
    /// Resource `plant` (capacity 1) held by alice, bob waits: `resource`, `bob`.
    Waiting,
    /// Resource `plant` (capacity 1): alice held, bob and carol joined, alice
    /// cancelled, so bob is offered the unit and carol waits: `resource`,
    /// `bob`, `carol`, `offer`.
    Offered,
}

/// The violation.
#[derive(Debug, Clone, Copy)]
enum Plant {
    /// Statements run on the test's database.
    Sql(&'static str),
    /// The app clock moves on and nobody sweeps.
    Advance(i64),
}

/// A value a sample row must show.
#[derive(Debug, Clone, Copy)]
enum Want {
    /// The id the setup named.
    Id(&'static str),
    Text(&'static str),
    Int(i64),
}

struct Case {
    check: &'static str,
    setup: Setup,
    plant: Plant,
    count: i64,
    sample: &'static [(&'static str, Want)],
}

use Want::{Id, Int, Text};

const CASES: &[Case] = &[
    Case {
        check: "reservation_room_copy_mismatch",
        setup: Setup::Booking,
        plant: Plant::Sql("UPDATE reservation_room SET ends_at = ends_at + interval '30 minutes'"),
        count: 1,
        sample: &[("reservation_id", Id("booking")), ("room", Text("A"))],
    },
    Case {
        check: "reservation_without_rooms",
        setup: Setup::Booking,
        plant: Plant::Sql("DELETE FROM reservation_room"),
        count: 1,
        sample: &[("id", Id("booking"))],
    },
    Case {
        check: "booking_without_created_event",
        setup: Setup::Booking,
        plant: Plant::Sql("DELETE FROM booking_event WHERE action = 'created'"),
        count: 1,
        sample: &[("id", Id("booking")), ("created_events", Int(0))],
    },
    Case {
        check: "booking_version_differs_from_history",
        setup: Setup::Booking,
        plant: Plant::Sql("UPDATE reservation SET title = 'renamed by hand', version = version + 1"),
        count: 1,
        sample: &[("id", Id("booking")), ("version", Int(2)), ("events", Int(1))],
    },
    // A PENDING booking in a room that needs no approval.
    Case {
        check: "booking_status_differs_from_history",
        setup: Setup::Booking,
        plant: Plant::Sql("UPDATE reservation SET status = 'PENDING'"),
        count: 1,
        sample: &[("id", Id("booking")), ("status", Text("PENDING")), ("history_status", Text("CONFIRMED"))],
    },
    // A CANCELLED booking without a `cancelled` event (copies freed too).
    Case {
        check: "booking_status_differs_from_history",
        setup: Setup::Booking,
        plant: Plant::Sql(
            "UPDATE reservation SET status = 'CANCELLED', cancelled_at = now();
             UPDATE reservation_room SET active = false",
        ),
        count: 1,
        sample: &[("id", Id("booking")), ("status", Text("CANCELLED")), ("last_status_event", Text("created"))],
    },
    Case {
        check: "booking_on_retired_room",
        setup: Setup::Booking,
        plant: Plant::Sql("UPDATE room SET active = false, retired_at = now() WHERE code = 'A'"),
        count: 1,
        sample: &[("reservation_id", Id("booking")), ("room", Text("A"))],
    },
    Case {
        check: "series_occurrence_outside_rule",
        setup: Setup::Series,
        plant: Plant::Sql(
            "UPDATE reservation SET occurrence_start = occurrence_start - interval '7 days'
              WHERE id = (SELECT min(id) FROM reservation)",
        ),
        count: 1,
        sample: &[
            ("reservation_id", Id("first")),
            ("series_id", Id("series")),
            ("reason", Text("before the first occurrence")),
        ],
    },
    Case {
        check: "series_occurrence_outside_rule",
        setup: Setup::Series,
        plant: Plant::Sql(
            "UPDATE reservation SET occurrence_start = occurrence_start + interval '30 days'
              WHERE id = (SELECT max(id) FROM reservation);
             UPDATE booking_series
                SET recurrence = 'FREQ=DAILY;UNTIL=' || to_char((starts_at AT TIME ZONE timezone)::date + 2, 'YYYYMMDD')",
        ),
        count: 1,
        sample: &[("reservation_id", Id("last")), ("reason", Text("after UNTIL"))],
    },
    Case {
        check: "series_occurrence_outside_rule",
        setup: Setup::Series,
        plant: Plant::Sql(
            "UPDATE booking_series SET recurrence = 'FREQ=DAILY;UNTIL='
                    || to_char((starts_at + interval '1 day 1 hour') AT TIME ZONE 'UTC', 'YYYYMMDD\"T\"HH24MISS\"Z\"')",
        ),
        count: 1,
        sample: &[("reservation_id", Id("last")), ("reason", Text("after UNTIL"))],
    },
    Case {
        check: "series_occurrence_outside_rule",
        setup: Setup::Series,
        plant: Plant::Sql("UPDATE booking_series SET recurrence = 'FREQ=DAILY;COUNT=2'"),
        count: 1,
        sample: &[("reservation_id", Id("last")), ("reason", Text("beyond COUNT"))],
    },
    Case {
        check: "capacity_occupied_mismatch",
        setup: Setup::Hold,
        plant: Plant::Sql("UPDATE capacity_resource SET occupied_count = occupied_count + 1 WHERE code = 'plant'"),
        count: 1,
        sample: &[("id", Id("resource")), ("occupied_count", Int(2)), ("counted_units", Int(1))],
    },
    Case {
        check: "capacity_waiting_count_mismatch",
        setup: Setup::Waiting,
        plant: Plant::Sql("UPDATE capacity_resource SET waiting_count = 0 WHERE code = 'plant'"),
        count: 1,
        sample: &[("id", Id("resource")), ("waiting_count", Int(0)), ("waiting_entries", Int(1))],
    },
    Case {
        check: "offer_entry_state_mismatch",
        setup: Setup::Offered,
        plant: Plant::Sql("UPDATE waitlist_entry SET state = 'ACCEPTED' WHERE state = 'OFFERED'"),
        count: 1,
        sample: &[
            ("offer_id", Id("offer")),
            ("entry_id", Id("bob")),
            ("offer_state", Text("ACTIVE")),
            ("entry_state", Text("ACCEPTED")),
        ],
    },
    Case {
        check: "waiting_ahead_of_offered",
        setup: Setup::Offered,
        plant: Plant::Sql("UPDATE waitlist_entry SET sequence = sequence + 10 WHERE state = 'OFFERED'"),
        count: 1,
        sample: &[("waiting_entry", Id("carol")), ("offered_entry", Id("bob"))],
    },
    Case {
        check: "idempotency_stale_in_progress",
        setup: Setup::Booking,
        plant: Plant::Sql(
            "UPDATE idempotency_record SET state = 'IN_PROGRESS', response_status = NULL, response_body = NULL,
                    completed_at = NULL, lease_expires_at = created_at - interval '1 hour'",
        ),
        count: 1,
        sample: &[("operation", Text("booking.create"))],
    },
    Case {
        check: "outbox_exhausted",
        setup: Setup::Booking,
        plant: Plant::Sql(
            "UPDATE notification_outbox SET status = 'EXHAUSTED', next_attempt_at = NULL, attempt_count = 5,
                    last_error = 'planted'",
        ),
        count: 1,
        sample: &[("kind", Text("booking.created")), ("last_error", Text("planted"))],
    },
    Case {
        check: "overdue_holds",
        setup: Setup::Hold,
        // Hold TTL 30 s; overdue two sweep intervals (4 s) after that.
        plant: Plant::Advance(30 + 5),
        count: 1,
        sample: &[("id", Id("hold")), ("resource_id", Id("resource"))],
    },
    Case {
        check: "overdue_offers",
        setup: Setup::Offered,
        // Offer TTL 20 s.
        plant: Plant::Advance(20 + 5),
        count: 1,
        sample: &[("id", Id("offer")), ("entry_id", Id("bob"))],
    },
];

#[tokio::test]
async fn every_check_fires_alone_on_its_planted_violation() {
    let planted: BTreeSet<&str> = CASES.iter().map(|c| c.check).collect();
    let listed: BTreeSet<&str> = yeyak::consistency::CHECKS.iter().map(|c| c.name).collect();
    assert_eq!(planted, listed, "every check has a planted violation, and only checks that exist");

    for case in CASES {
        let app = TestApp::spawn().await;
        let ids = setup(&app, case.setup).await;
        app.assert_consistent().await;
        match case.plant {
            Plant::Sql(sql) => app.db().await.batch_execute(sql).await.unwrap(),
            Plant::Advance(seconds) => app.clock.advance(Duration::seconds(seconds)),
        }
        let (ok, report) = app.consistency().await;
        assert!(!ok, "{}: {report:#}", case.check);
        for check in report["checks"].as_array().unwrap() {
            let want = if check["name"] == case.check { case.count } else { 0 };
            assert_eq!(check["count"], want, "{} planted; {} reports {check:#}", case.check, check["name"]);
        }
        let fired = report["checks"].as_array().unwrap().iter().find(|c| c["name"] == case.check).unwrap();
        let sample = &fired["samples"][0];
        for (key, want) in case.sample {
            let expected = match want {
                Id(name) => ids[*name].clone(),
                Text(text) => json!(text),
                Int(n) => json!(n),
            };
            assert_eq!(sample[*key], expected, "{}: `{key}` of {sample:#}", case.check);
        }
    }
}

/// Makes what `setup` describes through the API; answers the ids it names.
async fn setup(app: &TestApp, setup: Setup) -> Map<String, Value> {
    let mut ids = Map::new();
    match setup {
        Setup::Booking => {
            let b = booking("계획", &["A"], &at(1, 10, 0), &at(1, 11, 0));
            let (status, made) = body(app.create_booking(TENANT_ONE, "alice", "b1", &b).await).await;
            assert_eq!(status, StatusCode::CREATED, "{made}");
            ids.insert("booking".into(), made["id"].clone());
        }
        Setup::Series => {
            let s = json!({"title": "계획", "rooms": ["A"], "startsAt": at(1, 10, 0), "endsAt": at(1, 11, 0),
                           "recurrence": "FREQ=DAILY;COUNT=3"});
            let (status, made) = post(app, "/api/series", TENANT_ONE, "alice", "s1", s).await;
            assert_eq!(status, StatusCode::CREATED, "{made}");
            let created = made["created"].as_array().unwrap();
            assert_eq!(created.len(), 3);
            ids.insert("series".into(), made["series"]["id"].clone());
            ids.insert("first".into(), created[0]["id"].clone());
            ids.insert("last".into(), created[2]["id"].clone());
        }
        Setup::Hold => {
            let resource = new_resource(app, 3).await;
            ids.insert("hold".into(), hold(app, resource, "alice").await.into());
            ids.insert("resource".into(), resource.into());
        }
        Setup::Waiting | Setup::Offered => {
            let resource = new_resource(app, 1).await;
            let alice = hold(app, resource, "alice").await;
            ids.insert("bob".into(), join(app, resource, "bob").await.into());
            ids.insert("resource".into(), resource.into());
            if let Setup::Offered = setup {
                ids.insert("carol".into(), join(app, resource, "carol").await.into());
                let (status, c) = call(app, &format!("/api/holds/{alice}/cancel"), "alice", json!({})).await;
                assert_eq!(status, StatusCode::OK, "{c}");
                let offer = app.count("SELECT id FROM capacity_offer WHERE state = 'ACTIVE'").await;
                ids.insert("offer".into(), offer.into());
            }
        }
    }
    ids
}

async fn call(app: &TestApp, path: &str, owner: &str, body: Value) -> (StatusCode, Value) {
    post(app, path, TENANT_ONE, owner, &uuid::Uuid::new_v4().to_string(), body).await
}

async fn new_resource(app: &TestApp, capacity: i64) -> i64 {
    let body = json!({"code": "plant", "name": "plant", "capacity": capacity});
    let (status, made) = post(app, "/api/resources", ADMIN, "ops", "r1", body).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    made["id"].as_i64().unwrap()
}

async fn hold(app: &TestApp, resource: i64, owner: &str) -> i64 {
    let (status, made) = call(app, &format!("/api/resources/{resource}/holds"), owner, json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    made["id"].as_i64().unwrap()
}

async fn join(app: &TestApp, resource: i64, owner: &str) -> i64 {
    let (status, made) = call(app, &format!("/api/resources/{resource}/waitlist"), owner, json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    made["id"].as_i64().unwrap()
}

/// More violations than a check shows: every one is counted, the first 20
/// are shown, and a pass's two halves (the history, split by booking id)
/// add up to one result.
#[tokio::test]
async fn a_check_counts_every_violation_and_shows_twenty() {
    let app = TestApp::spawn().await;
    let mut made = BTreeSet::new();
    for i in 0..25 {
        let b = booking("계획", &["A"], &at(1 + i / 8, 8 + (i % 8) as u32, 0), &at(1 + i / 8, 8 + (i % 8) as u32, 30));
        let (status, booked) = body(app.create_booking(TENANT_ONE, "alice", &format!("many-{i}"), &b).await).await;
        assert_eq!(status, StatusCode::CREATED, "{booked}");
        made.insert(booked["id"].as_i64().unwrap());
    }
    app.assert_consistent().await;
    app.db()
        .await
        .batch_execute("DELETE FROM booking_event WHERE action = 'created'; DELETE FROM reservation_room")
        .await
        .unwrap();

    let (ok, report) = app.consistency().await;
    assert!(!ok, "{report:#}");
    for name in ["booking_without_created_event", "reservation_without_rooms"] {
        let check = report["checks"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap();
        assert_eq!(check["count"], 25, "{check:#}");
        let shown: BTreeSet<i64> =
            check["samples"].as_array().unwrap().iter().map(|s| s["id"].as_i64().unwrap()).collect();
        assert_eq!(shown.len(), 20, "twenty distinct samples: {check:#}");
        assert!(shown.is_subset(&made), "{check:#}");
    }
}
