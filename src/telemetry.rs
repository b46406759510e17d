//! Logging set-up: human-readable text by default, JSON with
//! `YEYAK_LOG_FORMAT=json`; the level comes from `RUST_LOG` (default info).

use tracing_subscriber::EnvFilter;

pub fn init(format: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = if format == "json" { builder.json().try_init() } else { builder.try_init() };
}
