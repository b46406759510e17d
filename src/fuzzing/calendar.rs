//! The calendar door's parsers: XML bodies, iCalendar text, invitations and
//! free/busy questions, recurrence rules, and `/dav/` paths.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration};
use chrono_tz::Tz;

use crate::calendar::ics::read;
use crate::dav::path::{href_path, Resource};
use crate::dav::xml::{self, Element, Node};
use crate::dav::{invitation, props, time_range};
use crate::rooms::domain::{RequestedRooms, TimeRange};
use crate::series::domain::Recurrence;

use super::inputs::{booking_range, occurrences, text, HOME, ROOM_DOMAIN};

// ---------------------------------------------------------------- CalDAV

/// `dav::xml::parse`, what `PROPFIND`, `PROPPATCH` and `REPORT` read their
/// body with: the tree is at most `MAX_DEPTH` deep, the readers of a tree
/// take it, and the tree written as an answer reads back the same.
pub fn xml(data: &[u8]) {
    let Some(root) = xml::parse(data) else { return };
    assert!(depth_of(&root) <= xml::MAX_DEPTH, "a tree deeper than {}", xml::MAX_DEPTH);
    let _ = props::Want::from_parent(&root);
    let mut stack = vec![&root];
    while let Some(el) = stack.pop() {
        for name in ["start", "end"] {
            let _ = time_range::attr(el, name);
        }
        stack.extend(&el.children);
    }
    if has_unwritable_namespace(&root) {
        return;
    }
    let written = xml::document(&node_of(&root));
    let back = xml::parse(written.as_bytes()).unwrap_or_else(|| panic!("a written document reads back: {written}"));
    assert!(same_tree(&root, &back), "written and read back differ: {written}");
}

fn depth_of(root: &Element) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(root, 1)];
    while let Some((el, d)) = stack.pop() {
        deepest = deepest.max(d);
        stack.extend(el.children.iter().map(|c| (c, d + 1)));
    }
    deepest
}

/// Namespaces an answer cannot carry unchanged: `xml` and `xmlns` may be
/// bound to no other prefix, and quick-xml reads a namespace name without
/// unescaping it (`urn:a&gt;` stays so), while the writer escapes `&<>"'`.
fn has_unwritable_namespace(el: &Element) -> bool {
    const RESERVED: [&str; 2] = ["http://www.w3.org/XML/1998/namespace", "http://www.w3.org/2000/xmlns/"];
    RESERVED.contains(&el.ns.as_str())
        || el.ns.contains(['&', '<', '>', '"', '\''])
        || el.children.iter().any(has_unwritable_namespace)
}

/// An element as an answer writes it (attributes aside: answers write their own).
fn node_of(el: &Element) -> Node {
    Node {
        ns: el.ns.clone(),
        name: el.name.clone(),
        attrs: Vec::new(),
        children: el.children.iter().map(node_of).collect(),
        text: (!el.text.is_empty()).then(|| el.text.clone()),
    }
}

/// Same names and namespaces, and the same text but for the XML whitespace
/// the reader trims.
fn same_tree(a: &Element, b: &Element) -> bool {
    let squeezed = |t: &str| t.chars().filter(|c| !matches!(c, ' ' | '\t' | '\r' | '\n')).collect::<String>();
    a.ns == b.ns
        && a.name == b.name
        && squeezed(&a.text) == squeezed(&b.text)
        && a.children.len() == b.children.len()
        && a.children.iter().zip(&b.children).all(|(x, y)| same_tree(x, y))
}

/// `calendar::ics::read`: the one reader of outside iCalendar; what it
/// reads nests no deeper than its bound.
pub fn ics(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let unfolded = read::unfold(text);
    let Ok(roots) = read::components(&unfolded) else { return };
    let mut stack: Vec<_> = roots.iter().map(|c| (c, 1)).collect();
    while let Some((c, d)) = stack.pop() {
        assert!(d <= read::MAX_DEPTH, "components nested {d} deep");
        stack.extend(c.components.iter().map(|c| (c, d + 1)));
    }
}

