//! Utilisation reports (SPEC §12): per active room over a range of local
//! dates, the booked hours, the share of the working day they fill,
//! bookings, cancellations and releases; the bookings of the range as a
//! list. PostgreSQL computes each report in one statement (`store`); this
//! module only lays the numbers out as a table, CSV (`csv`) or an SVG bar
//! chart (`chart`).

pub mod chart;
pub mod csv;
pub mod domain;
pub mod store;

pub use domain::{BookingLine, Period, RangeError, RoomUse, Utilisation};
