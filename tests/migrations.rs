//! Every migration runs up, down and up again on a fresh database.

use diesel_async::AsyncMigrationHarness;
use diesel_migrations::MigrationHarness;

#[tokio::test(flavor = "multi_thread")]
async fn migrations_run_up_down_and_up() {
    let name = format!("yeyak_test_{}", uuid::Uuid::new_v4().simple());
    let url = format!("postgres://postgres@127.0.0.1:5432/{name}");
    yeyak::db::bootstrap::prepare(&url).await.expect("up");
    let conn = yeyak::db::establish(&url).await.unwrap();
    let mut harness = AsyncMigrationHarness::new(conn);
    harness.revert_all_migrations(yeyak::db::bootstrap::MIGRATIONS).expect("down");
    assert!(harness.has_pending_migration(yeyak::db::bootstrap::MIGRATIONS).unwrap());
    harness.run_pending_migrations(yeyak::db::bootstrap::MIGRATIONS).expect("up again");
    assert!(!harness.has_pending_migration(yeyak::db::bootstrap::MIGRATIONS).unwrap());
    drop(harness);
    let mut admin = yeyak::db::establish("postgres://postgres@127.0.0.1:5432/postgres").await.unwrap();
    use diesel_async::RunQueryDsl;
    diesel::sql_query(format!("DROP DATABASE \"{name}\" WITH (FORCE)")).execute(&mut admin).await.unwrap();
}
