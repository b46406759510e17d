//! Invariant checks that must always find 0 rows (SPEC §2; later issues add
//! theirs). Each check is one SQL query returning the offending rows as JSON;
//! the admin API and the admin page show the same list.

use diesel::sql_types::{BigInt, Jsonb};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use serde::Serialize;

use crate::db::{Conn, DbError};

/// How many offending rows a check shows.
const SAMPLE_LIMIT: i64 = 20;

pub struct Check {
    pub name: &'static str,
    pub description: &'static str,
    /// A query whose rows are the violations.
    pub violations_sql: &'static str,
}

pub const CHECKS: &[Check] = &[
    Check {
        name: "reservation_room_copy_mismatch",
        description: "room copies whose starts_at, ends_at or active differ from their reservation (active = confirmed, pending or released)",
        violations_sql: "SELECT s.reservation_id, s.room, s.starts_at AS copy_starts_at, r.starts_at,
                                s.ends_at AS copy_ends_at, r.ends_at, s.active, r.cancelled_at
                           FROM reservation r JOIN reservation_room s ON s.reservation_id = r.id
                          WHERE s.starts_at <> r.starts_at OR s.ends_at <> r.ends_at
                             OR s.active <> (r.status IN ('CONFIRMED', 'PENDING', 'RELEASED'))",
    },
    Check {
        name: "reservation_without_rooms",
        description: "reservations that hold no room rows",
        violations_sql: "SELECT r.id, r.title, r.starts_at, r.ends_at FROM reservation r
                          WHERE NOT EXISTS (SELECT 1 FROM reservation_room s WHERE s.reservation_id = r.id)",
    },
    Check {
        name: "booking_without_created_event",
        description: "bookings whose history does not start with exactly one `created` event",
        violations_sql: "SELECT r.id, r.title, count(e.id) AS created_events FROM reservation r
                           LEFT JOIN booking_event e ON e.reservation_id = r.id AND e.action = 'created'
                          GROUP BY r.id HAVING count(e.id) <> 1",
    },
    Check {
        name: "booking_on_retired_room",
        description: "live bookings still holding time in a retired room after its retirement",
        violations_sql: "SELECT s.reservation_id, s.room, s.starts_at, rm.retired_at FROM reservation_room s
                           JOIN room rm ON rm.code = s.room
                          WHERE s.active AND NOT rm.active AND s.ends_at > rm.retired_at",
    },
    Check {
        name: "capacity_occupied_mismatch",
        description: "resources whose occupied_count differs from the units of their HELD and CONFIRMED holds plus ACTIVE offers",
        violations_sql: "SELECT r.id, r.code, r.occupied_count,
                                COALESCE(h.units, 0) + COALESCE(o.units, 0) AS counted_units
                           FROM capacity_resource r
                           LEFT JOIN (SELECT resource_id, sum(quantity) AS units FROM capacity_hold
                                       WHERE state IN ('HELD', 'CONFIRMED') GROUP BY resource_id) h ON h.resource_id = r.id
                           LEFT JOIN (SELECT resource_id, sum(quantity) AS units FROM capacity_offer
                                       WHERE state = 'ACTIVE' GROUP BY resource_id) o ON o.resource_id = r.id
                          WHERE r.occupied_count <> COALESCE(h.units, 0) + COALESCE(o.units, 0)",
    },
    Check {
        name: "capacity_waiting_count_mismatch",
        description: "resources whose waiting_count differs from their WAITING entries",
        violations_sql: "SELECT r.id, r.code, r.waiting_count, count(e.id) AS waiting_entries
                           FROM capacity_resource r
                           LEFT JOIN waitlist_entry e ON e.resource_id = r.id AND e.state = 'WAITING'
                          GROUP BY r.id HAVING r.waiting_count <> count(e.id)",
    },
    Check {
        name: "entry_with_several_active_offers",
        description: "waitlist entries with more than one ACTIVE offer",
        violations_sql: "SELECT entry_id, count(*) AS active_offers FROM capacity_offer
                          WHERE state = 'ACTIVE' GROUP BY entry_id HAVING count(*) > 1",
    },
    Check {
        name: "offer_entry_state_mismatch",
        description: "offers whose state disagrees with their entry (ACTIVE/OFFERED, ACCEPTED, DECLINED, EXPIRED)",
        violations_sql: "SELECT o.id AS offer_id, o.state AS offer_state, e.id AS entry_id, e.state AS entry_state
                           FROM capacity_offer o JOIN waitlist_entry e ON e.id = o.entry_id
                          WHERE (o.state = 'ACTIVE') <> (e.state = 'OFFERED') OR (o.state <> 'ACTIVE' AND o.state <> e.state)",
    },
    Check {
        name: "waiting_ahead_of_offered",
        description: "WAITING entries queued ahead of an entry that was offered units (FIFO passed over)",
        violations_sql: "SELECT w.id AS waiting_entry, w.sequence AS waiting_sequence, o.id AS offered_entry, o.sequence AS offered_sequence
                           FROM waitlist_entry w JOIN waitlist_entry o
                             ON o.resource_id = w.resource_id AND o.state = 'OFFERED' AND w.sequence < o.sequence
                          WHERE w.state = 'WAITING'",
    },
    Check {
        name: "idempotency_stale_in_progress",
        description: "idempotency claims still IN_PROGRESS ten minutes after their lease ran out (a crashed two-phase command; a retry takes it over)",
        violations_sql: "SELECT tenant, operation, owner_token, lease_expires_at, created_at FROM idempotency_record
                          WHERE state = 'IN_PROGRESS' AND lease_expires_at < $STALE_LEASE_BEFORE",
    },
    Check {
        name: "outbox_exhausted",
        description: "notifications that gave up after their last attempt (re-drive them once the receiver is back)",
        violations_sql: "SELECT delivery_id, kind, attempt_count, last_error, created_at
                           FROM notification_outbox WHERE status = 'EXHAUSTED'",
    },
    Check {
        name: "overdue_holds",
        description: "HELD holds past their expiry by more than two sweep intervals (is the sweeper running?)",
        violations_sql: "SELECT id, resource_id, expires_at FROM capacity_hold
                          WHERE state = 'HELD' AND expires_at < $OVERDUE_BEFORE",
    },
    Check {
        name: "overdue_offers",
        description: "ACTIVE offers past their expiry by more than two sweep intervals (is the sweeper running?)",
        violations_sql: "SELECT id, resource_id, entry_id, expires_at FROM capacity_offer
                          WHERE state = 'ACTIVE' AND expires_at < $OVERDUE_BEFORE",
    },
];

