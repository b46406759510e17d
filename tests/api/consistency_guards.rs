//! Invariants the schema holds instead of a consistency check (issue 25,
//! `src/consistency/checks.rs`): the database refuses each violation, named
//! by its constraint, so no check could ever find one.

use reqwest::StatusCode;
use serde_json::json;
use tokio_postgres::error::SqlState;

use crate::helpers::*;

/// Runs `sql` and answers the SQLSTATE and constraint of its refusal.
async fn refusal(app: &TestApp, sql: &str) -> (SqlState, String) {
    let err = app.db().await.batch_execute(sql).await.expect_err(sql);
    let db = err.as_db_error().unwrap_or_else(|| panic!("{sql}: {err}"));
    (db.code().clone(), db.constraint().unwrap_or_default().to_owned())
}

/// Resource `guard` (capacity 1) held by alice, bob offered the unit.
async fn offered(app: &TestApp) {
    let made = |status: StatusCode, body: &serde_json::Value| assert!(status.is_success(), "{body}");
    let (s, r) =
        post(app, "/api/resources", ADMIN, "ops", "r", json!({"code": "guard", "name": "g", "capacity": 1})).await;
    made(s, &r);
    let id = r["id"].as_i64().unwrap();
    let (s, h) = post(app, &format!("/api/resources/{id}/holds"), TENANT_ONE, "alice", "h", json!({})).await;
    made(s, &h);
    let (s, e) = post(app, &format!("/api/resources/{id}/waitlist"), TENANT_ONE, "bob", "w", json!({})).await;
    made(s, &e);
    let hold = h["id"].as_i64().unwrap();
    let (s, c) = post(app, &format!("/api/holds/{hold}/cancel"), TENANT_ONE, "alice", "c", json!({})).await;
    made(s, &c);
    assert_eq!(app.count("SELECT count(*) FROM capacity_offer WHERE state = 'ACTIVE'").await, 1);
    app.assert_consistent().await;
}

#[tokio::test]
async fn an_entry_cannot_get_a_second_offer_nor_an_offer_of_other_terms() {
    let app = TestApp::spawn().await;
    offered(&app).await;
    // What `entry_with_several_active_offers` looked for: a second ACTIVE offer.
    let second = "INSERT INTO capacity_offer (resource_id, entry_id, owner_digest, state, quantity, expires_at,
                                              created_at, updated_at)
                  SELECT resource_id, entry_id, owner_digest, 'ACTIVE', quantity, expires_at, created_at, updated_at
                    FROM capacity_offer";
    assert_eq!(refusal(&app, second).await, (SqlState::UNIQUE_VIOLATION, "capacity_offer_entry_id_key".into()));
    for other_terms in [
        "UPDATE capacity_offer SET owner_digest = 'someone-else'",
        "UPDATE capacity_offer SET quantity = quantity + 1",
        "UPDATE capacity_offer SET resource_id = 1",
    ] {
        assert_eq!(
            refusal(&app, other_terms).await,
            (SqlState::FOREIGN_KEY_VIOLATION, "capacity_offer_matches_entry".into()),
            "{other_terms}"
        );
    }
    app.assert_consistent().await;
}

#[tokio::test]
async fn decisions_check_ins_and_releases_cannot_be_made_up() {
    let app = TestApp::spawn().await;
    let b = booking("회의", &["A"], &at(1, 10, 0), &at(1, 11, 0));
    let (status, made) = body(app.create_booking(TENANT_ONE, "alice", "b", &b).await).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    // Room A needs neither approval nor check-in.
    for (sql, constraint) in [
        (
            "UPDATE reservation SET status = 'REJECTED'; UPDATE reservation_room SET active = false",
            "reservation_rejected_was_decided",
        ),
        ("UPDATE reservation SET decision_reason = 'made up'", "reservation_reason_has_decision"),
        ("UPDATE reservation SET checked_in_at = now()", "reservation_checked_in_needs_check_in"),
        ("UPDATE reservation SET status = 'RELEASED', released_at = now()", "reservation_released_was_no_show"),
        (
            "UPDATE reservation SET check_in_required = true, status = 'PENDING', checked_in_at = now()",
            "reservation_checked_in_needs_check_in",
        ),
    ] {
        assert_eq!(refusal(&app, sql).await, (SqlState::CHECK_VIOLATION, constraint.into()), "{sql}");
    }
    app.assert_consistent().await;
}
