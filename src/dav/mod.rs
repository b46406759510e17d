//! The CalDAV door (SPEC §17): yeyak as a CalDAV server (RFC 4791, sync by
//! RFC 6578, scheduling as RFC 6638 narrows it) whose rooms answer
//! invitations at once. A door beside `web/` and `http/`: it turns a
//! request into a signed-in person (`auth`), a resource (`path`) and, for
//! writes, the same commands the JSON API runs (`write`), through the same
//! pipeline — so linking, `EXCLUDE`, quotas, horizons, approval, history,
//! outbox and mail hold whichever door a booking comes through. Reads come
//! from the bookings as they are (`store`), sync tokens from their history
//! (`sync`); XML goes through `quick-xml` (`xml`) and iCalendar through the
//! `icalendar` crate (`invitation`, `render`).

pub mod answer;
pub mod auth;
pub mod filter;
pub mod freebusy;
pub mod instances;
pub mod invitation;
pub mod objects;
pub mod path;
pub mod props;
pub mod put;
pub mod render;
pub mod report;
pub mod schedule;
pub mod sent;
pub mod store;
pub mod sync;
pub mod time_range;
pub mod write;

use actix_web::http::{header, Method, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::StreamExt;

use self::auth::{Caller, Denied};
use self::path::Resource;
use self::xml::Node;
use crate::db::DbError;
use crate::error::ApiError;
use crate::i18n::Lang;
use crate::state::AppState;

pub mod xml;

/// Largest body a CalDAV request may carry (SPEC §17).
pub const BODY_LIMIT: usize = 256 * 1024;

/// What `OPTIONS` and every answer advertise: RFC 6638's token tells
/// clients the server schedules (so they do not send invitations themselves).
pub const DAV_HEADER: &str = "1, 3, calendar-access, calendar-auto-schedule";

const ALLOW: &str = "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, REPORT, POST, MKCALENDAR";

/// `/.well-known/caldav` (RFC 6764): the door's root.
pub async fn discovery() -> HttpResponse {
    HttpResponse::MovedPermanently().insert_header((header::LOCATION, path::ROOT)).finish()
}

/// How a CalDAV request ends when it does not succeed.
#[derive(Debug)]
pub enum DavError {
    /// A status with no body.
    Status(StatusCode),
    /// A precondition of the RFCs (`<D:error><C:valid-calendar-data/>…`),
    /// with an explanation.
    Precondition { status: StatusCode, ns: &'static str, name: &'static str, message: String },
    /// A refusal of yeyak's rules: the JSON API's status, code and message.
    Refused(ApiError),
}

impl DavError {
    pub fn precondition(status: StatusCode, ns: &'static str, name: &'static str, message: impl Into<String>) -> Self {
        DavError::Precondition { status, ns, name, message: message.into() }
    }

    pub fn need_privileges(message: &str) -> Self {
        DavError::precondition(StatusCode::FORBIDDEN, xml::DAV, "need-privileges", message)
    }

    /// 404 with a `DAV:error` body naming `NOT_FOUND`, like every refusal
    /// of the door (an empty 404 told a person nothing).
    pub fn not_found() -> Self {
        DavError::Refused(ApiError::not_found("resource"))
    }

    pub fn bad_xml() -> Self {
        DavError::Refused(ApiError::malformed("body", "not well-formed XML of the expected request"))
    }
}

impl From<DbError> for DavError {
    fn from(e: DbError) -> Self {
        DavError::Refused(ApiError::from(e))
    }
}

impl From<diesel::result::Error> for DavError {
    fn from(e: diesel::result::Error) -> Self {
        DavError::from(DbError::from(e))
    }
}

impl From<ApiError> for DavError {
    fn from(e: ApiError) -> Self {
        DavError::Refused(e)
    }
}

/// `<D:error>` with yeyak's code and message (SPEC §17), and what the
/// refusal names in its details (a series' first taken date). The message
/// is the JSON API's in `lang` (the request's `Accept-Language`, Korean by
/// default, SPEC §19).
pub fn refusal_body(err: &ApiError, lang: Lang) -> Node {
    let code = serde_json::to_value(err.code).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    let message =
        crate::i18n::api::message(lang, &code, &err.details, &err.message).unwrap_or_else(|| err.message.clone());
    let mut node = Node::dav("error")
        .with(Node::new(xml::YEYAK, "code").with_text(code))
        .with(Node::new(xml::YEYAK, "message").with_text(message));
    if let Some(first) = err.details.get("conflicts").and_then(|c| c.get(0)) {
        let text = |k: &str| first.get(k).map(|v| v.as_str().map_or(v.to_string(), str::to_owned)).unwrap_or_default();
        node = node.with(
            Node::new(xml::YEYAK, "first-conflict")
                .with(Node::new(xml::YEYAK, "starts-at").with_text(text("startsAt")))
                .with(Node::new(xml::YEYAK, "ends-at").with_text(text("endsAt")))
                .with(Node::new(xml::YEYAK, "booking-id").with_text(text("bookingId"))),
        );
    }
    node
}

pub fn xml_response(status: StatusCode, root: &Node) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("application/xml; charset=utf-8")
        .insert_header(("DAV", DAV_HEADER))
        .body(xml::document(root))
}

