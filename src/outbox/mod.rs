//! Notification outbox (seed 000 §알림 작업자, SPEC §6): intents written in the
//! transaction of the state change that causes them, delivered at least once by
//! workers that claim rows with a lease, identified end to end by a stable
//! `delivery_id` so that the receiver can deduplicate.

pub mod list;
pub mod provider;
pub mod redrive;
pub mod reminders;
pub mod store;
pub mod worker;

pub use redrive::{Redrive, Redriven, REDRIVE};

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use rand::Rng;
use serde::Serialize;
use serde_json::{json, Value};

use crate::db::cached::CacheExt;
use crate::db::schema::notification_outbox as outbox;
use crate::db::Conn;

/// Why a notification exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Kind {
    #[serde(rename = "offer.created")]
    OfferCreated,
    #[serde(rename = "offer.expired")]
    OfferExpired,
    #[serde(rename = "hold.expired")]
    HoldExpired,
    #[serde(rename = "waitlist.expired")]
    WaitlistExpired,
    #[serde(rename = "waitlist.evicted")]
    WaitlistEvicted,
    #[serde(rename = "booking.created")]
    BookingCreated,
    #[serde(rename = "booking.moved")]
    BookingMoved,
    #[serde(rename = "booking.cancelled")]
    BookingCancelled,
    #[serde(rename = "booking.approved")]
    BookingApproved,
    #[serde(rename = "booking.rejected")]
    BookingRejected,
    #[serde(rename = "booking.released")]
    BookingReleased,
    #[serde(rename = "booking.reminder")]
    BookingReminder,
    /// A series cancelled for repeated no-shows (SPEC §25), by mail only.
    #[serde(rename = "series.struck")]
    SeriesStruck,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::OfferCreated => "offer.created",
            Kind::OfferExpired => "offer.expired",
            Kind::HoldExpired => "hold.expired",
            Kind::WaitlistExpired => "waitlist.expired",
            Kind::WaitlistEvicted => "waitlist.evicted",
            Kind::BookingCreated => "booking.created",
            Kind::BookingMoved => "booking.moved",
            Kind::BookingCancelled => "booking.cancelled",
            Kind::BookingApproved => "booking.approved",
            Kind::BookingRejected => "booking.rejected",
            Kind::BookingReleased => "booking.released",
            Kind::BookingReminder => "booking.reminder",
            Kind::SeriesStruck => "series.struck",
        }
    }
}

/// A notification intent with its stable delivery id.
#[derive(Debug, Clone, PartialEq)]
pub struct Intent {
    pub delivery_id: String,
    pub kind: Kind,
    pub payload: Value,
}

impl Intent {
    pub fn offer_created(entry_id: i64, offer_id: i64, resource_id: i64, expires_at: DateTime<Utc>) -> Self {
        Intent {
            delivery_id: format!("waitlist-{entry_id}-offered"),
            kind: Kind::OfferCreated,
            payload: json!({ "entryId": entry_id, "offerId": offer_id, "resourceId": resource_id, "expiresAt": expires_at }),
        }
    }

    pub fn offer_expired(entry_id: i64, offer_id: i64, resource_id: i64) -> Self {
        Intent {
            delivery_id: format!("offer-{offer_id}-expired"),
            kind: Kind::OfferExpired,
            payload: json!({ "entryId": entry_id, "offerId": offer_id, "resourceId": resource_id }),
        }
    }

    /// An entry that waited longer than `YEYAK_WAITLIST_MAX_WAIT_HOURS`.
    pub fn waitlist_expired(entry_id: i64, resource_id: i64) -> Self {
        Intent {
            delivery_id: format!("waitlist-{entry_id}-expired"),
            kind: Kind::WaitlistExpired,
            payload: json!({ "entryId": entry_id, "resourceId": resource_id }),
        }
    }

