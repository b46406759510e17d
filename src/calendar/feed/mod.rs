//! What a calendar feed shows and when it changed (SPEC §10, §18): the
//! bookings of a room or a person, 30 days back to 365 days ahead of the
//! current day, and the validators (`ETag`, `Last-Modified`) made of the
//! feed's change counters (`calendar_feed_version`, bumped by the
//! transactions that change bookings, rooms and people — see the
//! migration `2026-12-04-000080_feed_versions`). A poll that still holds is
//! decided by the counters alone, in the statement that also checks the
//! feed's token ([`open`]); nothing is rendered.

mod rows;
mod validators;
mod window;

pub use rows::{one, render, rows, validators_of_one, Row};
pub use validators::{counters, open, Counters, Opened, Validators};
pub use window::{Feed, Site, Window};
