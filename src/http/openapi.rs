//! The OpenAPI 3.1 document of the JSON API, built from the routes as they
//! are registered: every JSON route is added through `Api::route`, which
//! registers the actix route and records its documentation in one call, so
//! the document cannot miss or invent a route. An operation cannot be
//! registered without its stable `operationId` and its tag, which client
//! generators turn into method and module names. Schemas come from the Rust
//! types (`schemars`); every named type is one component referred to by
//! `$ref`, so a generated client has one `Booking` model for every call.
//! One file, one job: the document and the registration it is built from.

use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex};

use actix_web::dev::Handler;
use actix_web::http::Method;
use actix_web::{web, FromRequest, HttpResponse, Responder};
use schemars::generate::{Contract, SchemaGenerator, SchemaSettings};
use schemars::transform::ReplaceBoolSchemas;
use schemars::{JsonSchema, Schema};
use serde_json::{json, Map, Value};

use crate::command::Operation;
use crate::error::ErrorCode;

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer <key>`.
    ApiKey,
    /// An admin key.
    Admin,
}

/// The capability an operation belongs to: a module of a generated client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tag {
    Rooms,
    Bookings,
    Series,
    Capacity,
    Admin,
}

impl Tag {
    pub fn as_str(self) -> &'static str {
        match self {
            Tag::Rooms => "rooms",
            Tag::Bookings => "bookings",
            Tag::Series => "series",
            Tag::Capacity => "capacity",
            Tag::Admin => "admin",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Tag::Rooms => "the room catalogue: rooms, linked suites, availability, finding a free room",
            Tag::Bookings => "room bookings: create, move, cancel, check in, approve, history",
            Tag::Series => "recurring bookings whose every occurrence is a booking",
            Tag::Capacity => "resources sold in counted units: holds, waitlist, offers",
            Tag::Admin => "operations: consistency, sweeps, outbox, API keys, waitlist eviction, reports",
        }
    }
}

/// Writes the schema of a type into a generator and returns it (a `$ref`
/// for named types).
type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// The documentation of one operation.
#[derive(Debug, Clone)]
pub struct Op {
    tag: Tag,
    operation_id: &'static str,
    summary: &'static str,
    auth: Auth,
    /// `X-Reservation-Owner`: `Some(required)`.
    owner: Option<bool>,
    idempotency: Option<bool>,
    body: Option<SchemaFn>,
    status: u16,
    response: SchemaFn,
    /// Media type of the success response.
    media: &'static str,
    errors: Vec<ErrorCode>,
    query: Vec<(&'static str, &'static str, bool)>,
    /// Query parameters that may repeat (`equipment=a&equipment=b`).
    query_lists: Vec<(&'static str, &'static str)>,
    /// The command the route runs (routes that change state).
    runs: Option<&'static Operation>,
}

impl Op {
    /// `operation_id` is the stable name a generated client gives the call
    /// (`createBooking`); it must be unique in the document.
    pub fn new<R: JsonSchema>(tag: Tag, operation_id: &'static str, summary: &'static str, status: u16) -> Self {
        Op {
            tag,
            operation_id,
            summary,
            auth: Auth::ApiKey,
            owner: None,
            idempotency: None,
            body: None,
            status,
            response: schema_of::<R>,
            media: "application/json",
            errors: Vec::new(),
            query: Vec::new(),
            query_lists: Vec::new(),
            runs: None,
        }
    }

    /// The route runs `operation` through the pipeline: the role matrix
    /// test reads this to call every command's route as every caller.
    pub fn runs(mut self, operation: &'static Operation) -> Self {
        self.runs = Some(operation);
        self
    }

    pub fn admin(mut self) -> Self {
        self.auth = Auth::Admin;
        self.errors.push(ErrorCode::Forbidden);
        self
    }

    /// Needs `X-Reservation-Owner`.
    pub fn owner(mut self) -> Self {
        self.owner = Some(true);
        self
    }

    /// Takes `X-Reservation-Owner` when given (admin routes).
    pub fn owner_optional(mut self) -> Self {
        self.owner = Some(false);
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
        self.body = Some(schema_of::<B>);
        self.errors.extend([ErrorCode::PayloadTooLarge, ErrorCode::UnsupportedMediaType]);
        self
    }

    /// A success answer in another media type than JSON (`text/csv`).
    pub fn media(mut self, media: &'static str) -> Self {
        self.media = media;
        self
    }

    pub fn query(mut self, name: &'static str, description: &'static str, required: bool) -> Self {
        self.query.push((name, description, required));
        self
    }

    pub fn query_list(mut self, name: &'static str, description: &'static str) -> Self {
        self.query_lists.push((name, description));
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
        let mut registered = REGISTERED.lock().expect("registry lock");
        let clash = registered.iter().find(|(k, o)| o.operation_id == op.operation_id && **k != key);
        assert!(clash.is_none(), "operationId {} is registered twice", op.operation_id);
        registered.insert(key, op);
        self
    }
}

/// A registered route that runs a command: its path, method, whether the
/// door asks for an admin key, and the command's declaration.
#[derive(Debug, Clone)]
pub struct CommandRoute {
    pub path: String,
    pub method: String,
    pub admin_door: bool,
    pub operation: &'static Operation,
}

/// Every registered route that runs a command.
pub fn command_routes() -> Vec<CommandRoute> {
    let registered = REGISTERED.lock().expect("registry lock");
    registered
        .iter()
        .filter_map(|((path, method), op)| {
            op.runs.map(|operation| CommandRoute {
                path: path.clone(),
                method: method.clone(),
                admin_door: op.auth == Auth::Admin,
                operation,
            })
        })
        .collect()
}

fn error_schema() -> Value {
    json!({
        "type": "object",
        "description": "every error answer: a code from the closed list, a message for people, details for programs",
        "required": ["code", "message", "details", "retryable"],
        "properties": {
            "code": { "$ref": "#/components/schemas/ErrorCode" },
            "message": { "type": "string" },
            "details": { "type": "object", "additionalProperties": {} },
            "retryable": { "type": "boolean", "description": "whether the same request may succeed later unchanged" },
            "currentRevision": { "type": "integer", "format": "int64" }
        }
    })
}

fn all_codes() -> Vec<Value> {
    ErrorCode::ALL.iter().map(|c| serde_json::to_value(c).expect("codes serialise")).collect()
}

/// One generator per direction: responses as serialised, bodies as read.
fn generator(contract: Contract) -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
            s.contract = contract;
        })
        // `true`/`false` schemas are valid JSON Schema that generators reject.
        .with_transform(ReplaceBoolSchemas::default())
        .into_generator()
}

/// The schema as JSON, with any boolean schema left in it replaced by `{}`
/// and string enums written as one `enum`.
fn plain(schema: Schema) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(map) => map.values_mut().for_each(walk),
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
        if let Value::Object(map) = v {
            for key in ["items", "additionalProperties"] {
                if map.get(key) == Some(&Value::Bool(true)) {
                    map.insert(key.to_owned(), json!({}));
                }
            }
            one_enum(map);
        }
    }
    let mut value = schema.to_value();
    walk(&mut value);
    value
}

/// schemars writes an enum with documented variants as a `oneOf` of one
/// `const` per variant, which generators turn into a union of literals and
/// stray `…Type0` enums; a single `enum`, the variants' docs joined into the
/// description, gives one enum type.
fn one_enum(map: &mut Map<String, Value>) {
    let Some(Value::Array(variants)) = map.get("oneOf") else { return };
    let mut values = Vec::new();
    let mut docs = Vec::new();
    for variant in variants {
        let Some(variant) = variant.as_object() else { return };
        if variant.get("type") != Some(&json!("string"))
            || variant.keys().any(|k| !["type", "const", "enum", "description"].contains(&k.as_str()))
        {
            return;
        }
        let names: Vec<Value> = match (variant.get("const"), variant.get("enum")) {
            (Some(one), None) => vec![one.clone()],
            (None, Some(Value::Array(many))) => many.clone(),
            _ => return,
        };
        if let (Some(doc), [Value::String(name)]) = (variant.get("description").and_then(Value::as_str), &names[..]) {
            docs.push(format!("{name}: {doc}"));
        }
        values.extend(names);
    }
    map.remove("oneOf");
    map.insert("type".into(), json!("string"));
    map.insert("enum".into(), Value::Array(values));
    if !docs.is_empty() {
        let lead = map.get("description").and_then(Value::as_str).map(|d| format!("{d} ")).unwrap_or_default();
        map.insert("description".into(), json!(format!("{lead}{}", docs.join("; "))));
    }
}

fn path_parameter(name: &str) -> Value {
    let schema = if name.ends_with("id") && name != "delivery_id" {
        json!({"type": "integer", "format": "int64"})
    } else {
        json!({"type": "string"})
    };
    json!({ "name": name, "in": "path", "required": true, "schema": schema })
}

/// The whole document.
pub fn document() -> Value {
    let mut responses_gen = generator(Contract::Serialize);
    let mut bodies_gen = generator(Contract::Deserialize);
    let mut paths = Map::new();
    let mut tags_used = std::collections::BTreeSet::new();
    for ((path, method), op) in REGISTERED.lock().expect("registry lock").iter() {
        tags_used.insert(op.tag);
        let mut params: Vec<Value> = path
            .split('/')
            .filter(|s| s.starts_with('{'))
            .map(|s| path_parameter(s.trim_matches(['{', '}'])))
            .collect();
        if let Some(required) = op.owner {
            params.push(json!({ "name": "X-Reservation-Owner", "in": "header", "required": required,
                "description": "the end user acted for (1-200 characters)", "schema": { "type": "string", "minLength": 1, "maxLength": 200 } }));
        }
        if let Some(required) = op.idempotency {
            params.push(json!({ "name": "Idempotency-Key", "in": "header", "required": required,
                "description": "1-255 visible ASCII characters; a retry with the same key has one effect", "schema": { "type": "string", "minLength": 1, "maxLength": 255 } }));
        }
        for (name, description, required) in &op.query {
            params.push(json!({ "name": name, "in": "query", "required": required, "description": description, "schema": { "type": "string" } }));
        }
        for (name, description) in &op.query_lists {
            params.push(json!({ "name": name, "in": "query", "required": false, "description": description,
                "style": "form", "explode": true, "schema": { "type": "array", "items": { "type": "string" } } }));
        }
        let mut responses = Map::new();
        responses.insert(
            op.status.to_string(),
            json!({ "description": "success", "content": { op.media: { "schema": plain((op.response)(&mut responses_gen)) } } }),
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
            "tags": [op.tag.as_str()],
            "summary": op.summary,
            "operationId": op.operation_id,
            "parameters": params,
            "responses": responses,
            "security": [{ "apiKey": [] }],
        });
        if op.auth == Auth::Admin {
            operation["description"] = json!("needs an API key with the admin role");
        }
        if let Some(body) = op.body {
            operation["requestBody"] = json!({ "required": false, "content": { "application/json": { "schema": plain(body(&mut bodies_gen)) } } });
        }
        paths.entry(path.clone()).or_insert_with(|| json!({}))[method.as_str()] = operation;
    }
    let mut components = Map::new();
    for generator in [&mut bodies_gen, &mut responses_gen] {
        for (name, schema) in generator.take_definitions(true) {
            let schema =
                Schema::try_from(schema).map(plain).unwrap_or_else(|e| json!({ "description": e.to_string() }));
            components.insert(name, schema);
        }
    }
    components.insert("Error".into(), error_schema());
    components.insert("ErrorCode".into(), json!({ "type": "string", "enum": all_codes() }));
    let tags: Vec<Value> =
        tags_used.into_iter().map(|t| json!({ "name": t.as_str(), "description": t.description() })).collect();
    json!({
        "openapi": "3.1.0",
        "info": { "title": "yeyak", "version": env!("CARGO_PKG_VERSION"),
                  "description": "Meeting-room bookings and capacity reservations; PostgreSQL decides." },
        "tags": tags,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_string_variants_become_one_enum() {
        let mut schema = json!({
            "description": "state",
            "oneOf": [
                { "type": "string", "const": "CONFIRMED", "description": "holds its time" },
                { "type": "string", "enum": ["CANCELLED"] }
            ]
        });
        one_enum(schema.as_object_mut().unwrap());
        assert_eq!(
            schema,
            json!({ "type": "string", "enum": ["CONFIRMED", "CANCELLED"], "description": "state CONFIRMED: holds its time" })
        );
    }

    #[test]
    fn a_union_with_an_object_stays_a_union() {
        let mut schema = json!({ "oneOf": [{ "type": "string", "const": "A" }, { "type": "object" }] });
        let before = schema.clone();
        one_enum(schema.as_object_mut().unwrap());
        assert_eq!(schema, before);
    }
}
