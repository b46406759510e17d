use std::process::ExitCode;

use yeyak::config::Config;
use yeyak::startup::Application;

#[tokio::main]
async fn main() -> ExitCode {
    let config = Config::load();
    yeyak::telemetry::init(&config.log_format, config.log_unsafe);
    let exposed = config.exposed_defaults();
    if !exposed.is_empty() {
        eprintln!("yeyak: {}", config.refusal(&exposed));
        return ExitCode::from(2);
    }
    let app = match yeyak::startup::build(config).await {
        Ok(app) => app,
        Err(e) => {
            eprintln!("yeyak: {e}");
            return ExitCode::from(e.exit_code());
        }
    };
    tracing::info!(addr = %app.addr, "yeyak listening on http://{}", app.addr);
    let Application { server, state, background, embedded, .. } = app;
    let served = server.await;
    if let Some(background) = background {
        background.stop().await;
    }
    // The embedded cluster goes last, once nothing uses it any more.
    drop(state);
    if let Some(cluster) = embedded {
        match tokio::task::spawn_blocking(move || cluster.stop()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("yeyak: {e}"),
            Err(e) => eprintln!("yeyak: stopping the embedded PostgreSQL failed: {e}"),
        }
    }
    if let Err(e) = served {
        eprintln!("yeyak: server error: {e}");
        return ExitCode::FAILURE;
    }
    tracing::info!("yeyak stopped");
    ExitCode::SUCCESS
}
