//! The resources of the CalDAV door as a type: a request path either names
//! one of these or is not found. No I/O.
//!
//! ```text
//! /dav/                                   the root (discovery lands here)
//! /dav/principals/                        principal-property-search
//! /dav/principals/{username}/             a person
//! /dav/principals/rooms/{code}/           a room (type ROOM)
//! /dav/calendars/{username}/              a person's calendar home
//! /dav/calendars/{username}/bookings/     the bookings they organize (read-write)
//! /dav/calendars/{username}/bookings/{m}  one event (a booking or a series)
//! /dav/calendars/{username}/inbox/        schedule inbox (always empty)
//! /dav/calendars/{username}/outbox/       schedule outbox (free/busy POST)
//! /dav/calendars/rooms/                   every room's calendar
//! /dav/calendars/rooms/{code}/            a room's bookings (read-only)
//! /dav/calendars/rooms/{code}/{m}         one event of it
//! ```
//!
//! `rooms` is therefore a path word, not a username: a person called
//! `rooms` has no CalDAV home (usernames are `[A-Za-z0-9._-]`).

/// Where the door starts.
pub const ROOT: &str = "/dav/";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resource {
    Root,
    Principals,
    Person(String),
    RoomPrincipal(String),
    Home(String),
    Bookings(String),
    BookingMember(String, String),
    Inbox(String),
    Outbox(String),
    RoomsHome,
    RoomCalendar(String),
    RoomMember(String, String),
}

/// A path segment as people and clients write it: no separators, no dot
/// names, at most 255 bytes, percent-decoded.
fn segment(raw: &str) -> Option<String> {
    let decoded = percent_decode(raw)?;
    let ok = !decoded.is_empty()
        && decoded.len() <= 255
        && decoded != "."
        && decoded != ".."
        && !decoded.contains(['/', '\\'])
        && !decoded.chars().any(char::is_control);
    ok.then_some(decoded)
}

fn percent_decode(raw: &str) -> Option<String> {
    percent_encoding::percent_decode_str(raw).decode_utf8().ok().map(|s| s.into_owned())
}

/// What a path segment keeps unencoded (RFC 3986 unreserved, and `@`).
const SEGMENT: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~').remove(b'@');

/// A member's name as it appears in a path: percent-encoded where needed.
pub fn encode(name: &str) -> String {
    percent_encoding::utf8_percent_encode(name, SEGMENT).to_string()
}

impl Resource {
    /// The resource a request path names (`None`: 404). Collections may be
    /// asked for with or without their trailing slash.
    pub fn parse(path: &str) -> Option<Resource> {
        let rest = path.strip_prefix("/dav")?;
        let rest = rest.strip_prefix('/').unwrap_or(rest);
        let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
        let seg = |i: usize| parts.get(i).and_then(|p| segment(p));
        use Resource::*;
        Some(match parts.as_slice() {
            [] => Root,
            ["principals"] => Principals,
            ["principals", "rooms", _] => RoomPrincipal(seg(2)?),
            ["principals", _] => Person(seg(1)?),
            ["calendars", "rooms"] => RoomsHome,
            ["calendars", "rooms", _] => RoomCalendar(seg(2)?),
            ["calendars", "rooms", _, _] => RoomMember(seg(2)?, seg(3)?),
            ["calendars", _] => Home(seg(1)?),
            ["calendars", _, "bookings"] => Bookings(seg(1)?),
            ["calendars", _, "bookings", _] => BookingMember(seg(1)?, seg(3)?),
            ["calendars", _, "inbox"] => Inbox(seg(1)?),
            ["calendars", _, "outbox"] => Outbox(seg(1)?),
            _ => return None,
        })
    }

    /// Its canonical address (collections end in `/`).
    pub fn href(&self) -> String {
        use Resource::*;
        match self {
            Root => ROOT.to_owned(),
            Principals => "/dav/principals/".to_owned(),
            Person(u) => person_href(u),
            RoomPrincipal(c) => format!("/dav/principals/rooms/{}/", encode(c)),
            Home(u) => format!("/dav/calendars/{}/", encode(u)),
            Bookings(u) => bookings_href(u),
            BookingMember(u, m) => format!("{}{}", bookings_href(u), encode(m)),
            Inbox(u) => format!("/dav/calendars/{}/inbox/", encode(u)),
            Outbox(u) => format!("/dav/calendars/{}/outbox/", encode(u)),
            RoomsHome => "/dav/calendars/rooms/".to_owned(),
            RoomCalendar(c) => room_calendar_href(c),
            RoomMember(c, m) => format!("{}{}", room_calendar_href(c), encode(m)),
        }
    }

    pub fn is_collection(&self) -> bool {
        !matches!(self, Resource::BookingMember(..) | Resource::RoomMember(..))
    }
}

pub fn person_href(username: &str) -> String {
    format!("/dav/principals/{}/", encode(username))
}

pub fn bookings_href(username: &str) -> String {
    format!("/dav/calendars/{}/bookings/", encode(username))
}

pub fn room_calendar_href(code: &str) -> String {
    format!("/dav/calendars/rooms/{}/", encode(code))
}

/// The path of an `href` a client sent (absolute URL or path).
pub fn href_path(href: &str) -> String {
    let href = href.trim();
    match url::Url::parse(href) {
        Ok(u) => u.path().to_owned(),
        Err(_) => href.split(['?', '#']).next().unwrap_or_default().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Resource::*;

    #[test]
    fn paths_round_trip() {
        for r in [
            Root,
            Principals,
            Person("kim".into()),
            RoomPrincipal("A".into()),
            Home("kim".into()),
            Bookings("kim".into()),
            BookingMember("kim".into(), "a b@c.ics".into()),
            Inbox("kim".into()),
            Outbox("kim".into()),
            RoomsHome,
            RoomCalendar("A-3F".into()),
            RoomMember("A".into(), "booking-1.ics".into()),
        ] {
            assert_eq!(Resource::parse(&r.href()), Some(r.clone()), "{}", r.href());
        }
        assert_eq!(Resource::parse("/dav"), Some(Root));
        assert_eq!(Resource::parse("/dav/calendars/kim/bookings"), Some(Bookings("kim".into())));
        assert_eq!(Resource::parse("/dav/calendars/kim/other/"), None);
        assert_eq!(Resource::parse("/dav/calendars/kim/bookings/%2E%2E"), None);
        assert_eq!(Resource::parse("/dav/calendars/kim/bookings/a%2Fb"), None);
        assert_eq!(Resource::parse("/api/x"), None);
        assert_eq!(href_path("https://h.example/dav/x/?q=1"), "/dav/x/");
        assert_eq!(href_path("/dav/x/y.ics"), "/dav/x/y.ics");
    }
}
