//! Integration tests over HTTP against real PostgreSQL (one database per test).

mod helpers;

mod abuse;
mod accounts;
mod admission;
mod browser;
mod calendar;
mod capacity;
mod catalogue;
mod checkin;
mod clauses;
mod client;
mod consistency;
mod consistency_guards;
mod consistency_plants;
mod display;
mod drills;
mod forms;
mod fuzz;
mod hostile;
mod idempotency;
mod languages;
mod mail_scale;
mod matrix;
mod operations;
mod outbox;
mod read_pool;
mod reports;
mod roles;
mod rooms;
mod rooms_concurrency;
mod round3_a;
mod round3_b;
mod rules;
mod series;
#[path = "../../benches/common/smtp_sink.rs"]
mod smtp_sink;
mod startup;
mod statements;
mod sweeper;
mod sweeper_drain;
mod web;
mod web_rooms;
