//! Privacy (SPEC §26): the access records of every view or download by an
//! admin of other people's personal data (PIPA's 접속기록), erase, and the
//! retention of personal data.

pub mod access;
pub mod erase;
pub mod retention;

pub use access::{AccessRecord, Actor, Kind};
pub use erase::{EraseStaff, Erased};
