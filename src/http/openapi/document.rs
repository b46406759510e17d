//! The document itself, made from the registrations: paths with their
//! parameters, bodies and answers, one component per named type, the error
//! body with every code, and `GET /api/openapi.json`.

use std::collections::BTreeMap;

use actix_web::HttpResponse;
use schemars::generate::{Contract, SchemaGenerator, SchemaSettings};
use schemars::transform::ReplaceBoolSchemas;
use schemars::Schema;
use serde_json::{json, Map, Value};

use super::{Auth, REGISTERED};
use crate::error::ErrorCode;

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
        if !op.raw_body.is_empty() {
            let content: Map<String, Value> = op
                .raw_body
                .iter()
                .map(|m| ((*m).to_owned(), json!({ "schema": { "type": "string", "format": "binary" } })))
                .collect();
            operation["requestBody"] = json!({ "required": true, "content": content });
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
