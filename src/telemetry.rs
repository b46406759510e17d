//! Logging set-up: human-readable text by default, JSON with
//! `YEYAK_LOG_FORMAT=json`; the level comes from `RUST_LOG` (default info).
//!
//! Some dependencies log the data of requests below `info`: PostgreSQL's
//! client its statements' parameters (a raw ID token at `debug`, as a byte
//! list), the HTTP and TLS stacks headers and cookies, the LDAP and SMTP
//! clients their binds. They are capped at `info` whatever `RUST_LOG` says
//! (SPEC §22), unless `YEYAK_LOG_UNSAFE=true`, which says so at start.
//! Colour codes go only to a terminal, never into a file or a pipe.

use std::io::IsTerminal;

use tracing::level_filters::LevelFilter;
use tracing_subscriber::filter::{EnvFilter, FilterExt, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, Layer};

/// The crates whose debug and trace lines carry request data.
pub const REQUEST_DATA_LOGGERS: &[&str] = &[
    "tokio_postgres",
    "postgres_protocol",
    "hyper",
    "hyper_util",
    "h2",
    "reqwest",
    "rustls",
    "ldap3",
    "lettre",
    "actix_http",
    "openidconnect",
    "oauth2",
];

/// What passes: `RUST_LOG` (default `info`), with [`REQUEST_DATA_LOGGERS`]
/// held at `info` unless `unsafe_logging`.
pub fn filter<S>(
    rust_log: Option<&str>,
    unsafe_logging: bool,
) -> Box<dyn tracing_subscriber::layer::Filter<S> + Send + Sync>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    let asked = rust_log.and_then(|r| EnvFilter::try_new(r).ok()).unwrap_or_else(|| EnvFilter::new("info"));
    if unsafe_logging {
        return Box::new(asked);
    }
    let capped = REQUEST_DATA_LOGGERS
        .iter()
        .fold(Targets::new().with_default(LevelFilter::TRACE), |t, name| t.with_target(*name, LevelFilter::INFO));
    Box::new(asked.and(capped))
}

pub fn init(format: &str, unsafe_logging: bool) {
    let rust_log = std::env::var("RUST_LOG").ok();
    let ansi = std::io::stderr().is_terminal();
    let layer = fmt::layer().with_writer(std::io::stderr).with_ansi(ansi);
    let layer = if format == "json" { layer.json().boxed() } else { layer.boxed() };
    let _ =
        tracing_subscriber::registry().with(layer.with_filter(filter(rust_log.as_deref(), unsafe_logging))).try_init();
    if unsafe_logging {
        tracing::warn!("YEYAK_LOG_UNSAFE=true: dependencies may log request data (tokens, passwords, cookies)");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Everything logged while `f` runs under the filter.
    fn logged(rust_log: &str, unsafe_logging: bool, f: impl FnOnce()) -> String {
        let out = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = out.clone();
        let writer = move || SharedWriter(sink.clone());
        let layer =
            fmt::layer().with_writer(writer).with_ansi(false).with_filter(filter(Some(rust_log), unsafe_logging));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, f);
        let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
        text
    }

    struct SharedWriter(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for SharedWriter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn emit() {
        tracing::debug!(target: "tokio_postgres::query", "binding parameters: secret-id-token");
        tracing::trace!(target: "hyper::proto::h1", "headers: cookie=secret-session");
        tracing::info!(target: "tokio_postgres::connection", "connection closed");
        tracing::debug!(target: "yeyak::dav", "yeyak's own debug line");
    }

    #[test]
    fn request_data_loggers_stay_at_info_whatever_rust_log_says() {
        for rust_log in ["debug", "trace", "tokio_postgres=trace,hyper=trace,debug"] {
            let text = logged(rust_log, false, emit);
            assert!(!text.contains("secret"), "{rust_log}: {text}");
            assert!(text.contains("connection closed"), "{rust_log}: info still passes: {text}");
            assert!(text.contains("yeyak's own debug line"), "{rust_log}: {text}");
        }
        let quiet = logged("warn", false, emit);
        assert!(quiet.is_empty(), "RUST_LOG still lowers everything: {quiet}");
    }

    #[test]
    fn yeyak_log_unsafe_lets_rust_log_decide() {
        let text = logged("trace", true, emit);
        assert!(text.contains("secret-id-token") && text.contains("secret-session"), "{text}");
    }
}
