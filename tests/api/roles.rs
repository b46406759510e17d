//! The role matrix (issue 24, issue 37): every registered operation against
//! every kind of caller, allowed or refused by the pipeline itself (so no
//! door can reach a command around it) exactly as SPEC.md says — the
//! expected answers are a table written by hand from the SPEC, never read
//! from the declarations under test, so a wrong declaration fails here. Also:
//! every `Operation` static in `src/` is registered, and every JSON route
//! that runs an operation an integration may not run answers an integration
//! key 403.

use std::collections::BTreeSet;
use std::path::Path;

use reqwest::StatusCode;
use serde_json::{json, Value};
use yeyak::command::{Command, CommandError, Ctx, Operation, Principal, Role};
use yeyak::error::ErrorCode;
use yeyak::idempotency::IdempotencyKey;

use crate::helpers::*;
use Role::{Admin, Display, Integration, Staff, System};

/// Who may run each operation, from SPEC.md (§ in each comment). "Staff" is
/// a signed-in person, "Admin" an admin person or admin API key,
/// "Integration" an integration's key acting for an owner, "Display" a room's
/// door display, "System" yeyak's own background work. Where the SPEC names
/// no caller, the row repeats today's declaration and says so.
const EXPECTED: &[(&str, &[Role])] = &[
    // §2, §7.2: a signed-in person or an API call books (the organizer is
    // the person or the key's owner; an admin key too); §11: "book now" at the door.
    ("booking.create", &[Staff, Admin, Integration, Display]),
    // §5, §7.2: only the organizer (a person, or the owner of the creating
    // API call) or an admin moves or cancels; §11: a display token grants nothing else.
    ("booking.move", &[Staff, Admin, Integration]),
    ("booking.cancel", &[Staff, Admin, Integration]),
    // §12: approve and reject are for admins.
    ("booking.approve", &[Admin]),
    ("booking.reject", &[Admin]),
    // §11: organizer or admin, and at the door the display's form.
    ("booking.check_in", &[Staff, Admin, Integration, Display]),
    // §11: a booking not checked in is released by the sweeper.
    ("booking.release_no_shows", &[System]),
    // §9: POST /api/series and the form's repeat choice; the same
    // organizer/admin rule as bookings for changes and cancels.
    ("series.create", &[Staff, Admin, Integration]),
    ("series.update", &[Staff, Admin, Integration]),
    ("series.cancel", &[Staff, Admin, Integration]),
    // §8: the admin-key API and /admin/rooms.
    ("room.create", &[Admin]),
    ("room.update", &[Admin]),
    ("room.retire", &[Admin]),
    // §24: POST and PATCH /api/areas take an admin key.
    ("area.create", &[Admin]),
    ("area.update", &[Admin]),
    // §24: POST /api/holiday-calendars and PUT …/days take an admin key.
    ("holiday_calendar.create", &[Admin]),
    ("holiday_calendar.replace_days", &[Admin]),
    // §28: PUT /api/areas/{code}/plan takes an admin key; /admin/areas' upload.
    ("area.replace_plan", &[Admin]),
    // §7.1: POST /api/resources takes an admin key.
    ("resource.create", &[Admin]),
    // §7.1, §7.3: the capacity routes not marked "admin key" take any API
    // key (role integration or admin), acting for X-Reservation-Owner; no
    // signed-in person and no display reaches them.
    ("hold.create", &[Integration, Admin]),
    ("hold.confirm", &[Integration, Admin]),
    ("hold.cancel", &[Integration, Admin]),
    ("hold.extend", &[Integration, Admin]),
    ("waitlist.join", &[Integration, Admin]),
    ("waitlist.cancel", &[Integration, Admin]),
    ("offer.accept", &[Integration, Admin]),
    ("offer.decline", &[Integration, Admin]),
    // §13: an admin may evict a waiting or offered entry.
    ("waitlist.evict", &[Admin]),
    // §6 (and §11's backlog): expiry is the sweeper's work.
    ("capacity.settle", &[System]),
    ("capacity.drain", &[System]),
    // SPEC silent: §10 says reminders are sent, not who enqueues them; today's declaration.
    ("mail.enqueue_reminders", &[System]),
    // SPEC silent: §18 lets admins list a booking's deliveries but names no
    // re-drive; today's declaration.
    ("outbox.redrive", &[Admin]),
    // §7.1: POST /api/admin/sweep takes an admin key.
    ("admin.sweep", &[Admin]),
    // §13, §15: admins add, disable and re-enable staff and reset passwords on /admin/staff.
    ("staff.create", &[Admin]),
    ("staff.set_disabled", &[Admin]),
    ("staff.reset_password", &[Admin]),
    // §25: admins change a person over JSON and on /admin/staff (delegates too).
    ("staff.update", &[Admin]),
    ("staff.erase", &[Admin]),
    // §25: a person names and removes their own delegates on /account.
    ("staff.add_delegate", &[Staff, Admin]),
    ("staff.remove_delegate", &[Staff, Admin]),
    // §25: the organizer (or their delegate, or an admin) restores a struck series.
    ("series.restore", &[Staff, Admin]),
    // §13: keys are created and revoked by admins (/admin/staff, /api/admin/keys).
    ("key.create", &[Admin]),
    ("key.revoke", &[Admin]),
    // §19, §21: the signed-in person's own choice on /account.
    ("staff.set_language", &[Staff, Admin]),
    // §24: /account gains time_zone.
    ("staff.set_time_zone", &[Staff, Admin]),
    // §13: a person changes their own password on /account.
    ("staff.change_own_password", &[Staff, Admin]),
    // §28: a person names their own days away on /account.
    ("staff.add_away", &[Staff, Admin]),
    // §10: a person replaces their own feed address on /account.
    ("calendar_token.rotate", &[Staff, Admin]),
    // §17, §23: a person's calendar app stores and deletes their own events.
    ("calendar_object.put", &[Staff, Admin]),
    ("calendar_object.delete", &[Staff, Admin]),
    // §17: a person makes and revokes their app passwords on /account.
    ("app_password.create", &[Staff, Admin]),
    ("app_password.revoke", &[Staff, Admin]),
    // §11: admins create and revoke display tokens on /admin/rooms.
    ("display_token.issue", &[Admin]),
    ("display_token.revoke", &[Admin]),
];

