//! `REPORT`s (SPEC §17): `calendar-query` (VEVENTs with a `time-range`),
//! `calendar-multiget`, `sync-collection` (RFC 6578: what changed and what
//! left since a token; never truncated), `free-busy-query` on room
//! calendars, and `principal-property-search` (people and rooms by display
//! name or address, case-insensitive substring).

use std::collections::HashMap;

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use super::filter::Filter;
use super::path::{self, Resource};
use super::props::{self, Calendar, Described, Prop, Want};
use super::render::{self, Organizer};
use super::store::{self, Member, Target};
use super::sync::{self, Token};
use super::time_range;
use super::xml::{self, Element, Node, CALDAV, DAV};
use super::{DavError, Door};
use crate::calendar::address;
use crate::db::schema::{booking_series, staff_user};
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
use crate::rooms::booking::{find_many, Booking, FreeInterval, BOOKING_COLUMNS};
use crate::series::Series;

pub async fn report(door: &Door<'_>, resource: &Resource, body: &[u8]) -> Result<HttpResponse, DavError> {
    let root = xml::parse(body).ok_or_else(DavError::bad_xml)?;
    if root.is(DAV, "principal-property-search") {
        return principal_search(door, &root).await;
    }
    let calendar = props::calendar_of(door, resource).await?;
    if !matches!(resource, Resource::Bookings(_) | Resource::RoomCalendar(_)) {
        return Err(unsupported());
    }
    if root.is(CALDAV, "calendar-query") {
        calendar_query(door, &calendar, &root).await
    } else if root.is(CALDAV, "calendar-multiget") {
        multiget(door, &calendar, &root).await
    } else if root.is(DAV, "sync-collection") {
        sync_collection(door, &calendar, &root).await
    } else if root.is(CALDAV, "free-busy-query") {
        match &calendar {
            Calendar::Room { code, .. } => super::freebusy::query(door, code, &root).await,
            Calendar::Bookings { .. } => {
                let (from, to) = super::freebusy::window_of(&root)?;
                let meetings = person_busy(door, &calendar, (from, to)).await?;
                let busy = super::freebusy::Busy { meetings, buffers: Vec::new() };
                Ok(super::freebusy::answer(door, from, to, &busy))
            }
        }
    } else {
        Err(unsupported())
    }
}

fn unsupported() -> DavError {
    DavError::precondition(StatusCode::FORBIDDEN, DAV, "supported-report", "this report is not supported here")
}

/// A `calendar-query` (RFC 4791 §7.8): the database narrows by the event
/// time range ([`Filter::event_window`]); the whole filter is then checked
/// on the members' text, except on bookings when the range is all it asks
/// (the database's answer is exact there). `expand` in the asked
/// `calendar-data` writes repeating events as their instances.
async fn calendar_query(door: &Door<'_>, calendar: &Calendar, root: &Element) -> Result<HttpResponse, DavError> {
    let want = Want::from_parent(root);
    let filter = Filter::read(root)?;
    let expand = root
        .child(DAV, "prop")
        .and_then(|p| p.child(CALDAV, "calendar-data"))
        .and_then(|d| d.child(CALDAV, "expand"))
        .map(|e| Ok::<_, DavError>((time_range::attr(e, "start")?, time_range::attr(e, "end")?)))
        .transpose()?
        .map(|(s, e)| (s.unwrap_or_else(time_range::earliest), e.unwrap_or_else(time_range::latest)));
    let scope = props::scope_of(door, calendar);
    let members = {
        let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
        let now = door.state.clock.now();
        let window = filter.as_ref().and_then(Filter::event_window);
        store::members(&mut conn, &scope, &door.state.calendar_host, now, window, None).await?
    };
    let home = door.state.policy().timezone;
    let read_all = filter.as_ref().is_some_and(|f| !f.is_event_range());
    let needs_text = |m: &Member| read_all || matches!(m.target, Target::Object(_)) && filter.is_some();
    let wants_data = want.wants(CALDAV, "calendar-data");
    let to_read: Vec<Member> = members.iter().filter(|m| wants_data || needs_text(m)).cloned().collect();
    let mut texts = render_all(door, &to_read).await?;
    let members: Vec<Member> = members
        .into_iter()
        .filter(|m| {
            !needs_text(m) || texts.get(&m.target).is_some_and(|t| filter.as_ref().is_none_or(|f| f.matches(t, home)))
        })
        .collect();
    if let Some(range) = expand {
        for text in texts.values_mut() {
            *text = super::instances::expand(text, home, range);
        }
    }
    let described: Vec<Described> = members
        .into_iter()
        .map(|m| Described::Member {
            href: props::member_href(calendar, &m.name),
            data: if wants_data { texts.remove(&m.target) } else { None },
            member: m,
        })
        .collect();
    Ok(props::multistatus(described.iter().map(|d| props::response(door, d, &want)).collect()))
}

