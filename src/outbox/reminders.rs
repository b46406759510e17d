//! Reminder deliveries (SPEC §10): `booking-{id}-v{version}-reminder` for
//! confirmed bookings starting within the reminder window whose organizer
//! has an email — one set-based INSERT whose primary key makes it
//! idempotent: not again after a restart, not twice with two processes, a
//! fresh one after a move (a new version), none after a cancel (the booking
//! is no longer confirmed, and its pending reminder was withdrawn in the
//! cancelling transaction). The sweeper enqueues every due one each tick;
//! a booking created or moved inside the window gets its own at once, in
//! the changing transaction.

use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{Array, Int8, Nullable, Timestamptz};
use diesel_async::RunQueryDsl;

use crate::db::cached::CacheExt;
use crate::db::Conn;

/// Enqueues the due reminders of every booking, or of `only` these; returns
/// how many were new.
pub async fn enqueue(
    conn: &mut Conn,
    now: DateTime<Utc>,
    ahead: Duration,
    only: Option<&[i64]>,
) -> diesel::QueryResult<usize> {
    diesel::sql_query(
        "INSERT INTO notification_outbox (delivery_id, channel, kind, payload, status, next_attempt_at, created_at)
         SELECT 'booking-' || r.id || '-v' || r.version || '-reminder', 'mail', 'booking.reminder',
                jsonb_build_object('bookingId', r.id, 'version', r.version, 'action', 'reminder', 'status', r.status,
                                   'title', r.title, 'organizer', r.organizer_name,
                                   'organizerStaffId', r.organizer_staff_id,
                                   'rooms', (SELECT coalesce(jsonb_agg(x.room ORDER BY m.position, m.code), '[]')
                                               FROM reservation_room x JOIN room m ON m.code = x.room
                                              WHERE x.reservation_id = r.id),
                                   'startsAt', r.starts_at, 'endsAt', r.ends_at, 'seriesId', r.series_id,
                                   'to', s.email, 'toName', s.display_name, 'language', s.language,
                                   'roomNames', (SELECT coalesce(jsonb_object_agg(m.code, m.name), '{}')
                                                   FROM reservation_room x JOIN room m ON m.code = x.room
                                                  WHERE x.reservation_id = r.id)),
                'PENDING', $1, $1
           FROM reservation r
           JOIN staff_user s ON s.id = r.organizer_staff_id AND s.email IS NOT NULL
          WHERE r.status = 'CONFIRMED' AND r.starts_at > $1 AND r.starts_at <= $1 + make_interval(secs => $2)
            AND ($3::int8[] IS NULL OR r.id = ANY($3))
         ON CONFLICT DO NOTHING",
    )
    .bind::<Timestamptz, _>(now)
    .bind::<Int8, _>(ahead.num_seconds())
    .bind::<Nullable<Array<Int8>>, _>(only)
    .cached()
    .execute(conn)
    .await
}
