//! The invariant checks (SPEC §2, §3, §4, §6, §8, §9, §12): each one SQL query
//! whose rows are the violations; `super::run` counts them and shows samples.
//! docs/RELIABILITY.md names, for each, the test that makes it fire.
//!
//! Invariants the schema holds are not checked here: a query can never find
//! what the database refuses to store. They are guarded by these constraints
//! (each with a test in `tests/api/consistency_guards.rs` that it refuses the
//! violation):
//!
//! * one offer per waitlist entry, so never two ACTIVE offers for one entry —
//!   `capacity_offer_entry_id_key` (UNIQUE `capacity_offer.entry_id`; this
//!   replaced the check `entry_with_several_active_offers`);
//! * an offer is for its entry's resource, owner and units —
//!   `capacity_offer_matches_entry` (foreign key onto
//!   `waitlist_entry_offer_terms`);
//! * occupied units within capacity — `capacity_resource_occupied_within_capacity`;
//!   a HELD hold expires — `capacity_hold_held_expires`; an ACCEPTED offer
//!   names its hold — `capacity_offer_accepted_has_hold`;
//! * one live waitlist entry per owner and resource —
//!   `waitlist_entry_one_live_per_owner`; FIFO sequences unique per resource —
//!   `waitlist_entry_fifo`;
//! * no two active bookings overlap in a room — `reservation_room_no_overlap`;
//! * CANCELLED ⇔ `cancelled_at`, RELEASED ⇔ `released_at`, a series
//!   occurrence ⇔ its `occurrence_start` — `reservation_cancelled_state`,
//!   `reservation_released_state`, `reservation_series_occurrence`;
//! * only a decision rejects, a reason belongs to a decision —
//!   `reservation_rejected_was_decided`, `reservation_reason_has_decision`;
//! * only a confirmed check-in booking is checked in, only a no-show is
//!   released — `reservation_checked_in_needs_check_in`,
//!   `reservation_released_was_no_show`;
//! * a completed idempotency record has its answer —
//!   `idempotency_completed_has_response`.

use super::{Check, Pass, Reading};

/// One pass over the whole history for its three checks: per booking, the
/// number of events and of `created` events, whether a `created` event
/// records a status, and the latest status event as `[id, action, status
/// after]`. Ids are zero-padded so the text arrays' `max` is the latest
/// event (ids grow with time), which spares a sort or a lookup per
/// booking: at 3,000,000 bookings the three checks read the history once
/// instead of three times (docs/PERFORMANCE.md "Campus"). The inner
/// subquery, kept apart by `OFFSET 0`, takes each event's `status` out of
/// its `changes` once (inlined, the three uses parsed it three times: 10.6
/// s against 7.3 s) and keeps the plan serial: a parallel plan had every
/// worker aggregate the whole history again (11.6 s). `$SLICE` keeps one
/// range of booking ids (`super::Half`): the two connections each read
/// half of the history.
pub const HISTORY: Pass = Pass {
    rows_sql: "SELECT r.id, r.title, r.status, r.version,
                      COALESCE(h.created_events, 0) AS created_events, COALESCE(h.events, 0) AS events,
                      COALESCE(h.created_with_status, false) AS created_with_status, h.last_status
                 FROM reservation r
                 LEFT JOIN (SELECT reservation_id,
                                   count(*) FILTER (WHERE action = 'created') AS created_events,
                                   count(*) AS events,
                                   bool_or(action = 'created' AND status IS NOT NULL) AS created_with_status,
                                   max(ARRAY[lpad(id::text, 19, '0'), action, status ->> 'after'])
                                       FILTER (WHERE status IS NOT NULL) AS last_status
                              FROM (SELECT reservation_id, id, action, changes -> 'status' AS status
                                      FROM booking_event WHERE reservation_id $SLICE
                                     ORDER BY reservation_id OFFSET 0) e
                             GROUP BY reservation_id) h ON h.reservation_id = r.id
                WHERE r.id $SLICE",
};

