//! The OpenAPI 3.1 document of the JSON API, built from the routes as they
//! are registered: every JSON route is added through `Api::route`, which
//! registers the actix route and records its documentation in one call, so
//! the document cannot miss or invent a route. Schemas come from the Rust
//! types (`schemars`).

use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex};

use actix_web::dev::Handler;
use actix_web::http::Method;
use actix_web::{web, FromRequest, HttpResponse, Responder};
use schemars::{JsonSchema, Schema};
use serde_json::{json, Map, Value};

use crate::error::ErrorCode;

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer <key>`.
    ApiKey,
    /// An admin key.
    Admin,
}

/// The documentation of one operation.
#[derive(Debug, Clone)]
pub struct Op {
    summary: &'static str,
    auth: Auth,
    owner: bool,
    idempotency: Option<bool>,
    body: Option<Schema>,
    status: u16,
    response: Schema,
    errors: Vec<ErrorCode>,
    query: Vec<(&'static str, &'static str, bool)>,
}

impl Op {
    pub fn new<R: JsonSchema>(summary: &'static str, status: u16) -> Self {
        Op {
            summary,
            auth: Auth::ApiKey,
            owner: false,
            idempotency: None,
            body: None,
            status,
            response: schemars::schema_for!(R),
            errors: Vec::new(),
            query: Vec::new(),
        }
    }

    pub fn admin(mut self) -> Self {
        self.auth = Auth::Admin;
        self.errors.push(ErrorCode::Forbidden);
        self
    }

    /// Needs `X-Reservation-Owner`.
    pub fn owner(mut self) -> Self {
        self.owner = true;
        self
    }

    /// Takes `Idempotency-Key` (`required` or optional).
    pub fn idempotent(mut self, required: bool) -> Self {
        self.idempotency = Some(required);
        self.errors.extend([ErrorCode::IdempotencyFingerprintConflict, ErrorCode::CommandInProgress]);
        if required {
            self.errors.push(ErrorCode::IdempotencyKeyRequired);
        }
        self
    }

    pub fn body<B: JsonSchema>(mut self) -> Self {
        self.body = Some(schemars::schema_for!(B));
        self.errors.extend([ErrorCode::PayloadTooLarge, ErrorCode::UnsupportedMediaType]);
        self
    }

    pub fn query(mut self, name: &'static str, description: &'static str, required: bool) -> Self {
        self.query.push((name, description, required));
        self
    }

    pub fn errors(mut self, codes: &[ErrorCode]) -> Self {
        self.errors.extend_from_slice(codes);
        self
    }
}

/// Registered operations by (path, method), shared by every worker's app.
static REGISTERED: LazyLock<Mutex<BTreeMap<(String, String), Op>>> = LazyLock::new(Default::default);

/// Registers JSON routes under a prefix, documenting each.
pub struct Api<'a> {
    cfg: &'a mut web::ServiceConfig,
    prefix: &'static str,
}

impl<'a> Api<'a> {
    pub fn new(cfg: &'a mut web::ServiceConfig, prefix: &'static str) -> Self {
        Api { cfg, prefix }
    }

    pub fn route<F, Args>(&mut self, method: Method, path: &str, op: Op, handler: F) -> &mut Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.cfg.route(path, web::method(method.clone()).to(handler));
        let key = (format!("{}{}", self.prefix, path), method.as_str().to_ascii_lowercase());
        REGISTERED.lock().expect("registry lock").insert(key, op);
        self
    }
}

/// Every registered `(path, method)`.
pub fn registered() -> Vec<(String, String)> {
    REGISTERED.lock().expect("registry lock").keys().cloned().collect()
}

fn error_schema() -> Value {
    json!({
        "type": "object",
        "required": ["code", "message", "details", "retryable"],
        "properties": {
            "code": { "type": "string", "description": "UPPER_SNAKE error code" },
            "message": { "type": "string" },
            "details": { "type": "object" },
            "retryable": { "type": "boolean" },
            "currentRevision": { "type": "integer" }
        }
    })
}

/// Moves a schema's `$defs` into `components/schemas` and points refs there.
fn hoist(schema: &Schema, components: &mut Map<String, Value>) -> Value {
    let mut value = schema.as_value().clone();
    if let Some(obj) = value.as_object_mut() {
        if let Some(Value::Object(defs)) = obj.remove("$defs") {
            for (name, def) in defs {
                components.insert(name, def);
            }
        }
        obj.remove("$schema");
    }
    let text = value.to_string().replace("\"#/$defs/", "\"#/components/schemas/");
    serde_json::from_str(&text).unwrap_or(value)
}

fn all_codes() -> Vec<Value> {
    ErrorCode::ALL.iter().map(|c| serde_json::to_value(c).expect("codes serialise")).collect()
}

/// The whole document.
pub fn document() -> Value {
    let mut components = Map::new();
    let mut paths = Map::new();
    for ((path, method), op) in REGISTERED.lock().expect("registry lock").iter() {
        let mut params = Vec::new();
        for segment in path.split('/').filter(|s| s.starts_with('{')) {
            let name = segment.trim_matches(|c| c == '{' || c == '}');
            let schema = if name.ends_with("id") && name != "delivery_id" {
                json!({"type": "integer"})
            } else {
                json!({"type": "string"})
            };
            params.push(json!({ "name": name, "in": "path", "required": true, "schema": schema }));
        }
        if op.owner {
            params.push(json!({ "name": "X-Reservation-Owner", "in": "header", "required": true,
                "description": "the end user acted for (1-200 characters)", "schema": { "type": "string", "minLength": 1 } }));
        }
        if let Some(required) = op.idempotency {
            params.push(json!({ "name": "Idempotency-Key", "in": "header", "required": required,
                "description": "1-255 visible ASCII characters", "schema": { "type": "string", "minLength": 1, "maxLength": 255 } }));
        }
        for (name, description, required) in &op.query {
            params.push(json!({ "name": name, "in": "query", "required": required, "description": description, "schema": { "type": "string" } }));
        }
        let mut responses = Map::new();
        responses.insert(
            op.status.to_string(),
            json!({ "description": "success", "content": { "application/json": { "schema": hoist(&op.response, &mut components) } } }),
        );
        let mut codes: Vec<ErrorCode> = op.errors.clone();
        codes.extend([ErrorCode::Unauthenticated, ErrorCode::DatabaseUnavailable]);
        if !params.is_empty() || op.body.is_some() {
            codes.push(ErrorCode::MalformedRequest);
        }
        let mut by_status: BTreeMap<u16, Vec<Value>> = BTreeMap::new();
        for c in codes {
            by_status.entry(c.status().as_u16()).or_default().push(serde_json::to_value(c).expect("code"));
        }
        for (status, mut names) in by_status {
            names.sort_by_key(|v| v.to_string());
            names.dedup();
            responses.insert(
                status.to_string(),
                json!({ "description": format!("error: {}", names.iter().filter_map(|n| n.as_str()).collect::<Vec<_>>().join(", ")),
                        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } }),
            );
        }
        let mut operation = json!({
            "summary": op.summary,
            "operationId": format!("{method}_{}", path.replace(['/', '{', '}'], "_").trim_matches('_')),
            "parameters": params,
            "responses": responses,
            "security": [{ "apiKey": [] }],
        });
        if op.auth == Auth::Admin {
            operation["description"] = json!("needs an API key with the admin role");
        }
        if let Some(body) = &op.body {
            operation["requestBody"] = json!({ "required": false, "content": { "application/json": { "schema": hoist(body, &mut components) } } });
        }
        paths.entry(path.clone()).or_insert_with(|| json!({}))[method.as_str()] = operation;
    }
    components.insert("Error".into(), error_schema());
    components.insert("ErrorCode".into(), json!({ "type": "string", "enum": all_codes() }));
    json!({
        "openapi": "3.1.0",
        "info": { "title": "yeyak", "version": env!("CARGO_PKG_VERSION"),
                  "description": "Meeting-room bookings and capacity reservations; PostgreSQL decides." },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": { "apiKey": { "type": "http", "scheme": "bearer" } }
        }
    })
}

pub async fn serve() -> HttpResponse {
    HttpResponse::Ok().json(document())
}
