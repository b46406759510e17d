//! Operations: exact metric deltas, request ids in logs, retention purge.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

/// `name{labels}` → value, from the Prometheus text format.
async fn metrics(app: &TestApp) -> HashMap<String, f64> {
    let text = app.http.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.to_owned(), v.parse().ok()?))
        })
        .collect()
}

fn delta(before: &HashMap<String, f64>, after: &HashMap<String, f64>, key: &str) -> f64 {
    after.get(key).copied().unwrap_or(0.0) - before.get(key).copied().unwrap_or(0.0)
}

#[tokio::test]
async fn metrics_count_exactly_what_happened() {
    let app = TestApp::spawn().await;
    let before = metrics(&app).await;

    let b = booking("회의", &["A"], &at(1, 10, 0), &at(1, 11, 0));
    assert_eq!(app.create_booking(TENANT_ONE, "alice", "m1", &b).await.status(), StatusCode::CREATED);
    assert_eq!(app.create_booking(TENANT_ONE, "alice", "m1", &b).await.status(), StatusCode::CREATED); // replay
    assert_eq!(app.create_booking(TENANT_ONE, "bob", "m2", &b).await.status(), StatusCode::CONFLICT); // taken
    let other = booking("다른", &["A"], &at(1, 12, 0), &at(1, 13, 0));
    assert_eq!(app.create_booking(TENANT_ONE, "alice", "m1", &other).await.status(), StatusCode::CONFLICT); // fingerprint
    let hold = |owner: &'static str, key: &'static str| {
        app.request(reqwest::Method::POST, "/api/resources/1/holds", TENANT_ONE, Some(owner))
            .header("Idempotency-Key", key)
            .json(&json!({}))
            .send()
    };
    assert_eq!(hold("alice", "h1").await.unwrap().status(), StatusCode::CREATED);
    assert_eq!(hold("bob", "h2").await.unwrap().status(), StatusCode::CONFLICT);
    app.clock.advance(Duration::seconds(31));
    assert!(matches!(app.state.sweeper.tick().await.unwrap(), yeyak::sweeper::TickOutcome::Elected(_)));

    let after = metrics(&app).await;
    let d = |k: &str| delta(&before, &after, k);
    assert_eq!(d("yeyak_bookings_total{reason=\"\",result=\"created\"}"), 1.0);
    assert_eq!(d("yeyak_bookings_total{reason=\"ROOM_TIME_TAKEN\",result=\"rejected\"}"), 1.0);
    assert_eq!(d("yeyak_holds_total{reason=\"\",result=\"created\"}"), 1.0);
    assert_eq!(d("yeyak_holds_total{reason=\"CAPACITY_EXHAUSTED_OR_STALE\",result=\"rejected\"}"), 1.0);
    assert_eq!(d("yeyak_idempotency_outcomes_total{outcome=\"new\"}"), 4.0);
    assert_eq!(d("yeyak_idempotency_outcomes_total{outcome=\"replay\"}"), 1.0);
    assert_eq!(d("yeyak_idempotency_outcomes_total{outcome=\"conflict\"}"), 1.0);
    assert_eq!(d("yeyak_http_requests_total{method=\"POST\",route=\"/api/bookings\",status=\"201\"}"), 2.0);
    assert_eq!(d("yeyak_http_requests_total{method=\"POST\",route=\"/api/bookings\",status=\"409\"}"), 2.0);
    assert_eq!(d("yeyak_http_requests_total{method=\"POST\",route=\"/api/resources/{id}/holds\",status=\"409\"}"), 1.0);
    assert_eq!(d("yeyak_http_request_duration_seconds_count{method=\"POST\",route=\"/api/bookings\"}"), 4.0);
    assert_eq!(d("yeyak_admission_total{outcome=\"admitted\"}"), 6.0);
    assert_eq!(d("yeyak_sweeper_ticks_total{outcome=\"elected\"}"), 1.0);
    assert_eq!(d("yeyak_sweeper_items_total{kind=\"expired_holds\"}"), 1.0);
    assert_eq!(after["yeyak_sweeper_leader"], 1.0);
    assert_eq!(
        after["yeyak_outbox_deliveries{status=\"pending\"}"], 2.0,
        "the booking's created notice (SPEC §10) and the hold-expired notification"
    );
    assert_eq!(after["yeyak_sweeper_lag_seconds"], 0.0);
    assert!(after.contains_key("yeyak_db_pool_connections{state=\"in_use\"}"));
}

