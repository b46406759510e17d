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
use actix_web::{web, FromRequest, Responder};
use schemars::generate::SchemaGenerator;
use schemars::{JsonSchema, Schema};

use crate::command::Operation;
use crate::error::ErrorCode;

mod document;

pub use document::{document, serve};

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
    /// A body that is not JSON but raw bytes of one of these media types
    /// (a floor plan's image, SPEC §28).
    raw_body: &'static [&'static str],
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
            raw_body: &[],
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

    /// The body is raw bytes of one of `media` (required).
    pub fn raw_body(mut self, media: &'static [&'static str]) -> Self {
        self.raw_body = media;
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
