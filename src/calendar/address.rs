//! Calendar user addresses (RFC 5545 CAL-ADDRESS; SPEC §17, §18), the one
//! home of how yeyak names people and rooms in calendars: rooms as
//! `mailto:room-{code}@{domain}`, the code lowercased, so a calendar app can
//! invite a room and yeyak can tell which room an attendee is, whatever
//! case the client writes; people by their mail address, else their
//! principal URL under the installation's public base.

/// A room's calendar address (without `mailto:`).
pub fn room(code: &str, domain: &str) -> String {
    format!("room-{}@{}", code.to_lowercase(), domain.to_lowercase())
}

/// `mailto:{address}`.
pub fn mailto(address: &str) -> String {
    format!("mailto:{address}")
}

/// A room's calendar address with its scheme: `mailto:room-{code}@{domain}`.
pub fn room_uri(code: &str, domain: &str) -> String {
    mailto(&room(code, domain))
}

/// A person's principal URL under `base` (`{base}/dav/principals/{username}/`).
pub fn principal_url(base: &str, username: &str) -> String {
    format!("{}/dav/principals/{username}/", base.trim_end_matches('/'))
}

/// A person's calendar address: their mail address, else their principal
/// URL under `base` — `YEYAK_PUBLIC_URL`, else the address bound, never the
/// origin a request came by, so an event's bytes do not depend on who asked.
pub fn person(email: Option<&str>, username: &str, base: &str) -> String {
    match email {
        Some(email) => mailto(email),
        None => principal_url(base, username),
    }
}

/// The room code an address names, when it is a room address of `domain`
/// (`mailto:` optional, case-insensitive). The code comes back as written;
/// callers match it against room codes case-insensitively.
pub fn room_code<'a>(address: &'a str, domain: &str) -> Option<&'a str> {
    let address = address.trim();
    let address = match address.get(..7) {
        Some(p) if p.eq_ignore_ascii_case("mailto:") => &address[7..],
        _ => address,
    };
    let (local, host) = address.rsplit_once('@')?;
    if !host.eq_ignore_ascii_case(domain) {
        return None;
    }
    let code = local.get(..5).filter(|p| p.eq_ignore_ascii_case("room-")).map(|_| &local[5..])?;
    (!code.is_empty()).then_some(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip_whatever_the_case() {
        assert_eq!(room("A-3F", "Rooms.Example.com"), "room-a-3f@rooms.example.com");
        assert_eq!(room_code("MAILTO:Room-A-3F@ROOMS.example.com", "rooms.example.com"), Some("A-3F"));
        assert_eq!(room_code("room-b@rooms.example.com", "rooms.example.com"), Some("b"));
        assert_eq!(room_code("room-b@other.example.com", "rooms.example.com"), None);
        assert_eq!(room_code("kim@rooms.example.com", "rooms.example.com"), None);
        assert_eq!(room_code("room-@rooms.example.com", "rooms.example.com"), None);
    }
}