/// A log sink shared by this test binary (the subscriber is global).
#[derive(Clone, Default)]
pub struct Sink(pub Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub fn capture_logs() -> Sink {
    static SINK: OnceLock<Sink> = OnceLock::new();
    SINK.get_or_init(|| {
        let sink = Sink::default();
        let writer = sink.clone();
        tracing_subscriber::fmt()
            .json()
            .with_writer(move || writer.clone())
            .with_max_level(tracing::Level::INFO)
            .init();
        sink
    })
    .clone()
}

#[tokio::test]
async fn the_request_id_flows_into_the_logs_and_secrets_never_do() {
    let logs = capture_logs();
    let app = TestApp::spawn().await;
    let res = app
        .request(reqwest::Method::POST, "/api/bookings", TENANT_ONE, Some("owner-7f3a-very-private"))
        .header("Idempotency-Key", "key-9c1e-very-private")
        .header("X-Request-Id", "req-trace-0042")
        .json(&booking("로그", &["B"], &at(1, 10, 0), &at(1, 11, 0)))
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["x-request-id"], "req-trace-0042");
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    let line = text.lines().find(|l| l.contains("req-trace-0042")).expect("a log line carries the request id");
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["span"]["request_id"], "req-trace-0042");
    assert_eq!(v["fields"]["route"], "/api/bookings");
    assert_eq!(v["fields"]["status"], 201);
    for secret in ["owner-7f3a-very-private", "key-9c1e-very-private", TENANT_ONE] {
        assert!(!text.contains(secret), "logs must not contain {secret}");
    }
}

#[tokio::test]
async fn records_past_retention_are_purged_and_fresh_ones_kept() {
    /// The installation's one purge (the sweeper's), its idempotency part.
    async fn purge(app: &TestApp) -> u64 {
        use yeyak::clock::Clock;
        let mut conn = app.state.pool.get().await.unwrap();
        let purge = yeyak::sweeper::purge::Purge { idempotency_retention: Duration::hours(24), ..Default::default() };
        yeyak::sweeper::purge::run(&mut conn, purge, app.clock.now()).await.unwrap().idempotency_records
    }
    let app = TestApp::spawn().await;
    for i in 0..3 {
        app.create_booking(
            TENANT_ONE,
            "alice",
            &format!("old-{i}"),
            &booking("x", &["C"], &at(3, 8 + i, 0), &at(3, 8 + i, 30)),
        )
        .await;
    }
    app.clock.advance(Duration::hours(23));
    app.create_booking(TENANT_ONE, "alice", "new", &booking("y", &["C"], &at(3, 14, 0), &at(3, 15, 0))).await;
    let purged = purge(&app).await;
    assert_eq!(purged, 0, "nothing is 24 h old yet");
    app.clock.advance(Duration::hours(2));
    let purged = purge(&app).await;
    assert_eq!(purged, 3);
    let left: Vec<String> = app
        .db()
        .await
        .query("SELECT idempotency_key FROM idempotency_record", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(left, ["new"]);
    // The bookings themselves stay.
    assert_eq!(app.count("SELECT count(*) FROM reservation").await, 4);
}

#[tokio::test]
async fn a_long_expired_in_progress_claim_shows_on_the_consistency_check() {
    let app = TestApp::spawn().await;
    use yeyak::clock::Clock;
    let now = app.clock.now();
    app.db()
        .await
        .execute(
            "INSERT INTO idempotency_record (tenant, operation, idempotency_key, fingerprint, state, owner_token, lease_expires_at, created_at)
             VALUES ('t1', 'admin.sweep', 'crashed', 'f', 'IN_PROGRESS', gen_random_uuid(), $1::text::timestamptz, $1::text::timestamptz)",
            &[&(now - Duration::minutes(11)).to_rfc3339()],
        )
        .await
        .unwrap();
    let (ok, report) = app.consistency().await;
    assert!(!ok);
    let stale = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "idempotency_stale_in_progress")
        .unwrap()
        .clone();
    assert_eq!(stale["count"], 1);
    assert_eq!(stale["samples"][0]["operation"], "admin.sweep");
}

/// The JSON routes as the source registers them, read from the text of
/// `src/http/` and `src/routes.rs` rather than from the registry that also
/// writes the document: each `Method::X, "/path"` pair, under `/api`. Any
/// other way to register a route there (`web::get()` and kin) fails the test.
fn json_routes_in_the_source() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("src/http"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.push(root.join("src/routes.rs"));
    let mut routes = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        if !file.ends_with("routes.rs") {
            for verb in ["get", "post", "put", "patch", "delete"] {
                assert!(
                    !text.contains(&format!("web::{verb}()")),
                    "{} registers a route outside the documented registry",
                    file.display()
                );
            }
        }
        for (at, _) in text.match_indices("Method::") {
            let rest = &text[at + "Method::".len()..];
            let verb: String = rest.chars().take_while(|c| c.is_ascii_uppercase()).collect();
            let after = rest[verb.len()..].trim_start();
            let Some(after) = after.strip_prefix(',') else { continue };
            let Some(quoted) = after.trim_start().strip_prefix('"') else { continue };
            let path = quoted.split('"').next().unwrap();
            routes.push((format!("/api{path}"), verb.to_lowercase()));
        }
    }
    routes.sort();
    assert!(routes.len() > 30, "the scan found the routes ({})", routes.len());
    routes
}

