//! The room catalogue (SPEC §8): rooms as data with their areas, suites,
//! equipment and booking rules. `domain` holds the values and the linking
//! rule, `store` the SQL, `cache` the snapshot pages draw from, `commands`
//! what changes a room.

pub mod areas;
pub mod cache;
pub mod commands;
pub mod domain;
pub mod holidays;
pub mod hours;
pub mod places;
pub mod plans;
pub mod store;

pub use cache::Catalogue;
pub use commands::{CreateArea, CreateHolidayCalendar, CreateRoom, PatchArea, PatchRoom, ReplaceHolidays};
