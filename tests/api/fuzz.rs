//! A short, bounded schema-driven fuzzing pass (schemathesis from PyPI) over
//! every JSON route of `/api/openapi.json`: no 5xx, and every response matches
//! its documented schema. `bash .ci/fuzz` runs a longer pass.

use crate::helpers::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_no_server_error_and_no_schema_violation() {
    let app = TestApp::spawn().await;
    let url = app.url("/api/openapi.json");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("schemathesis")
            // Its cache lands in the working directory: keep it out of the repository.
            .current_dir(std::env::temp_dir())
            .args(["run", &url])
            .args(["-H", &format!("Authorization: Bearer {ADMIN}")])
            .args(["--checks", "not_a_server_error,response_schema_conformance"])
            .args(["--max-examples", "8", "--phases", "examples,fuzzing", "--workers", "1", "--request-timeout", "10"])
            .args(["--generation-deterministic", "--suppress-health-check", "all"])
            .output()
            .expect("schemathesis is installed (pip install schemathesis; bash .ci/test does it)")
    })
    .await
    .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "schemathesis found problems:\n{report}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(report.contains("passed"), "{report}");
    app.assert_consistent().await;
}