impl DavError {
    /// The answer, a refusal's message in `lang`.
    pub fn into_response(self, lang: Lang) -> HttpResponse {
        match self {
            DavError::Status(status) => HttpResponse::build(status).insert_header(("DAV", DAV_HEADER)).finish(),
            DavError::Precondition { status, ns, name, message } => xml_response(
                status,
                &Node::dav("error").with(Node::new(ns, name)).with(Node::new(xml::YEYAK, "message").with_text(message)),
            ),
            DavError::Refused(err) => {
                let mut res = xml_response(err.status(), &refusal_body(&err, lang));
                if let Some(secs) = err.retry_after_secs {
                    res.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
                }
                res
            }
        }
    }
}

/// What a handler of the door has at hand.
pub struct Door<'a> {
    pub state: &'a AppState,
    pub req: &'a HttpRequest,
    /// Whose resources the request acts on: the signed-in person, or the
    /// person whose `bookings/` their delegate asked for (SPEC §25).
    pub caller: Caller,
    /// The signed-in delegate acting for `caller`, if any.
    pub delegate: Option<Caller>,
    /// Where links that leave the answer point (`YEYAK_PUBLIC_URL`, else
    /// the origin asked).
    pub origin: String,
    /// The caller's language (`Accept-Language`, Korean by default): of
    /// refusals and of the names calendar apps show.
    pub lang: Lang,
}

impl Door<'_> {
    pub fn principal(&self) -> crate::command::Principal {
        match &self.delegate {
            None => self.caller.principal(&self.state.secret),
            Some(d) => crate::command::Principal::for_person(
                &self.state.secret,
                (d.id, &d.display_name),
                (self.caller.id, &self.caller.username, &self.caller.display_name),
            ),
        }
    }

    /// The person's own resources only; another's are 403.
    pub fn ensure_own(&self, username: &str) -> Result<(), DavError> {
        if username == self.caller.username {
            Ok(())
        } else {
            Err(DavError::need_privileges("only your own calendars"))
        }
    }

    pub fn header(&self, name: header::HeaderName) -> Option<&str> {
        self.req.headers().get(name).and_then(|v| v.to_str().ok())
    }
}

/// The challenge of every 401 and 429 of the door (RFC 7617).
const CHALLENGE: &str = "Basic realm=\"yeyak\"";

fn unauthorized() -> HttpResponse {
    HttpResponse::Unauthorized()
        .insert_header((header::WWW_AUTHENTICATE, CHALLENGE))
        .insert_header(("DAV", DAV_HEADER))
        .finish()
}

fn denied(d: Denied, lang: Lang) -> HttpResponse {
    match d {
        Denied::Missing | Denied::Wrong => unauthorized(),
        Denied::Throttled(secs) => HttpResponse::TooManyRequests()
            .insert_header((header::RETRY_AFTER, secs))
            .insert_header((header::WWW_AUTHENTICATE, CHALLENGE))
            .finish(),
        Denied::Busy => HttpResponse::ServiceUnavailable().insert_header((header::RETRY_AFTER, 1u32)).finish(),
        Denied::Db(e) => DavError::from(e).into_response(lang),
    }
}