/// `dav::invitation::read` (a `PUT` body: `VTIMEZONE`, `DTSTART`/`DTEND`,
/// `DURATION`, `RRULE`, `EXDATE`, `RECURRENCE-ID`), then what `dav::write::put`
/// makes of the invitation before the pipeline: title, rooms, the range, the
/// series and its occurrences, each override's range.
pub fn invitation(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(inv) = invitation::read(text, HOME, ROOM_DOMAIN) else { return };
    assert!(!inv.uid.is_empty() && inv.uid.len() <= 255, "UID {:?}", inv.uid);
    let distinct: BTreeSet<String> = inv.rooms.iter().map(|r| r.to_ascii_lowercase()).collect();
    assert_eq!(distinct.len(), inv.rooms.len(), "rooms named twice: {:?}", inv.rooms);
    let _ = crate::dav::write::title_of(crate::i18n::Lang::Ko, &inv);
    if !inv.rooms.is_empty() {
        let _ = RequestedRooms::parse(&inv.rooms);
    }
    for o in &inv.overrides {
        if let Ok(range) = TimeRange::new(o.starts_at, o.ends_at) {
            booking_range(&range);
        }
    }
    let Ok(range) = TimeRange::new(inv.starts_at, inv.ends_at) else { return };
    booking_range(&range);
    if let Some(rule) = &inv.rrule {
        if let Ok(recurrence) = Recurrence::parse(rule, HOME) {
            occurrences(&range, &recurrence, HOME);
        }
    }
}

/// `dav::invitation::read_freebusy` (a schedule outbox `POST`).
pub fn freebusy(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(request) = crate::dav::freebusy::read_freebusy(text, HOME) else { return };
    assert!(request.ends_at > request.starts_at, "a free-busy window ends after it starts");
}

/// A recurrence as a client writes it (the JSON API's `recurrence`, a
/// CalDAV `RRULE`): `series::domain::Recurrence::parse`, then its
/// occurrences from a first booking. Lines: the rule; the first start
/// (RFC 3339, default 2030-01-07 10:00 in Seoul); its length in minutes
/// (default 60); the zone (default Asia/Seoul).
pub fn rrule(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let mut lines = text.split('\n');
    let rule = lines.next().unwrap_or_default();
    let start = lines
        .next()
        .and_then(|s| DateTime::parse_from_rfc3339(s.trim()).ok())
        .map_or_else(|| DateTime::from_timestamp(1_894_006_800, 0).expect("2030-01-07"), |t| t.to_utc());
    let minutes = lines.next().and_then(|m| m.trim().parse::<i64>().ok()).unwrap_or(60);
    let tz = lines.next().and_then(|z| z.trim().parse::<Tz>().ok()).unwrap_or(HOME);
    let Some(end) = Duration::try_minutes(minutes).and_then(|d| start.checked_add_signed(d)) else { return };
    let Ok(first) = TimeRange::new(start, end) else { return };
    let Ok(recurrence) = Recurrence::parse(rule, tz) else { return };
    // What is stored is read again (a series' PUT compares rules).
    let again = Recurrence::parse(recurrence.as_str(), tz).ok();
    assert_eq!(again.as_ref(), Some(&recurrence), "a stored rule reads back the same");
    occurrences(&first, &recurrence, tz);
}

/// `dav::path::Resource::parse` of a request path and of a multiget
/// `href` (`href_path` first); a resource's own address reads back as it.
pub fn dav_path(data: &[u8]) {
    let Some(text) = text(data) else { return };
    for path in [text.to_owned(), href_path(text)] {
        if let Some(resource) = Resource::parse(&path) {
            let href = resource.href();
            assert_eq!(Resource::parse(&href), Some(resource), "{href} reads back as {path:?} did");
        }
    }
}
