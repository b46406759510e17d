//! Claiming and settling deliveries. Only the current claimant may settle a
//! row; a worker that lost its lease gets `false` and changes nothing.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Int8, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use serde_json::Value;
use uuid::Uuid;

use crate::db::cached::CacheExt;
use crate::db::schema::{notification_attempt as attempt, notification_outbox as outbox};
use crate::db::Conn;

/// A claimed delivery.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct Claimed {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub delivery_id: String,
    /// `webhook` or `mail`: which provider delivers it.
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub channel: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub kind: String,
    #[diesel(sql_type = diesel::sql_types::Jsonb)]
    pub payload: Value,
    #[diesel(sql_type = diesel::sql_types::Int4)]
    pub attempt_count: i32,
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
}

/// Claims up to `limit` due rows for `worker` with a lease. `SKIP LOCKED` lets
/// several processes share the work; a row whose lease ran out (its worker
/// died) is due again.
pub async fn claim(
    conn: &mut Conn,
    worker: Uuid,
    now: DateTime<Utc>,
    lease: Duration,
    limit: i64,
) -> QueryResult<Vec<Claimed>> {
    diesel::sql_query(
        "UPDATE notification_outbox o
            SET claimed_by = $1, claim_expires_at = $3, attempt_count = o.attempt_count + 1
          WHERE (o.delivery_id, o.channel) IN (
                SELECT delivery_id, channel FROM notification_outbox
                 WHERE status = 'PENDING' AND next_attempt_at <= $2
                   AND (claim_expires_at IS NULL OR claim_expires_at <= $2)
                 ORDER BY next_attempt_at
                 LIMIT $4
                 FOR UPDATE SKIP LOCKED)
      RETURNING o.delivery_id, o.channel, o.kind, o.payload, o.attempt_count, o.created_at",
    )
    .bind::<SqlUuid, _>(worker)
    .bind::<Timestamptz, _>(now)
    .bind::<Timestamptz, _>(now + lease)
    .bind::<Int8, _>(limit)
    .cached()
    .load(conn)
    .await
}

/// Records what one attempt did (for operators and tests).
pub async fn record_attempt(
    conn: &mut Conn,
    delivery: &Claimed,
    worker: Uuid,
    now: DateTime<Utc>,
    outcome: &str,
    detail: Option<&str>,
) -> QueryResult<()> {
    diesel::insert_into(attempt::table)
        .values((
            attempt::delivery_id.eq(&delivery.delivery_id),
            attempt::channel.eq(&delivery.channel),
            attempt::attempt.eq(delivery.attempt_count),
            attempt::worker.eq(worker),
            attempt::attempted_at.eq(now),
            attempt::outcome.eq(outcome),
            attempt::detail.eq(detail),
        ))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(())
}

/// PENDING → DELIVERED, only for the current claimant.
pub async fn mark_delivered(
    conn: &mut Conn,
    delivery_id: &str,
    channel: &str,
    worker: Uuid,
    now: DateTime<Utc>,
) -> QueryResult<bool> {
    let n = diesel::update(
        outbox::table
            .find((delivery_id, channel))
            .filter(outbox::claimed_by.eq(worker))
            .filter(outbox::status.eq("PENDING")),
    )
    .set((
        outbox::status.eq("DELIVERED"),
        outbox::delivered_at.eq(now),
        outbox::next_attempt_at.eq(None::<DateTime<Utc>>),
        outbox::claimed_by.eq(None::<Uuid>),
        outbox::claim_expires_at.eq(None::<DateTime<Utc>>),
        outbox::last_error.eq(None::<String>),
    ))
    .cached()
    .execute(conn)
    .await?;
    Ok(n == 1)
}

