//! Integration tests over HTTP against real PostgreSQL (one database per test).

mod helpers;

mod admission;
mod browser;
mod calendar;
mod capacity;
mod catalogue;
mod checkin;
mod consistency;
mod display;
mod drills;
mod fuzz;
mod hostile;
mod idempotency;
mod operations;
mod outbox;
mod read_pool;
mod reports;
mod rooms;
mod rooms_concurrency;
mod rules;
mod series;
#[path = "../../benches/common/smtp_sink.rs"]
mod smtp_sink;
mod startup;
mod statements;
mod sweeper;
mod web;
mod web_rooms;
