//! The integrator's path: a client generated from the served, unedited
//! `/api/openapi.json` by real generators, then used. `openapi-python-client`
//! (PyPI) must generate without a single warning, give one `Booking` model
//! and one module per tag, and its client must book rooms A+B, read the
//! booking back as that same type, read a 409 as an `Error`, and take and
//! confirm a hold. `openapi-typescript` (npm) types must type-check a small
//! use under `tsc --noEmit`.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

use crate::helpers::*;

/// A fresh directory under `target/` (kept when a test fails, for reading).
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/generated-clients")
        .join(format!("{name}-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Runs a command off the async workers (the server under test keeps serving).
async fn run(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().expect("the tool is installed (bash .ci/test installs it)"))
        .await
        .unwrap()
}

/// The generated client in use, run by Python with the package on its path.
const SCENARIO: &str = r#"
import datetime, os, re, sys
sys.path.insert(0, os.environ["CLIENT_DIR"])
from yeyak_client import AuthenticatedClient
from yeyak_client.api.bookings import create_booking, get_booking
from yeyak_client.api.capacity import confirm_hold, create_hold, create_resource
from yeyak_client.models import (Booking, CreateBookingRequest, Error, ErrorCode, Hold,
                                 HoldBody, NewResourceBody, ResourceView, TransitionBody)
import yeyak_client.models as models

# One Booking model, and no per-operation copy of any type.
# Every model is a component or a part of one (a nested object such as
# ErrorDetails); a model named after an operation or a path is a copy, and
# one named …Type0 is a stray piece of a union.
names = set(models.__all__)
components = os.environ["COMPONENTS"].split(",")
copies = sorted(n for n in names if not any(n.startswith(c) for c in components))
assert not copies, f"models that are not components: {copies}"
unions = sorted(n for n in names if re.search(r"Type\d+$", n))
assert not unions, f"union pieces: {unions}"
assert [n for n in names if "Booking" in n and n.endswith("Booking")] == ["Booking"], sorted(names)

url = os.environ["BASE_URL"]
client = AuthenticatedClient(base_url=url, token=os.environ["KEY"], raise_on_unexpected_status=True)
admin = AuthenticatedClient(base_url=url, token=os.environ["ADMIN_KEY"], raise_on_unexpected_status=True)
starts = datetime.datetime.fromisoformat(os.environ["STARTS"])
ends = datetime.datetime.fromisoformat(os.environ["ENDS"])

# Book A+B; read it back as the same type.
made = create_booking.sync_detailed(
    client=client, x_reservation_owner="alice", idempotency_key="generated-1",
    body=CreateBookingRequest(title="생성된 클라이언트", rooms=["A", "B"], starts_at=starts, ends_at=ends))
assert made.status_code == 201, made
booking = made.parsed
assert type(booking) is Booking, type(booking)
assert booking.rooms == ["A", "B"] and booking.starts_at == starts and booking.version == 1
again = get_booking.sync(client=client, id=booking.id)
assert type(again) is Booking and again == booking, (again, booking)

# The same time in B again: a 409 read as an Error.
taken = create_booking.sync_detailed(
    client=client, x_reservation_owner="bob", idempotency_key="generated-2",
    body=CreateBookingRequest(title="겹침", rooms=["B"], starts_at=starts, ends_at=ends))
assert taken.status_code == 409, taken
assert type(taken.parsed) is Error, taken.parsed
assert taken.parsed.code == ErrorCode.ROOM_TIME_TAKEN, taken.parsed.code
assert taken.parsed.message == "이미 예약된 시간입니다", taken.parsed.message

# A resource (admin), a hold on it, the hold confirmed.
resource = create_resource.sync(
    client=admin, x_reservation_owner="ops", idempotency_key="generated-3",
    body=NewResourceBody(code="generated-seats", name="좌석", capacity=2))
assert type(resource) is ResourceView and resource.available_count == 2, resource
hold = create_hold.sync(
    client=client, id=resource.id, x_reservation_owner="alice", idempotency_key="generated-4",
    body=HoldBody(quantity=1))
assert type(hold) is Hold and hold.state == "HELD", hold
done = confirm_hold.sync(
    client=client, id=hold.id, x_reservation_owner="alice", idempotency_key="generated-5",
    body=TransitionBody(expected_revision=hold.revision))
assert type(done) is Hold and done.id == hold.id and done.state == "CONFIRMED", done
print("scenario passed")
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_python_client_generates_a_clean_client_that_books_and_holds() {
    let app = TestApp::spawn().await;
    let doc: Value = app.http.get(app.url("/api/openapi.json")).send().await.unwrap().json().await.unwrap();
    let dir = scratch("python");
    // For reading when the test fails; the generator reads the served one.
    std::fs::write(dir.join("openapi.json"), serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let package = dir.join("yeyak_client");

    // The generator reads a floor plan's image types (SPEC §28) as the raw
    // bytes it knows (`application/octet-stream`); the document is unedited.
    let config = dir.join("config.yaml");
    let raw = "application/octet-stream";
    let overrides = format!("content_type_overrides:\n  image/png: {raw}\n  image/jpeg: {raw}\n  image/webp: {raw}\n");
    std::fs::write(&config, overrides).unwrap();
    let mut generate = Command::new("openapi-python-client");
    generate
        .current_dir(&dir)
        .args(["generate", "--meta", "none", "--fail-on-warning", "--url", &app.url("/api/openapi.json")])
        .arg("--config")
        .arg(&config)
        .arg("--output-path")
        .arg(&package)
        // Plain, unwrapped lines.
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env("COLUMNS", "200");
    let out = run(generate).await;
    let log = text(&out);
    assert!(out.status.success(), "openapi-python-client failed:\n{log}");
    let warnings: Vec<&str> =
        log.lines().filter(|l| l.to_ascii_lowercase().contains("warning") || l.contains("Error")).collect();
    assert!(warnings.is_empty(), "the generator warned:\n{log}");
    println!("openapi-python-client:\n{log}");

    // One module per tag, no `default` module of untagged operations.
    let mut modules: Vec<String> = std::fs::read_dir(package.join("api"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("__"))
        .collect();
    modules.sort();
    assert_eq!(modules, ["admin", "bookings", "capacity", "rooms", "series"]);
    assert!(package.join("models/booking.py").is_file());

    let components: Vec<&str> = doc["components"]["schemas"].as_object().unwrap().keys().map(String::as_str).collect();
    let mut scenario = Command::new("python3");
    scenario
        .args(["-c", SCENARIO])
        .env("CLIENT_DIR", &dir)
        .env("COMPONENTS", components.join(","))
        .env("BASE_URL", &app.address)
        .env("KEY", TENANT_ONE)
        .env("ADMIN_KEY", ADMIN)
        .env("STARTS", at(1, 10, 0))
        .env("ENDS", at(1, 11, 0));
    let out = run(scenario).await;
    assert!(out.status.success(), "the generated client's scenario failed:\n{}", text(&out));
    assert!(text(&out).contains("scenario passed"));
    app.assert_consistent().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// `openapi-typescript` and `typescript` (npm), under `target/node` on first use.
fn node_tool(bin: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/node");
    let tool = root.join("node_modules/.bin").join(bin);
    if !tool.exists() {
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&root)
            .args(["openapi-typescript@7", "typescript@5"])
            .status()
            .expect("npm is installed");
        assert!(status.success(), "npm install openapi-typescript typescript");
    }
    tool
}

/// A small use of the generated types; `tsc` rejects it if a type is missing
/// or is not the shared `Booking`/`Error`/`Hold` component.
const USE_TS: &str = r#"
import type { components, paths } from "./yeyak";

type Booking = components["schemas"]["Booking"];
type Json<T> = T extends { content: { "application/json": infer B } } ? B : never;

type Created = Json<paths["/api/bookings"]["post"]["responses"][201]>;
type Read = Json<paths["/api/bookings/{id}"]["get"]["responses"][200]>;
type Moved = Json<paths["/api/bookings/{id}"]["patch"]["responses"][200]>;
type Taken = Json<paths["/api/bookings"]["post"]["responses"][409]>;
type Confirmed = Json<paths["/api/holds/{id}/confirm"]["post"]["responses"][200]>;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const created: Same<Created, Booking> = true;
const read: Same<Read, Booking> = true;
const moved: Same<Moved, Booking> = true;
const taken: Same<Taken, components["schemas"]["Error"]> = true;
const confirmed: Same<Confirmed, components["schemas"]["Hold"]> = true;

const body: paths["/api/bookings"]["post"]["requestBody"] = {
  content: { "application/json": { title: "회의", rooms: ["A", "B"], startsAt: "2030-01-07T10:00:00+09:00", endsAt: "2030-01-07T11:00:00+09:00" } },
};
const headers: paths["/api/bookings"]["post"]["parameters"]["header"] = {
  "X-Reservation-Owner": "alice",
  "Idempotency-Key": "k1",
};
function describe(b: Booking): string {
  return `${b.id} ${b.title} ${b.rooms.join("+")} ${b.startsAt}-${b.endsAt} v${b.version}`;
}
// A literal outside the ErrorCode enum would not compare.
function isTaken(e: components["schemas"]["Error"]): boolean {
  return e.code === "ROOM_TIME_TAKEN";
}
export { created, read, moved, taken, confirmed, body, headers, describe, isTaken };
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_typescript_types_check_a_small_use() {
    let app = TestApp::spawn().await;
    let (generator, tsc) =
        tokio::task::spawn_blocking(|| (node_tool("openapi-typescript"), node_tool("tsc"))).await.unwrap();
    let dir = scratch("typescript");
    let mut generate = Command::new(&generator);
    generate.arg(app.url("/api/openapi.json")).arg("--output").arg(dir.join("yeyak.ts")).env("NO_COLOR", "1");
    let out = run(generate).await;
    let log = text(&out);
    assert!(out.status.success(), "openapi-typescript failed:\n{log}");
    assert!(!log.to_ascii_lowercase().contains("warn"), "openapi-typescript warned:\n{log}");

    std::fs::write(dir.join("use.ts"), USE_TS).unwrap();
    let mut check = Command::new(&tsc);
    check.current_dir(&dir).args([
        "--noEmit",
        "--strict",
        "--target",
        "es2020",
        "--module",
        "es2020",
        "--moduleResolution",
        "bundler",
        "use.ts",
    ]);
    let out = run(check).await;
    assert!(out.status.success(), "tsc rejected the use of the generated types:\n{}", text(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Method, path, success status, and (status, code) of errors it must list.
type Documented = (&'static str, &'static str, &'static str, &'static [(&'static str, &'static str)]);

/// Part II's JSON routes (SPEC §8, §9, §11, §12) are in the document with
/// the error codes the spec gives them, and every answer of every operation
/// is a `$ref` to a component: what keeps generated clients to one type each.
#[tokio::test]
async fn part_two_routes_are_documented_with_their_error_codes() {
    let app = TestApp::spawn().await;
    let doc: Value = app.http.get(app.url("/api/openapi.json")).send().await.unwrap().json().await.unwrap();
    let expected: &[Documented] = &[
        ("get", "/api/rooms", "200", &[]),
        ("get", "/api/rooms/{code}", "200", &[("404", "NOT_FOUND")]),
        ("get", "/api/rooms/free", "200", &[("400", "MALFORMED_REQUEST")]),
        ("post", "/api/rooms", "201", &[("403", "FORBIDDEN"), ("409", "ROOM_CODE_TAKEN")]),
        ("patch", "/api/rooms/{code}", "200", &[("403", "FORBIDDEN"), ("404", "NOT_FOUND")]),
        ("post", "/api/rooms/{code}/retire", "200", &[("403", "FORBIDDEN"), ("409", "ROOM_HAS_FUTURE_BOOKINGS")]),
        (
            "post",
            "/api/bookings",
            "201",
            &[
                ("400", "BOOKING_TOO_LONG"),
                ("400", "BEYOND_HORIZON"),
                ("409", "QUOTA_EXCEEDED"),
                ("409", "ROOM_TIME_TAKEN"),
            ],
        ),
        ("patch", "/api/bookings/{id}", "200", &[("400", "BEYOND_HORIZON"), ("409", "QUOTA_EXCEEDED")]),
        (
            "post",
            "/api/series",
            "201",
            &[
                ("400", "IDEMPOTENCY_KEY_REQUIRED"),
                ("400", "SERIES_TOO_LONG"),
                ("400", "BEYOND_HORIZON"),
                ("400", "INVALID_RECURRENCE"),
                ("409", "SERIES_CONFLICT"),
                ("409", "QUOTA_EXCEEDED"),
            ],
        ),
        ("get", "/api/series/{id}", "200", &[("404", "NOT_FOUND")]),
        ("patch", "/api/series/{id}", "200", &[("403", "NOT_ORGANIZER"), ("409", "SERIES_CONFLICT")]),
        ("post", "/api/series/{id}/cancel", "200", &[("403", "NOT_ORGANIZER"), ("404", "NOT_FOUND")]),
        (
            "post",
            "/api/bookings/{id}/check-in",
            "200",
            &[("403", "NOT_ORGANIZER"), ("409", "CHECK_IN_CLOSED"), ("409", "CHECK_IN_NOT_REQUIRED")],
        ),
        (
            "post",
            "/api/bookings/{id}/approve",
            "200",
            &[("400", "IDEMPOTENCY_KEY_REQUIRED"), ("403", "FORBIDDEN"), ("409", "INVALID_STATE")],
        ),
        (
            "post",
            "/api/bookings/{id}/reject",
            "200",
            &[("400", "IDEMPOTENCY_KEY_REQUIRED"), ("403", "FORBIDDEN"), ("409", "INVALID_STATE")],
        ),
        ("get", "/api/bookings/{id}/history", "200", &[("404", "NOT_FOUND")]),
    ];
    for (method, path, success, errors) in expected {
        let op = &doc["paths"][path][method];
        assert!(op.is_object(), "{method} {path} is not documented");
        assert!(op["responses"][success].is_object(), "{method} {path}: no {success}");
        for (status, code) in *errors {
            let listed = op["responses"][status]["description"].as_str().unwrap_or_default();
            let codes: Vec<&str> = listed.trim_start_matches("error: ").split(", ").collect();
            assert!(codes.contains(code), "{method} {path}: {status} {code} missing (has {listed:?})");
        }
    }
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            for (status, response) in op["responses"].as_object().unwrap() {
                // JSON answers are named components; the CSV reports answer text.
                let content = response["content"].as_object().unwrap();
                let schema = match content.get("text/csv") {
                    Some(csv) => {
                        assert_eq!(csv["schema"]["type"], "string", "{method} {path} {status}");
                        continue;
                    }
                    None => &response["content"]["application/json"]["schema"],
                };
                assert!(schema["$ref"].is_string(), "{method} {path} {status} answers an inline schema: {schema}");
            }
            if let Some(body) = op.get("requestBody") {
                // A floor plan (SPEC §28) is sent as the image's own bytes.
                if let Some(png) = body["content"].get("image/png") {
                    assert_eq!(png["schema"]["format"], "binary", "{method} {path}");
                    continue;
                }
                let schema = &body["content"]["application/json"]["schema"];
                assert!(schema["$ref"].is_string(), "{method} {path} takes an inline schema: {schema}");
            }
        }
    }
}
