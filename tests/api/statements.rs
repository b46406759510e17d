//! Round trips per request: hot statements are prepared once per connection,
//! and a checkout sends nothing.

use diesel::prelude::*;
use diesel::sql_types::BigInt;
use diesel_async::RunQueryDsl;
use serde_json::json;
use yeyak::db::cached::CacheExt;
use yeyak::db::schema::room;

use crate::helpers::{post, TestApp, TENANT_ONE};

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Prepared statements on this connection whose text starts with `prefix`.
async fn prepared(conn: &mut yeyak::db::Conn, prefix: &str) -> i64 {
    diesel::sql_query("SELECT count(*) AS n FROM pg_prepared_statements WHERE statement LIKE $1 || '%'")
        .bind::<diesel::sql_types::Text, _>(prefix)
        .get_result::<Count>(conn)
        .await
        .unwrap()
        .n
}

#[tokio::test]
async fn a_cached_update_is_prepared_once_and_reused() {
    let app = TestApp::spawn().await;
    let mut conn = yeyak::db::establish(&app.database_url()).await.unwrap();
    for name in ["first", "second", "third"] {
        let n = diesel::update(room::table.filter(room::code.eq("A")))
            .set(room::name.eq(name))
            .cached()
            .execute(&mut conn)
            .await
            .unwrap();
        assert_eq!(n, 1);
    }
    assert_eq!(prepared(&mut conn, "UPDATE \"room\"").await, 1, "one prepared statement serves all three");

    // diesel alone prepares such an UPDATE again on every call (a Parse and
    // its round trip each time) and never keeps it.
    for name in ["fourth", "fifth"] {
        diesel::update(room::table.filter(room::code.eq("B")))
            .set(room::name.eq(name))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    assert_eq!(prepared(&mut conn, "UPDATE \"room\"").await, 1, "the uncached statements were not kept");
    let name: String = room::table.find("A").select(room::name).first(&mut conn).await.unwrap();
    assert_eq!(name, "third", "the cached statement ran with each call's binds");
}

#[tokio::test]
async fn a_hold_sends_eight_statements_and_no_checkout_probe() {
    let app = TestApp::spawn().await;
    let admin = crate::helpers::ADMIN;
    let (status, resource) =
        post(&app, "/api/resources", admin, "ops", "r1", json!({"code": "stmt", "name": "s", "capacity": 10})).await;
    assert_eq!(status, 201, "{resource}");
    let path = format!("/api/resources/{}/holds", resource["id"]);
    let before = app.state.db_stats.statements();
    for i in 0..5 {
        let (status, body) = post(&app, &path, TENANT_ONE, "owner", &format!("h{i}"), json!({})).await;
        assert_eq!(status, 201, "{body}");
    }
    let sent = app.state.db_stats.statements() - before;
    // BEGIN, claim (advisory try-lock + INSERT in one statement), SAVEPOINT,
    // conditional UPDATE, hold INSERT, RELEASE, finalize, COMMIT; no
    // `SELECT 1` on checkout.
    assert_eq!(sent, 5 * 8, "statements for five holds");
}
