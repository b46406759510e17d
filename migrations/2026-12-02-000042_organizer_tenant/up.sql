-- The tenant of the API key a booking was made through (SPEC §20, issue 26):
-- pages show such a booking as `{organizerName} · {tenant}`, never as if a
-- staff member made it. NULL for bookings of people and door displays.
ALTER TABLE reservation ADD COLUMN organizer_tenant text
    CHECK (organizer_tenant ~ '^[A-Za-z0-9._-]{1,64}$');

-- Bookings made before: an API key's `created` event names its tenant as
-- the actor. Only events written by the booking code (they record the status;
-- the ones the lifecycle migration made up name the organizer instead), of
-- bookings without a person, by an actor that can be a tenant; the rest stay
-- NULL.
UPDATE reservation r
   SET organizer_tenant = e.actor
  FROM booking_event e
 WHERE e.reservation_id = r.id
   AND e.action = 'created'
   AND e.changes ? 'status'
   AND r.organizer_staff_id IS NULL
   AND e.actor ~ '^[A-Za-z0-9._-]{1,64}$'
   AND e.actor NOT IN ('staff', 'display', 'system');
