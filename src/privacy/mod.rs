//! Privacy (SPEC §26): the access records of every view or download by an
//! admin of other people's personal data (PIPA's 접속기록), a person's data
//! to take away as one JSON document (`export`), erase, and the retention
//! of personal data.

pub mod access;
pub mod erase;
pub mod export;
pub mod retention;

pub use access::{AccessRecord, Actor, Kind};
pub use erase::{EraseStaff, Erased};
