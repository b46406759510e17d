//! Meeting-room bookings (seed 002, SPEC §2, §7.2): values in `domain`, the
//! booking as read in `booking`, who may act in `access`, the rules decided
//! in a booking's transaction in `rules`, the writes (one file per command)
//! in `store`, and what every change leaves behind in `events`.

pub mod access;
pub mod booking;
pub mod desks;
pub mod domain;
pub mod events;
pub mod privacy;
pub mod rules;
pub mod store;

pub use booking::Booking;
