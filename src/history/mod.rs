//! The history of a booking (SPEC §12): one row per change — created, moved,
//! retitled, cancelled, checked in, released, approved, rejected — with who
//! made it and the values before and after, written by the transaction that
//! makes the change, so a refused command leaves no trace and an accepted
//! one cannot lose its record.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Int8, Jsonb, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::command::Principal;
use crate::db::cached::CacheExt;
use crate::db::schema::booking_event;
use crate::db::Conn;

/// What happened to a booking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Created,
    Moved,
    Retitled,
    Cancelled,
    CheckedIn,
    Released,
    Approved,
    Rejected,
    /// Rebooked by a restore of a series struck for no-shows (SPEC §25).
    Restored,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Created => "created",
            Action::Moved => "moved",
            Action::Retitled => "retitled",
            Action::Cancelled => "cancelled",
            Action::CheckedIn => "checked_in",
            Action::Released => "released",
            Action::Approved => "approved",
            Action::Rejected => "rejected",
            Action::Restored => "restored",
        }
    }

    fn parse(s: &str) -> Option<Action> {
        [
            Action::Created,
            Action::Moved,
            Action::Retitled,
            Action::Cancelled,
            Action::CheckedIn,
            Action::Released,
            Action::Approved,
            Action::Rejected,
            Action::Restored,
        ]
        .into_iter()
        .find(|a| a.as_str() == s)
    }
}

/// Field changes as `{field: {before, after}}`; only fields that changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes(Map<String, Value>);

impl Changes {
    pub fn new() -> Self {
        Changes::default()
    }

    /// Records `field` when `before` and `after` differ.
    pub fn diff<T: Serialize + PartialEq>(mut self, field: &str, before: T, after: T) -> Self {
        if before != after {
            self.0.insert(field.to_owned(), json!({ "before": before, "after": after }));
        }
        self
    }

    /// Records a value that is new (no before).
    pub fn set<T: Serialize>(mut self, field: &str, after: T) -> Self {
        self.0.insert(field.to_owned(), json!({ "before": null, "after": after }));
        self
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, field: &str) -> bool {
        self.0.contains_key(field)
    }

    pub fn into_value(self) -> Value {
        Value::Object(self.0)
    }
}

/// Writes one event in the caller's transaction, naming `actor` (and the
/// person a delegate acted for).
pub async fn record(
    conn: &mut Conn,
    reservation_id: i64,
    action: Action,
    actor: &Principal,
    changes: Changes,
    at: DateTime<Utc>,
) -> QueryResult<()> {
    diesel::insert_into(booking_event::table)
        .values((
            booking_event::reservation_id.eq(reservation_id),
            booking_event::at.eq(at),
            booking_event::action.eq(action.as_str()),
            booking_event::actor.eq(actor.name()),
            booking_event::actor_for.eq(actor.acting_for()),
            booking_event::actor_staff_id.eq(actor.actor_staff_id()),
            booking_event::actor_for_staff_id.eq(actor.acting_for_staff_id()),
            booking_event::changes.eq(changes.into_value()),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

/// Writes the same event for many bookings in one statement (a retired
/// room's bookings, a series' occurrences, the sweeper's releases), each with
/// its own changes.
pub async fn record_many(
    conn: &mut Conn,
    events: Vec<(i64, Changes)>,
    action: Action,
    actor: &Principal,
    at: DateTime<Utc>,
) -> QueryResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    let (ids, changes): (Vec<i64>, Vec<Value>) = events.into_iter().map(|(id, c)| (id, c.into_value())).unzip();
    diesel::sql_query(
        "INSERT INTO booking_event (reservation_id, at, action, actor, changes, actor_for, actor_staff_id, actor_for_staff_id)
         SELECT id, $2, $3, $4, changes, $6, $7, $8 FROM unnest($1, $5) AS e(id, changes)",
    )
    .bind::<Array<Int8>, _>(ids)
    .bind::<Timestamptz, _>(at)
    .bind::<Text, _>(action.as_str())
    .bind::<Text, _>(actor.name())
    .bind::<Array<Jsonb>, _>(changes)
    .bind::<Nullable<Text>, _>(actor.acting_for())
    .bind::<Nullable<Int8>, _>(actor.actor_staff_id())
    .bind::<Nullable<Int8>, _>(actor.acting_for_staff_id())
    .cached()
    .execute(conn)
    .await?;
    Ok(())
}

/// One change as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "BookingEvent")]
pub struct Event {
    pub at: DateTime<Utc>,
    pub action: Action,
    /// Display name of who made the change.
    pub actor: String,
    /// The person a delegate made it for (SPEC §25), else null.
    pub on_behalf_of: Option<String>,
    /// `{field: {before, after}}` for every field the change touched.
    pub changes: Value,
}

/// An event's row: at, action, actor, whom it was for, changes.
type EventRow = (DateTime<Utc>, String, String, Option<String>, Value);

/// A booking's events, oldest first.
pub async fn list(conn: &mut Conn, reservation_id: i64) -> QueryResult<Vec<Event>> {
    let rows: Vec<EventRow> = booking_event::table
        .filter(booking_event::reservation_id.eq(reservation_id))
        .order(booking_event::id)
        .select((
            booking_event::at,
            booking_event::action,
            booking_event::actor,
            booking_event::actor_for,
            booking_event::changes,
        ))
        .load(conn)
        .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(at, action, actor, on_behalf_of, changes)| {
            Some(Event { at, action: Action::parse(&action)?, actor, on_behalf_of, changes })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_keep_only_what_changed() {
        let c = Changes::new().diff("title", "a", "a").diff("startsAt", 1, 2).set("status", "CONFIRMED");
        assert_eq!(
            c.into_value(),
            json!({"startsAt": {"before": 1, "after": 2}, "status": {"before": null, "after": "CONFIRMED"}})
        );
        assert_eq!(Action::parse("checked_in"), Some(Action::CheckedIn));
    }
}
