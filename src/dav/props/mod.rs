//! `PROPFIND` (Depth 0 and 1) and the properties of every resource of the
//! door (SPEC §17): principals of people and rooms, the calendar home, the
//! person's `bookings/` (read-write), each room's calendar (read-only), the
//! schedule inbox and outbox, and their members. A property a resource does
//! not have is answered `404` in its own `propstat`, as RFC 4918 says.
//! `PROPPATCH` of a name or colour is accepted and changes nothing.

mod caldav;
mod webdav;

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use super::path::{self, Resource};
use super::store::{self, Member, Scope, Target};
use super::sync::{self, Token};
use super::xml::{self, Element, Node, CALDAV, CS, DAV};
use super::{DavError, Door};
use crate::db::schema::staff_user;
use crate::db::DbError;

/// A property a request names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prop {
    pub ns: String,
    pub name: String,
}

impl Prop {
    pub fn new(ns: &str, name: &str) -> Prop {
        Prop { ns: ns.to_owned(), name: name.to_owned() }
    }

    fn is(&self, ns: &str, name: &str) -> bool {
        self.ns == ns && self.name == name
    }
}

/// Which properties a `PROPFIND` (or a `REPORT`) asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Want {
    All,
    Names,
    These(Vec<Prop>),
}

impl Want {
    /// From an element holding `prop`, `allprop` or `propname`.
    pub fn from_parent(parent: &Element) -> Want {
        if let Some(prop) = parent.child(DAV, "prop") {
            return Want::These(prop.children.iter().map(|c| Prop::new(&c.ns, &c.name)).collect());
        }
        if parent.child(DAV, "propname").is_some() {
            return Want::Names;
        }
        Want::All
    }

    pub fn wants(&self, ns: &str, name: &str) -> bool {
        match self {
            Want::These(props) => props.iter().any(|p| p.is(ns, name)),
            _ => false,
        }
    }
}

/// What `allprop` answers (never calendar data).
fn all_props() -> Vec<Prop> {
    [
        (DAV, "resourcetype"),
        (DAV, "displayname"),
        (DAV, "getetag"),
        (DAV, "getcontenttype"),
        (DAV, "current-user-principal"),
        (DAV, "sync-token"),
        (CS, "getctag"),
    ]
    .into_iter()
    .map(|(ns, n)| Prop::new(ns, n))
    .collect()
}

/// Which calendar a collection is.
#[derive(Debug, Clone)]
pub enum Calendar {
    Bookings { username: String, display_name: String },
    Room { code: String, name: String },
}

/// A resource with what its properties need.
#[derive(Debug, Clone)]
pub enum Described {
    Root,
    Principals,
    RoomsHome,
    Person { username: String, display_name: String, email: Option<String> },
    RoomPrincipal { code: String, name: String },
    Home { username: String },
    Calendar { calendar: Calendar, token: Token },
    Inbox { username: String },
    Outbox { username: String },
    Member { href: String, member: Member, data: Option<String> },
}

impl Described {
    pub fn href(&self) -> String {
        match self {
            Described::Root => Resource::Root.href(),
            Described::Principals => Resource::Principals.href(),
            Described::RoomsHome => Resource::RoomsHome.href(),
            Described::Person { username, .. } => path::person_href(username),
            Described::RoomPrincipal { code, .. } => Resource::RoomPrincipal(code.clone()).href(),
            Described::Home { username } => Resource::Home(username.clone()).href(),
            Described::Calendar { calendar: Calendar::Bookings { username, .. }, .. } => path::bookings_href(username),
            Described::Calendar { calendar: Calendar::Room { code, .. }, .. } => path::room_calendar_href(code),
            Described::Inbox { username } => Resource::Inbox(username.clone()).href(),
            Described::Outbox { username } => Resource::Outbox(username.clone()).href(),
            Described::Member { href, .. } => href.clone(),
        }
    }
}

/// A person by username (enabled), with their email.
pub async fn person(door: &Door<'_>, username: &str) -> Result<Option<(i64, String, Option<String>)>, DavError> {
    let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
    Ok(staff_user::table
        .filter(staff_user::username.eq(username))
        .filter(staff_user::disabled_at.is_null())
        .select((staff_user::id, staff_user::display_name, staff_user::email))
        .first(&mut conn)
        .await
        .optional()?)
}

/// The scope of a calendar.
pub fn scope_of(door: &Door<'_>, calendar: &Calendar) -> Scope {
    match calendar {
        Calendar::Bookings { .. } => {
            Scope::Organizer { staff_id: door.caller.id, digest: door.principal().digest().as_str().to_owned() }
        }
        Calendar::Room { code, .. } => Scope::Room(code.clone()),
    }
}