/// When a person's calendar is busy within `range` (RFC 4791 §7.10): the
/// events of their members that are neither transparent nor cancelled,
/// each instance clipped to the range, overlaps merged.
async fn person_busy(
    door: &Door<'_>,
    calendar: &Calendar,
    range: super::instances::Range,
) -> Result<Vec<FreeInterval>, DavError> {
    let scope = props::scope_of(door, calendar);
    let members = {
        let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
        store::members(&mut conn, &scope, &door.state.calendar_host, door.state.clock.now(), Some(range), None).await?
    };
    let texts = render_all(door, &members).await?;
    let home = door.state.policy().timezone;
    let mut spans: Vec<super::instances::Range> =
        texts.values().flat_map(|t| super::instances::busy(t, home, range)).collect();
    spans.sort();
    let mut merged: Vec<FreeInterval> = Vec::new();
    for (s, e) in spans {
        match merged.last_mut() {
            Some(last) if s <= last.ends_at => last.ends_at = last.ends_at.max(e),
            _ => merged.push(FreeInterval { starts_at: s, ends_at: e }),
        }
    }
    Ok(merged)
}

/// The most hrefs one `calendar-multiget` may name (SPEC §22).
pub const MAX_HREFS: usize = 1_000;

async fn multiget(door: &Door<'_>, calendar: &Calendar, root: &Element) -> Result<HttpResponse, DavError> {
    let want = Want::from_parent(root);
    let hrefs: Vec<String> = root.children_named(DAV, "href").map(Element::text).collect();
    if hrefs.len() > MAX_HREFS {
        return Err(DavError::Refused(
            ApiError::new(ErrorCode::TooManyHrefs, format!("a multiget names at most {MAX_HREFS} hrefs"))
                .with_details(serde_json::json!({ "max": MAX_HREFS, "named": hrefs.len() })),
        ));
    }
    let mut out = Vec::new();
    let mut asked: Vec<(&str, String)> = Vec::with_capacity(hrefs.len());
    for href in &hrefs {
        match (Resource::parse(&path::href_path(href)), calendar) {
            (Some(Resource::BookingMember(u, name)), Calendar::Bookings { username, .. }) if u == *username => {
                asked.push((href, name))
            }
            (Some(Resource::RoomMember(c, name)), Calendar::Room { code, .. }) if c == *code => {
                asked.push((href, name))
            }
            _ => out.push(gone(href)),
        }
    }
    let names: Vec<&str> = asked.iter().map(|(_, name)| name.as_str()).collect();
    let members = props::find_members(door, calendar, &names).await?;
    let by_name: HashMap<&str, &Member> = members.iter().map(|(n, m)| (n.as_str(), m)).collect();
    let mut found = Vec::with_capacity(members.len());
    for (href, name) in &asked {
        match by_name.get(name.as_str()) {
            Some(member) => found.push((*member).clone()),
            None => out.push(gone(href)),
        }
    }
    let described = describe_members(door, calendar, found, &want).await?;
    let mut responses: Vec<Node> = described.iter().map(|d| props::response(door, d, &want)).collect();
    responses.extend(out);
    Ok(props::multistatus(responses))
}

/// A member that is not (or no longer) there.
fn gone(href: &str) -> Node {
    Node::dav("response").with(Node::href(href)).with(Node::dav("status").with_text("HTTP/1.1 404 Not Found"))
}

async fn sync_collection(door: &Door<'_>, calendar: &Calendar, root: &Element) -> Result<HttpResponse, DavError> {
    let want = Want::from_parent(root);
    let raw = root.child(DAV, "sync-token").map(Element::text).unwrap_or_default();
    let scope = props::scope_of(door, calendar);
    let invalid =
        || DavError::precondition(StatusCode::FORBIDDEN, DAV, "valid-sync-token", "this sync token is not valid here");
    let now = door.state.clock.now();
    let (present, removed, next) = if raw.is_empty() {
        let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
        let token = sync::current(&mut conn, &scope).await?;
        let all = store::members(&mut conn, &scope, &door.state.calendar_host, now, None, None).await?;
        (all, Vec::new(), token)
    } else {
        let token = Token::parse(&raw).ok_or_else(invalid)?;
        let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
        let since = sync::since(&mut conn, &scope, token).await?.ok_or_else(invalid)?;
        let targets = since.targets;
        let present = if targets.is_empty() {
            Vec::new()
        } else {
            store::members(&mut conn, &scope, &door.state.calendar_host, now, None, Some(&targets)).await?
        };
        let mut removed = Vec::new();
        for t in targets.into_iter().filter(|t| !present.iter().any(|m| m.target == *t)) {
            let name = match (&scope, store::mapping_of(&mut conn, t).await?) {
                (store::Scope::Organizer { .. }, Some((_, name))) => name,
                _ => store::default_name(t),
            };
            removed.push(name);
        }
        (present, removed, since.next)
    };
    let described = describe_members(door, calendar, present, &want).await?;
    let mut responses: Vec<Node> = described.iter().map(|d| props::response(door, d, &want)).collect();
    responses.extend(removed.iter().map(|name| gone(&props::member_href(calendar, name))));
    let doc = Node::dav("multistatus").with_all(responses).with(Node::dav("sync-token").with_text(next.uri()));
    Ok(super::xml_response(StatusCode::MULTI_STATUS, &doc))
}

