//! Meeting-room bookings (seed 002, SPEC §2, §7.2): rules in `domain`, SQL in
//! `store`, JSON routes in `http`.

pub mod domain;
pub mod events;
pub mod http;
pub mod rules;
pub mod service;
pub mod store;