/// Instants the time-dependent checks compare against (from the app clock).
#[derive(Debug, Clone, Copy)]
pub struct CheckContext {
    /// Due items older than this are overdue: now minus two sweep intervals.
    pub overdue_before: chrono::DateTime<chrono::Utc>,
    /// Claims whose lease ended before this are stale: now minus ten minutes.
    pub stale_lease_before: chrono::DateTime<chrono::Utc>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CheckResult {
    pub name: &'static str,
    pub description: &'static str,
    pub count: i64,
    pub samples: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Report {
    pub ok: bool,
    pub checks: Vec<CheckResult>,
}

#[derive(QueryableByName)]
struct Counted {
    #[diesel(sql_type = BigInt)]
    count: i64,
    #[diesel(sql_type = Jsonb)]
    samples: serde_json::Value,
}

/// Runs every check in one read-only snapshot.
pub async fn run(conn: &mut Conn, ctx: CheckContext) -> Result<Report, DbError> {
    crate::db::begin_snapshot(conn).await?;
    let checks = run_checks(conn, ctx).await;
    let checks = crate::db::finish(conn, checks).await?;
    Ok(Report { ok: checks.iter().all(|c| c.count == 0), checks })
}

async fn run_checks(conn: &mut Conn, ctx: CheckContext) -> diesel::QueryResult<Vec<CheckResult>> {
    let mut out = Vec::with_capacity(CHECKS.len());
    // Our own clock's instant as a literal: no request input reaches this SQL.
    let overdue_before = format!("'{}'::timestamptz", ctx.overdue_before.to_rfc3339());
    for check in CHECKS {
        let violations = check
            .violations_sql
            .replace("$OVERDUE_BEFORE", &overdue_before)
            .replace("$STALE_LEASE_BEFORE", &format!("'{}'::timestamptz", ctx.stale_lease_before.to_rfc3339()));
        let sql = format!(
            "SELECT count(*) AS count,
                    COALESCE(jsonb_agg(to_jsonb(v) - 'rn') FILTER (WHERE v.rn <= {SAMPLE_LIMIT}), '[]'::jsonb) AS samples
               FROM (SELECT x.*, row_number() OVER () AS rn FROM ({violations}) x) v"
        );
        let row: Counted = diesel::sql_query(sql).get_result(conn).await?;
        let samples = match row.samples {
            serde_json::Value::Array(items) => items,
            _ => Vec::new(),
        };
        out.push(CheckResult { name: check.name, description: check.description, count: row.count, samples });
    }
    Ok(out)
}