/// PENDING → DELIVERED for many rows at once (a worker pass's accepted
/// mail), only those `worker` still holds; returns the ones it settled.
pub async fn mark_delivered_all(
    conn: &mut Conn,
    delivered: &[&Claimed],
    worker: Uuid,
    now: DateTime<Utc>,
) -> QueryResult<Vec<(String, String)>> {
    use diesel::sql_types::{Array, Text};
    #[derive(QueryableByName)]
    struct Key {
        #[diesel(sql_type = Text)]
        delivery_id: String,
        #[diesel(sql_type = Text)]
        channel: String,
    }
    if delivered.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<&str> = delivered.iter().map(|n| n.delivery_id.as_str()).collect();
    let channels: Vec<&str> = delivered.iter().map(|n| n.channel.as_str()).collect();
    let keys: Vec<Key> = diesel::sql_query(
        "UPDATE notification_outbox o
            SET status = 'DELIVERED', delivered_at = $3, next_attempt_at = NULL, claimed_by = NULL,
                claim_expires_at = NULL, last_error = NULL
           FROM unnest($1::text[], $2::text[]) AS k(delivery_id, channel)
          WHERE o.delivery_id = k.delivery_id AND o.channel = k.channel AND o.claimed_by = $4 AND o.status = 'PENDING'
      RETURNING o.delivery_id, o.channel",
    )
    .bind::<Array<Text>, _>(ids)
    .bind::<Array<Text>, _>(channels)
    .bind::<Timestamptz, _>(now)
    .bind::<SqlUuid, _>(worker)
    .cached()
    .load(conn)
    .await?;
    Ok(keys.into_iter().map(|k| (k.delivery_id, k.channel)).collect())
}

/// Records many attempts (outcome each) in one statement.
pub async fn record_attempts(
    conn: &mut Conn,
    attempts: &[(&Claimed, &str)],
    worker: Uuid,
    now: DateTime<Utc>,
) -> QueryResult<()> {
    use diesel::sql_types::{Array, Int4, Text};
    if attempts.is_empty() {
        return Ok(());
    }
    let ids: Vec<&str> = attempts.iter().map(|(n, _)| n.delivery_id.as_str()).collect();
    let channels: Vec<&str> = attempts.iter().map(|(n, _)| n.channel.as_str()).collect();
    let numbers: Vec<i32> = attempts.iter().map(|(n, _)| n.attempt_count).collect();
    let outcomes: Vec<&str> = attempts.iter().map(|(_, o)| *o).collect();
    diesel::sql_query(
        "INSERT INTO notification_attempt (delivery_id, channel, attempt, worker, attempted_at, outcome)
         SELECT a.delivery_id, a.channel, a.attempt, $5, $6, a.outcome
           FROM unnest($1::text[], $2::text[], $3::int4[], $4::text[]) AS a(delivery_id, channel, attempt, outcome)
         ON CONFLICT DO NOTHING",
    )
    .bind::<Array<Text>, _>(ids)
    .bind::<Array<Text>, _>(channels)
    .bind::<Array<Int4>, _>(numbers)
    .bind::<Array<Text>, _>(outcomes)
    .bind::<SqlUuid, _>(worker)
    .bind::<Timestamptz, _>(now)
    .cached()
    .execute(conn)
    .await?;
    Ok(())
}

/// A failed attempt: try again at `next_attempt_at`, or, when there is none
/// (last attempt used or a permanent failure), EXHAUSTED. Only the current
/// claimant may.
pub async fn mark_failed(
    conn: &mut Conn,
    delivery_id: &str,
    channel: &str,
    worker: Uuid,
    next_attempt_at: Option<DateTime<Utc>>,
    error: &str,
) -> QueryResult<bool> {
    let exhausted = next_attempt_at.is_none();
    let next = next_attempt_at;
    let n = diesel::update(
        outbox::table
            .find((delivery_id, channel))
            .filter(outbox::claimed_by.eq(worker))
            .filter(outbox::status.eq("PENDING")),
    )
    .set((
        outbox::status.eq(if exhausted { "EXHAUSTED" } else { "PENDING" }),
        outbox::next_attempt_at.eq(next),
        outbox::claimed_by.eq(None::<Uuid>),
        outbox::claim_expires_at.eq(None::<DateTime<Utc>>),
        outbox::last_error.eq(error),
    ))
    .cached()
    .execute(conn)
    .await?;
    Ok(n == 1)
}

/// EXHAUSTED → PENDING with a fresh attempt budget (an admin's re-drive), on
/// every channel of the delivery that gave up. Returns the statuses found.
pub async fn redrive(conn: &mut Conn, delivery_id: &str, now: DateTime<Utc>) -> QueryResult<Vec<String>> {
    let current: Vec<String> = outbox::table
        .filter(outbox::delivery_id.eq(delivery_id))
        .select(outbox::status)
        .for_update()
        .load(conn)
        .await?;
    if current.iter().any(|s| s == "EXHAUSTED") {
        diesel::update(
            outbox::table.filter(outbox::delivery_id.eq(delivery_id)).filter(outbox::status.eq("EXHAUSTED")),
        )
        .set((outbox::status.eq("PENDING"), outbox::attempt_count.eq(0), outbox::next_attempt_at.eq(now)))
        .execute(conn)
        .await?;
    }
    Ok(current)
}
