//! Calendars (SPEC §10): bookings as iCalendar text (`ics`), personal
//! calendar tokens (`token`); the feed routes are `web::feeds`.

pub mod address;
pub mod ics;
pub mod token;

/// The host part of event UIDs and mail Message-IDs: stable for an
/// installation (`YEYAK_PUBLIC_URL`'s host, else `yeyak.local`).
pub fn host(public_url: Option<&str>) -> String {
    public_url
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| "yeyak.local".to_owned())
}
