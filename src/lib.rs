//! yeyak (예약): meeting-room bookings and capacity reservations with
//! PostgreSQL as the single authority.
//!
//! One module per capability (`rooms`, `idempotency`, `auth`, `consistency`),
//! each with its rules, its SQL and its HTTP surface apart; `db`, `config`,
//! `http`, `startup`, `telemetry` at the edges.

pub mod admission;
pub mod auth;
pub mod background;
pub mod calendar;
pub mod capacity;
pub mod catalogue;
pub mod checkin;
pub mod clock;
pub mod command;
pub mod config;
pub mod consistency;
pub mod dav;
pub mod day;
pub mod db;
pub mod display;
pub mod error;
pub mod fuzzing;
pub mod history;
pub mod http;
pub mod i18n;
pub mod idempotency;
pub mod identity;
pub mod mail;
pub mod metrics;
pub mod operations;
pub mod outbox;
pub mod panic_boundary;
pub mod people;
pub mod policy;
pub mod privacy;
pub mod reports;
pub mod rooms;
pub mod routes;
pub mod series;
pub mod startup;
pub mod state;
pub mod sweeper;
pub mod telemetry;
pub mod text;
pub mod transport;
pub mod web;