/// The calendar a collection resource is, checked: a person's own
/// `bookings/`, or an active room's calendar.
pub async fn calendar_of(door: &Door<'_>, resource: &Resource) -> Result<Calendar, DavError> {
    match resource {
        Resource::Bookings(u) | Resource::BookingMember(u, _) => {
            door.ensure_own(u)?;
            Ok(Calendar::Bookings { username: u.clone(), display_name: door.caller.display_name.clone() })
        }
        Resource::RoomCalendar(c) | Resource::RoomMember(c, _) => {
            let catalogue = door.state.catalogue.current().await?;
            let room = catalogue.rooms().iter().find(|r| r.code == *c).ok_or_else(DavError::not_found)?;
            Ok(Calendar::Room { code: room.code.clone(), name: room.name.clone() })
        }
        _ => Err(DavError::not_found()),
    }
}

async fn describe_calendar(door: &Door<'_>, calendar: Calendar) -> Result<Described, DavError> {
    let scope = scope_of(door, &calendar);
    let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
    let token = sync::current(&mut conn, &scope).await?;
    Ok(Described::Calendar { calendar, token })
}

/// The resource itself, checked to exist and to be the caller's to read.
async fn describe(door: &Door<'_>, resource: &Resource) -> Result<Described, DavError> {
    Ok(match resource {
        Resource::Root => Described::Root,
        Resource::Principals => Described::Principals,
        Resource::RoomsHome => Described::RoomsHome,
        Resource::Person(u) => {
            let (_, display_name, email) = person(door, u).await?.ok_or_else(DavError::not_found)?;
            Described::Person { username: u.clone(), display_name, email }
        }
        Resource::RoomPrincipal(c) => {
            let catalogue = door.state.catalogue.current().await?;
            let room = catalogue.rooms().iter().find(|r| r.code == *c).ok_or_else(DavError::not_found)?;
            Described::RoomPrincipal { code: room.code.clone(), name: room.name.clone() }
        }
        Resource::Home(u) => {
            door.ensure_own(u)?;
            Described::Home { username: u.clone() }
        }
        Resource::Inbox(u) => {
            door.ensure_own(u)?;
            Described::Inbox { username: u.clone() }
        }
        Resource::Outbox(u) => {
            door.ensure_own(u)?;
            Described::Outbox { username: u.clone() }
        }
        Resource::Bookings(_) | Resource::RoomCalendar(_) => {
            let calendar = calendar_of(door, resource).await?;
            describe_calendar(door, calendar).await?
        }
        Resource::BookingMember(_, name) | Resource::RoomMember(_, name) => {
            let calendar = calendar_of(door, resource).await?;
            let member = find_member(door, &calendar, name).await?.ok_or_else(DavError::not_found)?;
            Described::Member { href: resource.href(), member, data: None }
        }
    })
}

/// A member of a calendar by its name, if present.
pub async fn find_member(door: &Door<'_>, calendar: &Calendar, name: &str) -> Result<Option<Member>, DavError> {
    Ok(find_members(door, calendar, &[name]).await?.into_iter().next().map(|(_, m)| m))
}

/// The members `names` name, each with the name asked, in two statements
/// whatever their number. A person's member answers only to its own name.
pub async fn find_members(
    door: &Door<'_>,
    calendar: &Calendar,
    names: &[&str],
) -> Result<Vec<(String, Member)>, DavError> {
    let scope = scope_of(door, calendar);
    let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
    let staff = matches!(calendar, Calendar::Bookings { .. }).then_some(door.caller.id);
    let targets = store::resolve_names(&mut conn, staff, names).await?;
    if targets.is_empty() {
        return Ok(Vec::new());
    }
    let only: Vec<Target> = targets.iter().map(|(_, t)| *t).collect();
    let now = door.state.clock.now();
    let found = store::members(&mut conn, &scope, &door.state.calendar_host, now, None, Some(&only)).await?;
    let by_target: std::collections::HashMap<Target, &Member> = found.iter().map(|m| (m.target, m)).collect();
    Ok(targets
        .into_iter()
        .filter_map(|(name, target)| {
            let member = by_target.get(&target).filter(|m| m.name == name || staff.is_none())?;
            Some((name, (*member).clone()))
        })
        .collect())
}

/// The members of a calendar as described resources.
pub fn member_href(calendar: &Calendar, name: &str) -> String {
    match calendar {
        Calendar::Bookings { username, .. } => Resource::BookingMember(username.clone(), name.to_owned()).href(),
        Calendar::Room { code, .. } => Resource::RoomMember(code.clone(), name.to_owned()).href(),
    }
}

