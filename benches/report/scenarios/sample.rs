//! The server's side of the statement check: one request of each kind on a
//! fleet of its own whose database logs every statement, read back with
//! [`crate::capture`]. It lives with the scenarios because it drives them.

use crate::capture::{shape, transactions, Logged, PgLog, ServerSample};

/// The transactions of `logged` that contain a statement of shape `marker`.
fn with_marker(logged: &[Logged], marker: &str) -> Vec<Vec<String>> {
    transactions(logged).into_iter().filter(|t| t.iter().any(|s| shape(s) == marker)).collect()
}

pub async fn server_sample() -> ServerSample {
    use crate::fleet::{Fleet, Settings, ADMIN_KEY};
    use crate::load::{self, Req};
    use serde_json::json;
    use std::sync::Arc;

    let settings = Settings {
        seed_sql: Some(super::rooms::ROOMS_SQL.to_string()),
        sweep_interval_ms: 3_600_000,
        log_statements: true,
        ..Settings::default()
    };
    let fleet = Arc::new(Fleet::start(&settings).await);
    let base = fleet.base(0).to_string();
    let db = fleet.db.clone();
    let claim = "INSERT idempotency_record";
    let mut log = PgLog::from_now();
    let mut kinds = Vec::new();
    let booking = |rooms: &[&str], hour: i64| super::rooms::booking(rooms, hour);
    let send = |req: Req| {
        let (fleet, base) = (fleet.clone(), base.clone());
        async move { load::send(&fleet, &base, &req).await }
    };
    for (kind, rooms, status) in [
        ("booking (one room)", vec!["H01"], 201),
        ("booking, slot taken (one room)", vec!["H01"], 409),
        ("booking (A+B)", vec!["A", "B"], 201),
        ("booking, slot taken (B+C)", vec!["B", "C"], 409),
    ] {
        let hour = if kind.contains("A+B") || kind.contains("B+C") { 7 } else { 3 };
        let n = kinds.len();
        log.since(&db);
        let a = send(Req::new("/api/bookings", format!("s{n}"), format!("s{n}"), booking(&rooms, hour))).await;
        assert_eq!(a.status, status, "{kind}: {}", a.json());
        kinds.push((kind, with_marker(&log.since(&db), claim)));
    }
    // Holds and their replay.
    fleet
        .sql(
            "INSERT INTO capacity_resource (code, name, capacity) VALUES ('sample-1', 'sample', 1000000), ('sample-2', 'sample', 1)",
        )
        .await;
    let ids = fleet.ids("SELECT id FROM capacity_resource WHERE name = 'sample' ORDER BY id").await;
    log.since(&db);
    let a = send(Req::new(format!("/api/resources/{}/holds", ids[0]), "o1", "h1", json!({}))).await;
    assert_eq!(a.status, 201, "hold: {}", a.json());
    kinds.push(("hold", with_marker(&log.since(&db), claim)));
    let a = send(Req::new(format!("/api/resources/{}/holds", ids[0]), "o1", "h1", json!({}))).await;
    assert_eq!(a.status, 201, "replay: {}", a.json());
    kinds.push(("hold replay", with_marker(&log.since(&db), claim)));
    // A hand-off: the holder cancels, the waiter is offered the unit and accepts.
    let a = send(Req::new(format!("/api/resources/{}/holds", ids[1]), "h0", "c0", json!({}))).await;
    assert_eq!(a.status, 201, "first hold: {}", a.json());
    let hold = a.json()["id"].as_i64().unwrap();
    let a = send(Req::new(format!("/api/resources/{}/waitlist", ids[1]), "w1", "j1", json!({}))).await;
    assert_eq!(a.status, 201, "waitlist: {}", a.json());
    let entry = a.json()["id"].as_i64().unwrap();
    log.since(&db);
    let a = send(Req::new(format!("/api/holds/{hold}/cancel"), "h0", "x1", json!({}))).await;
    assert_eq!(a.status, 200, "cancel: {}", a.json());
    let cancel = with_marker(&log.since(&db), claim);
    let (s, e) = load::get(&fleet, &base, &format!("/api/waitlist/{entry}"), "w1").await;
    assert_eq!(s, 200, "entry: {e}");
    let offer = e["offerId"].as_i64().expect("an offer");
    log.since(&db);
    let a = send(Req::new(format!("/api/offers/{offer}/accept"), "w1", "a1", json!({}))).await;
    assert_eq!(a.status, 200, "accept: {}", a.json());
    let accept = with_marker(&log.since(&db), claim);
    kinds.push(("hand-off (cancel, then accept)", cancel.into_iter().chain(accept).collect()));
    // The sweeper's transaction for one resource of the drain's backlog.
    fleet.sql(&super::drain::backlog_sql("sample-backlog", 1)).await;
    log.since(&db);
    let res = fleet
        .client
        .post(format!("{base}/api/admin/sweep"))
        .bearer_auth(ADMIN_KEY)
        .header("X-Reservation-Owner", "ops")
        .header("Idempotency-Key", "sweep-1")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200, "sweep: {}", res.text().await.unwrap_or_default());
    let logged = log.since(&db);
    let per_resource = with_marker(&logged, "UPDATE capacity_hold")
        .into_iter()
        .filter(|t| t.iter().any(|s| shape(s) == "SELECT capacity_resource FOR UPDATE"))
        .collect();
    kinds.push(("sweeper, one resource of the backlog", per_resource));
    if std::env::var("REPORT_CAPTURE_ALL").is_ok() {
        let all = transactions(&logged);
        kinds.push(("(every transaction of the admin sweep)", all));
    }
    if let Ok(f) = Arc::try_unwrap(fleet) {
        f.stop().await;
    }
    ServerSample { kinds }
}