/// Whether the SPEC's table lets `role` run the operation named `name`.
fn spec_allows(name: &str, role: Role) -> bool {
    let (_, roles) = EXPECTED
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("{name} has no row in EXPECTED: add one from SPEC.md"));
    roles.contains(&role)
}

/// Runs nothing but stands for `op`: what the pipeline decides before any
/// work is what this test checks.
struct Probe(&'static Operation);

impl Command for Probe {
    type Output = Value;

    fn operation(&self) -> &'static Operation {
        self.0
    }

    fn fingerprint(&self) -> Value {
        json!({ "probe": self.0.name })
    }

    async fn run(&self, _: &mut yeyak::db::Conn, ctx: &Ctx<'_>) -> Result<Value, CommandError> {
        Ok(json!({ "ranFor": ctx.principal.role().as_str() }))
    }
}

/// One caller of each kind.
fn callers() -> Vec<(Role, Principal)> {
    let tenant = yeyak::auth::api_key::Tenant::parse("t1").unwrap();
    let owner = yeyak::auth::OwnerId::parse("o").unwrap();
    vec![
        (Role::Staff, Principal::person(b"k", 1, "alice", "Alice", false)),
        (Role::Admin, Principal::person(b"k", 2, "root", "Root", true)),
        (Role::Admin, Principal::api_key(b"k", &tenant, true, None)),
        (Role::Integration, Principal::api_key(b"k", &tenant, false, Some(&owner))),
        (Role::Display, Principal::display(b"k", "A", "에이")),
        (Role::System, Principal::system("yeyak")),
    ]
}

#[test]
fn the_spec_table_has_one_row_for_each_registered_operation() {
    let registered: BTreeSet<&str> = yeyak::operations::ALL.iter().map(|op| op.name).collect();
    let mut rows: Vec<&str> = EXPECTED.iter().map(|(name, _)| *name).collect();
    rows.sort_unstable();
    let table: BTreeSet<&str> = rows.iter().copied().collect();
    assert_eq!(rows.len(), table.len(), "an operation has two rows");
    let missing: Vec<_> = registered.difference(&table).collect();
    let unknown: Vec<_> = table.difference(&registered).collect();
    assert!(missing.is_empty() && unknown.is_empty(), "without a row: {missing:?}; rows of no operation: {unknown:?}");
}

#[tokio::test]
async fn every_operation_is_allowed_or_refused_to_every_caller_as_the_spec_says() {
    let app = TestApp::spawn().await;
    let mut checked = 0;
    let mut disagreements = Vec::new();
    for op in yeyak::operations::ALL.iter().copied() {
        for (i, (role, principal)) in callers().into_iter().enumerate() {
            assert_eq!(principal.role(), role);
            let key = format!("matrix-{}-{i}", op.name);
            let outcome =
                app.state.pipeline.execute(&principal, Some(IdempotencyKey::parse(&key).unwrap()), &Probe(op)).await;
            let stored =
                app.count(&format!("SELECT count(*) FROM idempotency_record WHERE idempotency_key = '{key}'")).await;
            checked += 1;
            match (spec_allows(op.name, role), outcome) {
                (true, Ok(done)) => {
                    assert_eq!(done.answer.unwrap()["ranFor"], role.as_str());
                    assert_eq!(done.response.status, op.status, "{}", op.name);
                    assert_eq!(stored, 1, "{} as {role:?} stores its answer", op.name);
                }
                (false, Err(refused)) => {
                    assert_eq!(refused.code, ErrorCode::Forbidden, "{} as {role:?}", op.name);
                    assert_eq!(refused.details["operation"], op.name);
                    assert_eq!(stored, 0, "a refused {} leaves nothing behind", op.name);
                }
                (true, Err(e)) => {
                    disagreements.push(format!("{} refused {role:?} ({:?}); SPEC allows it", op.name, e.code))
                }
                (false, Ok(_)) => disagreements.push(format!("{} ran for {role:?}; SPEC refuses it", op.name)),
            }
        }
    }
    assert!(disagreements.is_empty(), "the pipeline disagrees with SPEC.md:\n{}", disagreements.join("\n"));
    assert_eq!(checked, yeyak::operations::ALL.len() * 6);
    assert!(checked >= 35 * 6, "the registry lost operations: {checked}");
}

