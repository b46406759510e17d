//! Calendars (SPEC §10, §18): bookings as iCalendar text (`ics`), what a
//! feed shows and its validators (`feed`), personal calendar tokens
//! (`token`), rooms' calendar addresses (`address`); the feed routes are
//! `web::feeds`.

pub mod address;
pub mod feed;
pub mod ics;
pub mod message;
pub mod object;
pub mod token;

/// The host part of event UIDs and mail Message-IDs: stable for an
/// installation (`YEYAK_PUBLIC_URL`'s host, else `yeyak.local`).
pub fn host(public_url: Option<&str>) -> String {
    public_url
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| "yeyak.local".to_owned())
}
