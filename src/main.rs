use std::process::ExitCode;

use clap::Parser;
use yeyak::config::Config;

#[tokio::main]
async fn main() -> ExitCode {
    let config = Config::parse();
    yeyak::telemetry::init(&config.log_format);
    match yeyak::startup::build(config).await {
        Ok(app) => {
            tracing::info!(addr = %app.addr, "yeyak listening on http://{}", app.addr);
            let served = app.server.await;
            if let Some(background) = app.background {
                background.stop().await;
            }
            if let Err(e) = served {
                eprintln!("yeyak: server error: {e}");
                return ExitCode::FAILURE;
            }
            tracing::info!("yeyak stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("yeyak: {e}");
            ExitCode::FAILURE
        }
    }
}