    /// An entry an admin evicted, with the offer withdrawn from it, if any.
    pub fn waitlist_evicted(entry_id: i64, offer_id: Option<i64>, resource_id: i64) -> Self {
        Intent {
            delivery_id: format!("waitlist-{entry_id}-evicted"),
            kind: Kind::WaitlistEvicted,
            payload: json!({ "entryId": entry_id, "offerId": offer_id, "resourceId": resource_id }),
        }
    }

    pub fn hold_expired(hold_id: i64, resource_id: i64) -> Self {
        Intent {
            delivery_id: format!("hold-{hold_id}-expired"),
            kind: Kind::HoldExpired,
            payload: json!({ "holdId": hold_id, "resourceId": resource_id }),
        }
    }
}

/// Writes the intent in the caller's transaction; a second enqueue of the same
/// delivery id does nothing. Returns whether a row was added.
pub async fn enqueue(conn: &mut Conn, intent: &Intent, now: DateTime<Utc>) -> QueryResult<bool> {
    Ok(enqueue_all(conn, std::slice::from_ref(intent), now).await? == 1)
}

/// Writes several intents with one statement; returns how many were new.
pub async fn enqueue_all(conn: &mut Conn, intents: &[Intent], now: DateTime<Utc>) -> QueryResult<usize> {
    if intents.is_empty() {
        return Ok(0);
    }
    let rows: Vec<_> = intents
        .iter()
        .map(|i| {
            (
                outbox::delivery_id.eq(&i.delivery_id),
                outbox::kind.eq(i.kind.as_str()),
                outbox::payload.eq(&i.payload),
                outbox::status.eq("PENDING"),
                outbox::next_attempt_at.eq(now),
                outbox::created_at.eq(now),
            )
        })
        .collect();
    diesel::insert_into(outbox::table).values(rows).on_conflict_do_nothing().execute(conn).await
}

/// Writes the `mail` copies of booking notices for organizers who have an
/// email (one statement; the address and the room names its invitation
/// shows are read in this transaction). Each intent is paired with its
/// organizer's staff id.
pub async fn enqueue_mail(conn: &mut Conn, intents: &[(Intent, i64)], now: DateTime<Utc>) -> QueryResult<usize> {
    use diesel::sql_types::{Array, Int8, Jsonb, Text, Timestamptz};
    if intents.is_empty() {
        return Ok(0);
    }
    let ids: Vec<&str> = intents.iter().map(|(i, _)| i.delivery_id.as_str()).collect();
    let kinds: Vec<&str> = intents.iter().map(|(i, _)| i.kind.as_str()).collect();
    let payloads: Vec<&Value> = intents.iter().map(|(i, _)| &i.payload).collect();
    let staff: Vec<i64> = intents.iter().map(|(_, s)| *s).collect();
    diesel::sql_query(
        "INSERT INTO notification_outbox (delivery_id, channel, kind, payload, status, next_attempt_at, created_at)
         SELECT i.delivery_id, 'mail', i.kind,
                i.payload || jsonb_build_object('to', s.email, 'toName', s.display_name, 'language', s.language, 'roomNames',
                    (SELECT coalesce(jsonb_object_agg(m.code, m.name), '{}') FROM room m
                      WHERE m.code IN (SELECT jsonb_array_elements_text(i.payload -> 'rooms')))),
                'PENDING', $5, $5
           FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::int8[]) AS i(delivery_id, kind, payload, staff_id)
           JOIN staff_user s ON s.id = i.staff_id AND s.email IS NOT NULL
         ON CONFLICT DO NOTHING",
    )
    .bind::<Array<Text>, _>(ids)
    .bind::<Array<Text>, _>(kinds)
    .bind::<Array<Jsonb>, _>(payloads)
    .bind::<Array<Int8>, _>(staff)
    .bind::<Timestamptz, _>(now)
    .execute(conn)
    .await
}

