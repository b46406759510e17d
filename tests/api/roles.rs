//! The role matrix (issue 24): every registered operation against every
//! kind of caller, allowed or refused exactly as its declaration says, by
//! the pipeline itself (so no door can reach a command around it); and every
//! JSON route that runs an operation an integration may not run answers an
//! integration key 403. Both lists come from the registrations
//! (`yeyak::operations::ALL`, the routes' `.runs(...)`), not from a hand list.

use reqwest::StatusCode;
use serde_json::{json, Value};
use yeyak::command::{Command, CommandError, Ctx, Operation, Principal, Role};
use yeyak::error::ErrorCode;
use yeyak::idempotency::IdempotencyKey;

use crate::helpers::*;

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

#[tokio::test]
async fn every_operation_is_refused_to_every_caller_its_declaration_leaves_out() {
    let app = TestApp::spawn().await;
    let mut checked = 0;
    for op in yeyak::operations::ALL.iter().copied() {
        for (i, (role, principal)) in callers().into_iter().enumerate() {
            assert_eq!(principal.role(), role);
            let key = format!("matrix-{}-{i}", op.name);
            let outcome =
                app.state.pipeline.execute(&principal, Some(IdempotencyKey::parse(&key).unwrap()), &Probe(op)).await;
            let stored =
                app.count(&format!("SELECT count(*) FROM idempotency_record WHERE idempotency_key = '{key}'")).await;
            if op.allowed.permits(role) {
                let done = outcome.unwrap_or_else(|e| panic!("{} refused {role:?}: {e:?}", op.name));
                assert_eq!(done.answer.unwrap()["ranFor"], role.as_str());
                assert_eq!(done.response.status, op.status, "{}", op.name);
                assert_eq!(stored, 1, "{} as {role:?} stores its answer", op.name);
            } else {
                let refused = outcome.err().unwrap_or_else(|| panic!("{} ran for {role:?}", op.name));
                assert_eq!(refused.code, ErrorCode::Forbidden, "{} as {role:?}", op.name);
                assert_eq!(refused.details["operation"], op.name);
                assert_eq!(stored, 0, "a refused {} leaves nothing behind", op.name);
            }
            checked += 1;
        }
    }
    assert_eq!(checked, yeyak::operations::ALL.len() * 6);
    assert!(checked >= 35 * 6, "the registry lost operations: {checked}");
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
            assert!(!route.operation.allowed.permits(Role::Integration), "{}", route.path);
        }
    }
}

#[tokio::test]
async fn an_integration_key_gets_403_from_every_admin_operation() {
    let app = TestApp::spawn().await;
    // The registry fills as a worker builds its routes: one request makes sure.
    let _ = app.http.get(app.url("/api/openapi.json")).send().await.unwrap();
    let routes = yeyak::http::openapi::command_routes();
    let admin_only: Vec<_> = routes.iter().filter(|r| !r.operation.allowed.permits(Role::Integration)).collect();
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
