//! Privacy (SPEC §26, issue 42): the access records of every view or
//! download by an admin of other people's personal data (PIPA's 접속기록),
//! and a person's data to take away as one JSON document (`export`).

pub mod access;
pub mod export;

pub use access::{AccessRecord, Actor, Kind};