/// The body, at most [`BODY_LIMIT`] bytes (else 413, read no further).
async fn read_body(mut payload: web::Payload) -> Result<web::Bytes, DavError> {
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|_| DavError::Status(StatusCode::BAD_REQUEST))?;
        if body.len() + chunk.len() > BODY_LIMIT {
            return Err(DavError::Refused(ApiError::new(
                crate::error::ErrorCode::PayloadTooLarge,
                format!("the body must stay under {BODY_LIMIT} bytes"),
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

fn method(name: &str) -> Method {
    Method::from_bytes(name.as_bytes()).expect("a valid method name")
}

/// Who a request acts as: a delegate asking for the `bookings/` of a
/// person who named them acts as that person (the pipeline checks the
/// delegation again in each command's transaction); anyone else as themselves.
async fn acting_for(
    state: &AppState,
    resource: &Resource,
    caller: Caller,
) -> Result<(Caller, Option<Caller>), DavError> {
    let (Resource::Bookings(owner) | Resource::BookingMember(owner, _)) = resource else { return Ok((caller, None)) };
    if *owner == caller.username {
        return Ok((caller, None));
    }
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let Some(person) = crate::people::delegation::find_enabled(&mut conn, owner).await.map_err(DbError::from)? else {
        return Ok((caller, None));
    };
    let delegated = person.username == *owner
        && crate::people::delegation::is_delegate(&mut conn, person.id, caller.id).await.map_err(DbError::from)?;
    if !delegated {
        return Ok((caller, None));
    }
    let acting =
        Caller { id: person.id, username: person.username, display_name: person.display_name, is_admin: false };
    Ok((acting, Some(caller)))
}

/// Every `/dav/…` request.
pub async fn serve(state: web::Data<AppState>, req: HttpRequest, payload: web::Payload) -> HttpResponse {
    let lang = req
        .headers()
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|h| h.to_str().ok())
        .and_then(Lang::from_accept_language)
        .unwrap_or_default();
    if req.method() == method("MKCALENDAR") || req.method() == method("MKCOL") {
        // Calendars are made by yeyak, at every address (SPEC §23).
        return DavError::need_privileges("calendars are made by yeyak, not by clients").into_response(lang);
    }
    let Some(resource) = Resource::parse(req.path()) else { return DavError::not_found().into_response(lang) };
    if req.method() == Method::OPTIONS {
        return HttpResponse::Ok().insert_header(("DAV", DAV_HEADER)).insert_header((header::ALLOW, ALLOW)).finish();
    }
    let caller = match auth::authenticate(&state, &req).await {
        Ok(caller) => caller,
        Err(d) => return denied(d, lang),
    };
    let body = match read_body(payload).await {
        Ok(body) => body,
        Err(e) => return e.into_response(lang),
    };
    let origin = match &state.public_origin {
        Some(origin) => origin.clone(),
        None => state.transport.request_origin(&req),
    };
    let (caller, delegate) = match acting_for(&state, &resource, caller).await {
        Ok(pair) => pair,
        Err(e) => return e.into_response(lang),
    };
    let door = Door { state: &state, req: &req, caller, delegate, origin, lang };
    let m = req.method().clone();
    let answer = if m == method("PROPFIND") {
        props::propfind(&door, &resource, &body).await
    } else if m == method("REPORT") {
        report::report(&door, &resource, &body).await
    } else if m == Method::GET || m == Method::HEAD {
        write::get(&door, &resource, m == Method::HEAD).await
    } else if m == Method::PUT {
        write::put(&door, &resource, &body).await
    } else if m == Method::DELETE {
        write::delete(&door, &resource).await
    } else if m == Method::POST {
        freebusy::post(&door, &resource, &body).await
    } else if m == method("PROPPATCH") {
        props::proppatch(&door, &resource, &body).await
    } else {
        Ok(HttpResponse::MethodNotAllowed().insert_header((header::ALLOW, ALLOW)).finish())
    };
    let mut res = answer.unwrap_or_else(|e| e.into_response(lang));
    res.headers_mut().insert(header::HeaderName::from_static("dav"), header::HeaderValue::from_static(DAV_HEADER));
    res
}