#[tokio::test]
async fn the_openapi_document_parses_and_lists_every_route() {
    let app = TestApp::spawn().await;
    let res = app.http.get(app.url("/api/openapi.json")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let text = res.text().await.unwrap();
    let spec = oas3::from_json(&text).expect("a valid OpenAPI 3.1 document");
    assert_eq!(spec.openapi, "3.1.0");
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    // The rooms the reads show carry their calendar address (SPEC §17).
    let room = &doc["components"]["schemas"]["RoomWithAddress"];
    assert!(room.to_string().contains("\"calendarAddress\""), "{room}");
    let required = room["required"].as_array().map(|r| r.iter().any(|f| f == "calendarAddress"));
    assert_eq!(required, Some(true), "calendarAddress is always there: {room}");

    // Validated against the official OpenAPI 3.1 schema (openapi-spec-validator
    // from PyPI ships it; .ci/run installs it).
    let file = std::env::temp_dir().join(format!("yeyak-openapi-{}.json", uuid::Uuid::new_v4().simple()));
    std::fs::write(&file, &text).unwrap();
    let check = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys; from openapi_spec_validator import validate; \
             from openapi_spec_validator.readers import read_from_filename; \
             validate(read_from_filename(sys.argv[1])[0]); print('valid')",
        ])
        .arg(&file)
        .output()
        .expect("python3 runs");
    let _ = std::fs::remove_file(&file);
    assert!(
        check.status.success(),
        "the document must validate against the OpenAPI 3.1 schema (pip install openapi-spec-validator): {}",
        String::from_utf8_lossy(&check.stderr)
    );

    // Every route the app registered is documented, and nothing else.
    let mut documented: Vec<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(p, ops)| ops.as_object().unwrap().keys().map(move |m| (p.clone(), m.clone())))
        .collect();
    documented.sort();
    assert_eq!(documented, json_routes_in_the_source(), "the document against the routes the source registers");

    // The contract of SPEC §7.1 and §7.2 is all there.
    let contract = [
        ("get", "/api/resources"),
        ("post", "/api/resources"),
        ("post", "/api/resources/{id}/holds"),
        ("get", "/api/holds/{id}"),
        ("post", "/api/holds/{id}/confirm"),
        ("post", "/api/holds/{id}/cancel"),
        ("post", "/api/holds/{id}/extend"),
        ("post", "/api/resources/{id}/waitlist"),
        ("get", "/api/waitlist/{id}"),
        ("post", "/api/waitlist/{id}/cancel"),
        ("get", "/api/offers/{id}"),
        ("post", "/api/offers/{id}/accept"),
        ("post", "/api/offers/{id}/decline"),
        ("post", "/api/admin/sweep"),
        ("get", "/api/rooms"),
        ("get", "/api/bookings"),
        ("post", "/api/bookings"),
        ("get", "/api/bookings/{id}"),
        ("patch", "/api/bookings/{id}"),
        ("post", "/api/bookings/{id}/cancel"),
        ("get", "/api/rooms/{code}/availability"),
        ("get", "/api/admin/consistency"),
    ];
    for (method, path) in contract {
        assert!(documented.contains(&(path.to_owned(), method.to_owned())), "{method} {path} missing");
    }
    // And each documented route is served (not the API's 404 for unknown routes).
    for (path, method) in &documented {
        let concrete = path.replace("{id}", "1").replace("{code}", "A").replace("{delivery_id}", "x");
        let res = app
            .http
            .request(reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(), app.url(&concrete))
            .send()
            .await
            .unwrap();
        let body: serde_json::Value = res.json().await.unwrap_or_default();
        assert_ne!(body["details"]["what"], "route", "{method} {path} is documented but not served");
    }
    // Schemas come from the types; error codes are listed.
    assert!(doc["components"]["schemas"]["ErrorCode"]["enum"].as_array().unwrap().contains(&json!("ROOM_TIME_TAKEN")));
    let create = &doc["paths"]["/api/bookings"]["post"];
    // Named types are components referred to by `$ref`.
    let component = |schema: &serde_json::Value| {
        let name = schema["$ref"].as_str().expect("a $ref").trim_start_matches("#/components/schemas/").to_owned();
        doc["components"]["schemas"][name].clone()
    };
    // A desk is booked by `date` and `unit` without a title (SPEC §28), so
    // only `rooms` is required of every booking; a room's refusal of a
    // missing `startsAt` names it (tests/api/desks.rs).
    let request = component(&create["requestBody"]["content"]["application/json"]["schema"]);
    assert_eq!(request["required"], json!(["rooms"]));
    for field in ["title", "startsAt", "endsAt", "date", "unit"] {
        assert!(request["properties"][field].is_object(), "{field} is documented");
    }
    assert_eq!(
        create["responses"]["201"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/Booking"
    );
    assert!(create["responses"]["409"]["description"].as_str().unwrap().contains("ROOM_TIME_TAKEN"));
    assert!(create["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "Idempotency-Key" && p["required"] == true));
}