/// `static NAME: Operation = …` (or `const`) items in a Rust source, with
/// the operation name each one declares.
fn declared_operations(source: &str, file: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find(": Operation") {
        let head = &rest[..at];
        let tail = &rest[at + ": Operation".len()..];
        rest = tail;
        let item = head.rsplit(['\n', ';', '{', '}']).next().unwrap_or("").trim();
        let words: Vec<&str> = item.split_whitespace().collect();
        let &[.., keyword, ident] = words.as_slice() else { continue };
        if !(keyword == "static" || keyword == "const") || !tail.trim_start().starts_with('=') {
            continue;
        }
        let value = tail.trim_start()[1..].trim_start();
        let name = ["Operation::new(", "name:"]
            .iter()
            .filter_map(|marker| value.find(marker).map(|i| &value[i + marker.len()..]))
            .map(|v| v.trim_start())
            .find(|v| v.starts_with('"'))
            .and_then(|v| v[1..].split('"').next())
            .unwrap_or_else(|| panic!("{}: cannot read the name of the operation {ident}", file.display()));
        found.push((ident.to_owned(), name.to_owned()));
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_operation_static_in_src_is_in_the_registry() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let registered: BTreeSet<&str> = yeyak::operations::ALL.iter().map(|op| op.name).collect();
    let mut declared = BTreeSet::new();
    let mut unregistered = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        for (ident, name) in declared_operations(&source, &file) {
            let at = file.strip_prefix(&src).unwrap().display().to_string();
            if !registered.contains(name.as_str()) {
                unregistered.push(format!("{at}: {ident} ({name})"));
            }
            assert!(declared.insert(name.clone()), "{at}: {ident} declares {name} a second time");
        }
    }
    assert!(unregistered.is_empty(), "not in yeyak::operations::ALL: {unregistered:?}");
    // The scan itself is checked: it finds every registered operation.
    let found: BTreeSet<&str> = declared.iter().map(String::as_str).collect();
    assert_eq!(found, registered, "the scan of src/ and the registry disagree");
}

#[tokio::test]
async fn every_route_that_runs_an_operation_runs_a_registered_one() {
    let app = TestApp::spawn().await;
    // The registry fills as a worker builds its routes: one request makes sure.
    let _ = app.http.get(app.url("/api/openapi.json")).send().await.unwrap();
    let routes = yeyak::http::openapi::command_routes();
    assert!(routes.len() >= 20, "routes lost their `.runs`: {}", routes.len());
    for route in &routes {
        let registered = yeyak::operations::find(route.operation.name)
            .unwrap_or_else(|| panic!("{} {} runs an unregistered operation", route.method, route.path));
        assert!(std::ptr::eq(registered, route.operation), "{} is declared twice", route.operation.name);
        // A route with an admin door runs only what admins may run.
        if route.admin_door {
            assert!(!spec_allows(route.operation.name, Role::Integration), "{}", route.path);
        }
    }
}

#[tokio::test]
async fn an_integration_key_gets_403_from_every_admin_operation() {
    let app = TestApp::spawn().await;
    // The registry fills as a worker builds its routes: one request makes sure.
    let _ = app.http.get(app.url("/api/openapi.json")).send().await.unwrap();
    let routes = yeyak::http::openapi::command_routes();
    let admin_only: Vec<_> = routes.iter().filter(|r| !spec_allows(r.operation.name, Role::Integration)).collect();
    assert!(admin_only.len() >= 8, "admin routes: {}", admin_only.len());
    for route in admin_only {
        let path = fill(&route.path);
        let before = fingerprint(&app, &["reservation", "room", "capacity_resource", "idempotency_record"]).await;
        let method = reqwest::Method::from_bytes(route.method.to_ascii_uppercase().as_bytes()).unwrap();
        let res = app
            .http
            .request(method, app.url(&path))
            .bearer_auth(TENANT_ONE)
            .header("X-Reservation-Owner", "someone")
            .header("Idempotency-Key", format!("integration-{path}"))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        let (status, body) = body(res).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{} {path}: {body}", route.method);
        assert_eq!(body["code"], "FORBIDDEN", "{path}");
        let after = fingerprint(&app, &["reservation", "room", "capacity_resource", "idempotency_record"]).await;
        assert_eq!(before, after, "{path} changed something for an integration key");
    }
}

/// A route template with its parameters filled in (`/bookings/{id}` → `/bookings/1`).
fn fill(template: &str) -> String {
    let mut out = String::new();
    let mut in_param = false;
    for c in template.chars() {
        match c {
            '{' => {
                in_param = true;
                out.push('1');
            }
            '}' => in_param = false,
            c if !in_param => out.push(c),
            _ => {}
        }
    }
    out
}