/// Members as described resources, with their calendar data when asked for.
async fn describe_members(
    door: &Door<'_>,
    calendar: &Calendar,
    members: Vec<Member>,
    want: &Want,
) -> Result<Vec<Described>, DavError> {
    let mut data = if want.wants(CALDAV, "calendar-data") { render_all(door, &members).await? } else { HashMap::new() };
    Ok(members
        .into_iter()
        .map(|m| Described::Member {
            href: props::member_href(calendar, &m.name),
            data: data.remove(&m.target),
            member: m,
        })
        .collect())
}

/// The iCalendar text of members, read in a few statements whatever their number.
pub async fn render_all(door: &Door<'_>, members: &[Member]) -> Result<HashMap<Target, String>, DavError> {
    let singles: Vec<i64> =
        members.iter().filter_map(|m| if let Target::Booking(id) = m.target { Some(id) } else { None }).collect();
    let series_ids: Vec<i64> =
        members.iter().filter_map(|m| if let Target::Series(id) = m.target { Some(id) } else { None }).collect();
    let stored_ids: Vec<i64> =
        members.iter().filter_map(|m| if let Target::Object(id) = m.target { Some(id) } else { None }).collect();
    let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
    let stored: Vec<(i64, Option<String>)> = if stored_ids.is_empty() {
        Vec::new()
    } else {
        crate::db::schema::dav_event::table
            .filter(crate::db::schema::dav_event::id.eq_any(&stored_ids))
            .select((crate::db::schema::dav_event::id, crate::db::schema::dav_event::body))
            .load(&mut conn)
            .await?
    };
    let bookings = if singles.is_empty() { Vec::new() } else { find_many(&mut conn, &singles).await? };
    let (series, occurrences): (Vec<Series>, Vec<Booking>) = if series_ids.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        let series = booking_series::table
            .filter(booking_series::id.eq_any(&series_ids))
            .select(Series::as_select())
            .load(&mut conn)
            .await?;
        let occurrences: Vec<Booking> =
            diesel::sql_query(format!("{BOOKING_COLUMNS} WHERE r.series_id = ANY($1) ORDER BY r.starts_at, r.id"))
                .bind::<diesel::sql_types::Array<diesel::sql_types::Int8>, _>(&series_ids)
                .load(&mut conn)
                .await?;
        (series, occurrences)
    };
    let mut staff_ids: Vec<i64> = bookings.iter().chain(&occurrences).filter_map(|b| b.organizer_staff_id).collect();
    staff_ids.sort_unstable();
    staff_ids.dedup();
    let people: Vec<(i64, String, String, Option<String>)> = staff_user::table
        .filter(staff_user::id.eq_any(&staff_ids))
        .select((staff_user::id, staff_user::username, staff_user::display_name, staff_user::email))
        .load(&mut conn)
        .await?;
    drop(conn);
    // Private bookings in another's room calendar (SPEC §26): their label
    // and times only, no organizer.
    let reader = crate::rooms::privacy::Reader::of(&door.principal(), []);
    let label = crate::i18n::I18n::new(door.lang).t("private-booking");
    let hidden: Vec<i64> = bookings
        .iter()
        .chain(&occurrences)
        .filter(|b| !reader.sees(b.private, &b.organizer_digest))
        .map(|b| b.id)
        .collect();
    let bookings = reader.show_all(bookings, &label);
    let occurrences = reader.show_all(occurrences, &label);
    let series: Vec<Series> = series
        .into_iter()
        .map(|mut s| {
            if !reader.sees(s.private, &s.organizer_digest) {
                s.title = label.clone();
            }
            s
        })
        .collect();
    let catalogue = door.state.catalogue.current().await?;
    let organizer = |b: &Booking| -> Option<Organizer> {
        if hidden.contains(&b.id) {
            return None;
        }
        let (_, username, name, email) = people.iter().find(|p| Some(p.0) == b.organizer_staff_id)?;
        let address = address::person(email.as_deref(), username, &door.state.public_base);
        Some(Organizer { name: name.clone(), address })
    };
    let mut out = HashMap::new();
    for m in members {
        let ctx = |organizer| render::Context {
            catalogue: &catalogue,
            room_domain: &door.state.room_mail_domain,
            tz: door.state.policy().timezone,
            uid: &m.uid,
            organizer,
        };
        let text = match m.target {
            Target::Booking(id) => bookings.iter().find(|b| b.id == id).map(|b| render::single(b, &ctx(organizer(b)))),
            Target::Series(id) => series.iter().find(|s| s.id == id).and_then(|s| {
                let occ: Vec<Booking> = occurrences.iter().filter(|o| o.series_id == Some(id)).cloned().collect();
                let org = <[Booking]>::first(&occ).and_then(organizer);
                render::series(s, &occ, &ctx(org))
            }),
            // The person's own object: as stored (SPEC §23).
            Target::Object(id) => stored.iter().find(|(o, _)| *o == id).and_then(|(_, body)| body.clone()),
        };
        if let Some(text) = text {
            out.insert(m.target, text);
        }
    }
    Ok(out)
}

