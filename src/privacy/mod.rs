//! Privacy (SPEC §26, issue 42): the access records of every view or
//! download by an admin of other people's personal data (PIPA's 접속기록).

pub mod access;

pub use access::{AccessRecord, Actor, Kind};
