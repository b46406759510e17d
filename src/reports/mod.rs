//! Utilisation reports (SPEC §12, §24): per active room over a range of
//! local dates, the booked hours, the share of its area's working hours
//! (the area's weekdays and hours in its zone, its holidays left out) they
//! fill, bookings, cancellations and releases; the bookings of the range as
//! a list; all areas or one (`?area=`). PostgreSQL computes each report in
//! one statement (`store`); this module only lays the numbers out as a
//! table, CSV (`csv`) or an SVG bar chart (`chart`).

pub mod chart;
pub mod csv;
pub mod domain;
pub mod store;

pub use domain::{AreaHours, BookingLine, Period, RangeError, RoomUse, Utilisation};