/// `principal-property-search` on the principals.
async fn principal_search(door: &Door<'_>, root: &Element) -> Result<HttpResponse, DavError> {
    // The python `caldav` library writes the properties it wants beside an
    // empty `prop`, not in it: read them there too.
    let beside: Vec<Prop> = root
        .children
        .iter()
        .filter(|c| {
            !c.is(DAV, "prop") && !c.is(DAV, "property-search") && !c.is(DAV, "apply-to-principal-collection-set")
        })
        .map(|c| Prop::new(&c.ns, &c.name))
        .collect();
    let want = match Want::from_parent(root) {
        Want::These(asked) if asked.is_empty() && !beside.is_empty() => Want::These(beside),
        want => want,
    };
    let any = root.attr("test").is_some_and(|t| t.eq_ignore_ascii_case("anyof"));
    let searches: Vec<(Vec<(String, String)>, String)> = root
        .children_named(DAV, "property-search")
        .map(|s| {
            let props = s
                .child(DAV, "prop")
                .map(|p| p.children.iter().map(|c| (c.ns.clone(), c.name.clone())).collect())
                .unwrap_or_default();
            (props, s.child(DAV, "match").map(Element::text).unwrap_or_default().to_lowercase())
        })
        .collect();
    let people: Vec<(String, String, Option<String>)> = {
        let mut conn = door.state.pool.get().await.map_err(DbError::from)?;
        staff_user::table
            .filter(staff_user::disabled_at.is_null())
            .order(staff_user::username)
            .select((staff_user::username, staff_user::display_name, staff_user::email))
            .load(&mut conn)
            .await?
    };
    let catalogue = door.state.catalogue.current().await?;
    let mut candidates: Vec<(Described, String, Vec<String>)> = Vec::new();
    for (username, display_name, email) in people {
        let mut addresses = vec![path::person_href(&username)];
        if let Some(e) = &email {
            addresses.push(address::mailto(e));
        }
        let name = display_name.clone();
        candidates.push((Described::Person { username, display_name, email }, name, addresses));
    }
    for room in catalogue.rooms() {
        let addresses = vec![
            address::room_uri(&room.code, &door.state.room_mail_domain),
            Resource::RoomPrincipal(room.code.clone()).href(),
        ];
        candidates.push((
            Described::RoomPrincipal { code: room.code.clone(), name: room.name.clone() },
            room.name.clone(),
            addresses,
        ));
    }
    let matches = |name: &str, addresses: &[String], (props, text): &(Vec<(String, String)>, String)| {
        props.iter().any(|(ns, p)| match (ns.as_str(), p.as_str()) {
            (DAV, "displayname") => name.to_lowercase().contains(text.as_str()),
            (CALDAV, "calendar-user-address-set") => addresses.iter().any(|a| a.to_lowercase().contains(text.as_str())),
            _ => false,
        })
    };
    let found: Vec<Node> = candidates
        .iter()
        .filter(|(_, name, addresses)| {
            if any {
                searches.iter().any(|s| matches(name, addresses, s))
            } else {
                searches.iter().all(|s| matches(name, addresses, s))
            }
        })
        .map(|(d, _, _)| props::response(door, d, &want))
        .collect();
    Ok(props::multistatus(found))
}