/// Writes finished mail messages (`mail::prepared`, iMIP) in the caller's
/// transaction, one statement; a second enqueue of a delivery id does nothing.
pub async fn enqueue_prepared(
    conn: &mut Conn,
    rows: &[(String, &str, Value)],
    now: DateTime<Utc>,
) -> QueryResult<usize> {
    use diesel::sql_types::{Array, Jsonb, Text, Timestamptz};
    if rows.is_empty() {
        return Ok(0);
    }
    let ids: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    let kinds: Vec<&str> = rows.iter().map(|r| r.1).collect();
    let payloads: Vec<&Value> = rows.iter().map(|r| &r.2).collect();
    diesel::sql_query(
        "INSERT INTO notification_outbox (delivery_id, channel, kind, payload, status, next_attempt_at, created_at)
         SELECT i.delivery_id, 'mail', i.kind, i.payload, 'PENDING', $4, $4
           FROM unnest($1::text[], $2::text[], $3::jsonb[]) AS i(delivery_id, kind, payload)
         ON CONFLICT DO NOTHING",
    )
    .bind::<Array<Text>, _>(ids)
    .bind::<Array<Text>, _>(kinds)
    .bind::<Array<Jsonb>, _>(payloads)
    .bind::<Timestamptz, _>(now)
    .execute(conn)
    .await
}

/// Withdraws the reminders of bookings that moved, went or were shortened,
/// unless already sent (or claimed): a booking's change announces itself;
/// the outbox, which holds the reminders, takes back what no longer holds.
pub async fn withdraw_reminders(conn: &mut Conn, booking_ids: &[i64]) -> QueryResult<usize> {
    if booking_ids.is_empty() {
        return Ok(0);
    }
    diesel::sql_query(
        "DELETE FROM notification_outbox
          WHERE kind = 'booking.reminder' AND status = 'PENDING' AND claimed_by IS NULL
            AND (payload ->> 'bookingId')::bigint = ANY($1)",
    )
    .bind::<diesel::sql_types::Array<diesel::sql_types::Int8>, _>(booking_ids)
    .cached()
    .execute(conn)
    .await
}

/// Exponential backoff with jitter: attempt n waits 2 s · 2^(n-1), at most
/// 10 s, minus up to 20 % at random (so that workers spread out); after
/// `max_attempts` the delivery is EXHAUSTED.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub initial: Duration,
    pub max: Duration,
    pub max_attempts: i32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { initial: Duration::seconds(2), max: Duration::seconds(10), max_attempts: 5 }
    }
}

impl RetryPolicy {
    /// The un-jittered delay after failed attempt `attempt` (1-based).
    pub fn base_delay(&self, attempt: i32) -> Duration {
        let factor = 1i64 << (attempt - 1).clamp(0, 20);
        let ms = self.initial.num_milliseconds().saturating_mul(factor);
        Duration::milliseconds(ms.min(self.max.num_milliseconds()))
    }

    pub fn delay(&self, attempt: i32) -> Duration {
        let base = self.base_delay(attempt).num_milliseconds();
        let jitter = rand::thread_rng().gen_range(0..=base / 5);
        Duration::milliseconds(base - jitter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = RetryPolicy::default();
        let secs: Vec<i64> = (1..=5).map(|a| p.base_delay(a).num_seconds()).collect();
        assert_eq!(secs, [2, 4, 8, 10, 10]);
        for a in 1..=5 {
            let d = p.delay(a);
            assert!(d <= p.base_delay(a) && d >= p.base_delay(a) * 4 / 5, "{d:?}");
        }
    }

    #[test]
    fn delivery_ids_are_stable() {
        assert_eq!(Intent::offer_created(30, 7, 1, Utc::now()).delivery_id, "waitlist-30-offered");
        assert_eq!(Intent::hold_expired(5, 1).delivery_id, "hold-5-expired");
        assert_eq!(Intent::offer_expired(30, 7, 1).delivery_id, "offer-7-expired");
    }
}