async fn children(door: &Door<'_>, d: &Described) -> Result<Vec<Described>, DavError> {
    Ok(match d {
        Described::Home { username } => {
            let bookings =
                Calendar::Bookings { username: username.clone(), display_name: door.caller.display_name.clone() };
            vec![
                describe_calendar(door, bookings).await?,
                Described::Inbox { username: username.clone() },
                Described::Outbox { username: username.clone() },
            ]
        }
        Described::RoomsHome => {
            let catalogue = door.state.catalogue.current().await?;
            let mut out = Vec::new();
            for room in catalogue.rooms() {
                let calendar = Calendar::Room { code: room.code.clone(), name: room.name.clone() };
                out.push(describe_calendar(door, calendar).await?);
            }
            out
        }
        Described::Calendar { calendar, .. } => {
            let scope = scope_of(door, calendar);
            let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
            let now = door.state.clock.now();
            store::members(&mut conn, &scope, &door.state.calendar_host, now, None, None)
                .await?
                .into_iter()
                .map(|m| Described::Member { href: member_href(calendar, &m.name), member: m, data: None })
                .collect()
        }
        _ => Vec::new(),
    })
}

/// The value of property `p` of `d`, if it has one.
fn value(door: &Door<'_>, d: &Described, p: &Prop) -> Option<Node> {
    match p.ns.as_str() {
        CALDAV => caldav::value(door, d, &p.name),
        _ => webdav::value(door, d, p),
    }
}

/// One `<D:response>` of a described resource.
pub fn response(door: &Door<'_>, d: &Described, want: &Want) -> Node {
    let asked = match want {
        Want::These(props) => props.clone(),
        _ => all_props(),
    };
    let named = matches!(want, Want::These(_));
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for p in &asked {
        match value(door, d, p) {
            Some(v) if *want == Want::Names => found.push(Node::new(&v.ns, &v.name)),
            Some(v) => found.push(v),
            None if named => missing.push(Node::new(&p.ns, &p.name)),
            None => {}
        }
    }
    let mut r = Node::dav("response").with(Node::href(d.href()));
    if !found.is_empty() {
        r = r.with(propstat(found, "HTTP/1.1 200 OK"));
    }
    if !missing.is_empty() {
        r = r.with(propstat(missing, "HTTP/1.1 404 Not Found"));
    }
    r
}

fn propstat(props: Vec<Node>, status: &str) -> Node {
    Node::dav("propstat").with(Node::dav("prop").with_all(props)).with(Node::dav("status").with_text(status))
}

pub fn multistatus(responses: Vec<Node>) -> HttpResponse {
    super::xml_response(StatusCode::MULTI_STATUS, &Node::dav("multistatus").with_all(responses))
}

/// What `PROPFIND` asks for; an empty body is `allprop` (RFC 4918 §9.1).
fn read_want(body: &[u8]) -> Result<Want, DavError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Want::All);
    }
    let root = xml::parse(body).ok_or_else(DavError::bad_xml)?;
    if !root.is(DAV, "propfind") {
        return Err(DavError::bad_xml());
    }
    Ok(Want::from_parent(&root))
}

pub async fn propfind(door: &Door<'_>, resource: &Resource, body: &[u8]) -> Result<HttpResponse, DavError> {
    let want = read_want(body)?;
    let depth = door.header(actix_web::http::header::HeaderName::from_static("depth")).unwrap_or("1").trim().to_owned();
    let d = describe(door, resource).await?;
    let mut out = vec![response(door, &d, &want)];
    if depth != "0" {
        for child in children(door, &d).await? {
            out.push(response(door, &child, &want));
        }
    }
    Ok(multistatus(out))
}

/// `PROPPATCH`: names and colours are the server's; accepted and ignored
/// (clients set them when subscribing), answered per property.
pub async fn proppatch(door: &Door<'_>, resource: &Resource, body: &[u8]) -> Result<HttpResponse, DavError> {
    let root = xml::parse(body).ok_or_else(DavError::bad_xml)?;
    if !root.is(DAV, "propertyupdate") {
        return Err(DavError::bad_xml());
    }
    let d = describe(door, resource).await?;
    let props: Vec<Node> = root
        .children
        .iter()
        .filter(|c| c.is(DAV, "set") || c.is(DAV, "remove"))
        .filter_map(|c| c.child(DAV, "prop"))
        .flat_map(|p| p.children.iter().map(|c| Node::new(&c.ns, &c.name)))
        .collect();
    let r = Node::dav("response").with(Node::href(d.href())).with(propstat(props, "HTTP/1.1 200 OK"));
    Ok(multistatus(vec![r]))
}