pub const CHECKS: &[Check] = &[
    Check {
        name: "reservation_room_copy_mismatch",
        description: "room copies whose starts_at, ends_at or active differ from their reservation (active = confirmed, pending or released)",
        reading: Reading::Query(concat!(
            "SELECT s.reservation_id, s.room, s.starts_at AS copy_starts_at, r.starts_at,
                    s.ends_at AS copy_ends_at, r.ends_at, s.active, r.cancelled_at
               FROM reservation r JOIN reservation_room s ON s.reservation_id = r.id
              WHERE s.starts_at <> r.starts_at OR s.ends_at <> r.ends_at
                 OR s.active <> (r.status IN ",
            crate::occupied_statuses!(),
            ")"
        )),
    },
    Check {
        name: "reservation_without_rooms",
        description: "reservations that hold no room rows",
        reading: Reading::Query("SELECT r.id, r.title, r.starts_at, r.ends_at FROM reservation r
                          WHERE NOT EXISTS (SELECT 1 FROM reservation_room s WHERE s.reservation_id = r.id)"),
    },
    Check {
        name: "booking_without_created_event",
        description: "bookings whose history does not start with exactly one `created` event",
        reading: Reading::InPass {
            pass: &HISTORY,
            violation: "created_events <> 1",
            shows: "'id', id, 'title', title, 'created_events', created_events",
        },
    },
    // Every change adds 1 to `version` and writes one event in its own
    // transaction (rooms::events), so events = version. Bookings older than
    // the history (their `created` event, written by the migration, records
    // no status) may only not have more events than changes.
    Check {
        name: "booking_version_differs_from_history",
        description: "bookings whose number of history events differs from their version (a change without its event, or an event without its change)",
        reading: Reading::InPass {
            pass: &HISTORY,
            violation: "events > 0 AND version <> events AND (events > version OR created_with_status)",
            shows: "'id', id, 'title', title, 'version', version, 'events', events",
        },
    },
    // Each status change records `status` before/after (created, moved into
    // PENDING again, cancelled, released, approved, rejected), so the latest
    // such event names the current status. This is the sound form of "no
    // PENDING booking in a room without approval": a room's approval can be
    // switched off while bookings wait, and those stay PENDING.
    Check {
        name: "booking_status_differs_from_history",
        description: "bookings whose status is not the one their latest status event recorded (e.g. PENDING though created CONFIRMED, CANCELLED without a `cancelled` event)",
        reading: Reading::InPass {
            pass: &HISTORY,
            violation: "last_status IS NOT NULL AND status IS DISTINCT FROM last_status[3]",
            shows: "'id', id, 'title', title, 'status', status, 'last_status_event', last_status[2], 'history_status', last_status[3]",
        },
    },
    Check {
        name: "booking_on_retired_room",
        description: "live bookings still holding time in a retired room after its retirement",
        reading: Reading::Query("SELECT s.reservation_id, s.room, s.starts_at, rm.retired_at FROM reservation_room s
                           JOIN room rm ON rm.code = s.room
                          WHERE s.active AND NOT rm.active AND s.ends_at > rm.retired_at"),
    },
    // `occurrence_start` (the RECURRENCE-ID) never changes; the series row's
    // start is the first occurrence, whose local time (never its date) a
    // series edit may change, hence dates in the series' zone. DTSTART is
    // an occurrence even when UNTIL lies before it (RFC 5545), so the first
    // date is never "after UNTIL". COUNT bounds how many rows a series has
    // (skipped dates have none).
    Check {
        name: "series_occurrence_outside_rule",
        description: "series occurrences dated before the series' first occurrence, after its UNTIL, or beyond its COUNT",
        reading: Reading::Query("WITH s AS (
                             SELECT id, starts_at, recurrence, timezone,
                                    (starts_at AT TIME ZONE timezone)::date AS first_date,
                                    substring(upper(recurrence) FROM 'COUNT=([0-9]+)')::bigint AS count_limit,
                                    substring(upper(recurrence) FROM 'UNTIL=([0-9]{8}(T[0-9]{6}Z?)?)') AS until_text
                               FROM booking_series),
                         bounds AS (
                             SELECT s.*,
                                    CASE WHEN until_text IS NULL THEN NULL
                                         WHEN length(until_text) = 8
                                              THEN (to_date(until_text, 'YYYYMMDD') + time '23:59:59') AT TIME ZONE timezone
                                         ELSE (to_date(left(until_text, 8), 'YYYYMMDD') + substr(until_text, 10, 6)::time)
                                              AT TIME ZONE (CASE WHEN until_text LIKE '%Z' THEN 'UTC' ELSE timezone END)
                                    END AS until_at
                               FROM s),
                         occ AS (
                             SELECT r.id AS reservation_id, r.series_id, r.occurrence_start,
                                    b.starts_at AS series_starts_at, b.recurrence, b.first_date, b.until_at, b.count_limit,
                                    (r.occurrence_start AT TIME ZONE b.timezone)::date AS occurrence_date,
                                    row_number() OVER (PARTITION BY r.series_id ORDER BY r.occurrence_start, r.id) AS nth
                               FROM reservation r JOIN bounds b ON b.id = r.series_id)
                         SELECT reservation_id, series_id, occurrence_start, series_starts_at, recurrence,
                                CASE WHEN occurrence_date < first_date THEN 'before the first occurrence'
                                     WHEN occurrence_date > first_date AND occurrence_start > until_at THEN 'after UNTIL'
                                     ELSE 'beyond COUNT' END AS reason
                           FROM occ
                          WHERE occurrence_date < first_date
                             OR (occurrence_date > first_date AND occurrence_start > until_at)
                             OR nth > count_limit"),
    },
    Check {
        name: "capacity_occupied_mismatch",
        description: "resources whose occupied_count differs from the units of their HELD and CONFIRMED holds plus ACTIVE offers",
        reading: Reading::Query("SELECT r.id, r.code, r.occupied_count,
                                COALESCE(h.units, 0) + COALESCE(o.units, 0) AS counted_units
                           FROM capacity_resource r
                           LEFT JOIN (SELECT resource_id, sum(quantity) AS units FROM capacity_hold
                                       WHERE state IN ('HELD', 'CONFIRMED') GROUP BY resource_id) h ON h.resource_id = r.id
                           LEFT JOIN (SELECT resource_id, sum(quantity) AS units FROM capacity_offer
                                       WHERE state = 'ACTIVE' GROUP BY resource_id) o ON o.resource_id = r.id
                          WHERE r.occupied_count <> COALESCE(h.units, 0) + COALESCE(o.units, 0)"),
    },
    Check {
        name: "capacity_waiting_count_mismatch",
        description: "resources whose waiting_count differs from their WAITING entries",
        reading: Reading::Query("SELECT r.id, r.code, r.waiting_count, count(e.id) AS waiting_entries
                           FROM capacity_resource r
                           LEFT JOIN waitlist_entry e ON e.resource_id = r.id AND e.state = 'WAITING'
                          GROUP BY r.id HAVING r.waiting_count <> count(e.id)"),
    },
    Check {
        name: "offer_entry_state_mismatch",
        description: "offers whose state disagrees with their entry (ACTIVE/OFFERED, ACCEPTED, DECLINED, EXPIRED)",
        reading: Reading::Query("SELECT o.id AS offer_id, o.state AS offer_state, e.id AS entry_id, e.state AS entry_state
                           FROM capacity_offer o JOIN waitlist_entry e ON e.id = o.entry_id
                          WHERE (o.state = 'ACTIVE') <> (e.state = 'OFFERED') OR (o.state <> 'ACTIVE' AND o.state <> e.state)"),
    },
    Check {
        name: "waiting_ahead_of_offered",
        description: "WAITING entries queued ahead of an entry that was offered units (FIFO passed over)",
        reading: Reading::Query("SELECT w.id AS waiting_entry, w.sequence AS waiting_sequence, o.id AS offered_entry, o.sequence AS offered_sequence
                           FROM waitlist_entry w JOIN waitlist_entry o
                             ON o.resource_id = w.resource_id AND o.state = 'OFFERED' AND w.sequence < o.sequence
                          WHERE w.state = 'WAITING'"),
    },
    Check {
        name: "idempotency_stale_in_progress",
        description: "idempotency claims still IN_PROGRESS ten minutes after their lease ran out (a crashed two-phase command; a retry takes it over)",
        reading: Reading::Query("SELECT tenant, operation, owner_token, lease_expires_at, created_at FROM idempotency_record
                          WHERE state = 'IN_PROGRESS' AND lease_expires_at < $STALE_LEASE_BEFORE"),
    },
    Check {
        name: "outbox_exhausted",
        description: "notifications that gave up after their last attempt (re-drive them once the receiver is back)",
        reading: Reading::Query("SELECT delivery_id, kind, attempt_count, last_error, created_at
                           FROM notification_outbox WHERE status = 'EXHAUSTED'"),
    },
    Check {
        name: "overdue_holds",
        description: "HELD holds past their expiry by more than two sweep intervals (is the sweeper running?)",
        reading: Reading::Query("SELECT id, resource_id, expires_at FROM capacity_hold
                          WHERE state = 'HELD' AND expires_at < $OVERDUE_BEFORE"),
    },
    Check {
        name: "overdue_offers",
        description: "ACTIVE offers past their expiry by more than two sweep intervals (is the sweeper running?)",
        reading: Reading::Query("SELECT id, resource_id, entry_id, expires_at FROM capacity_offer
                          WHERE state = 'ACTIVE' AND expires_at < $OVERDUE_BEFORE"),
    },
];
