-- People (SPEC §25): delegates who book for a person, who booked a booking,
-- history naming whom a change was made for, a series struck for repeated
-- no-shows and restored, and the end a no-show release gave back.

-- `delegate` may book, change and cancel for `person`. A removal is a DELETE,
-- which waits for every transaction acting on the delegation (they hold the
-- row FOR KEY SHARE), so a removed delegate changes nothing afterwards.
CREATE TABLE delegation (
    person     bigint NOT NULL REFERENCES staff_user (id) ON DELETE CASCADE,
    delegate   bigint NOT NULL REFERENCES staff_user (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (person, delegate),
    CONSTRAINT delegation_not_self CHECK (person <> delegate)
);
CREATE INDEX delegation_delegate_idx ON delegation (delegate);

-- The delegate who made a booking (null when the organizer did).
ALTER TABLE reservation ADD COLUMN booked_by bigint REFERENCES staff_user (id);
ALTER TABLE booking_series ADD COLUMN booked_by bigint REFERENCES staff_user (id);

-- The person a change was made for by their delegate ("{actor} for {actor_for}").
ALTER TABLE booking_event ADD COLUMN actor_for text;

-- Strikes: set when the sweeper cancels the series for repeated no-shows,
-- cleared by a restore, which starts the count afresh.
ALTER TABLE booking_series ADD COLUMN struck_at timestamptz;
ALTER TABLE booking_series ADD COLUMN restored_at timestamptz;

-- The end a no-show release cut away (its released time is [ends_at, released_until)).
ALTER TABLE reservation ADD COLUMN released_until timestamptz;
UPDATE reservation r
   SET released_until = (e.changes -> 'endsAt' ->> 'before')::timestamptz
  FROM booking_event e
 WHERE e.reservation_id = r.id AND e.action = 'released' AND r.status = 'RELEASED'
   AND e.changes ? 'endsAt';
ALTER TABLE reservation ADD CONSTRAINT reservation_released_until_after_end
    CHECK (released_until IS NULL OR released_until >= ends_at);

-- The strike mail (SPEC §25) joins the outbox's kinds.
ALTER TABLE notification_outbox DROP CONSTRAINT notification_outbox_kind_check;
ALTER TABLE notification_outbox ADD CONSTRAINT notification_outbox_kind_check CHECK (kind IN (
    'offer.created', 'offer.expired', 'hold.expired', 'waitlist.expired', 'waitlist.evicted',
    'booking.created', 'booking.moved', 'booking.cancelled', 'booking.approved', 'booking.rejected',
    'booking.released', 'booking.reminder', 'imip.request', 'imip.cancel', 'imip.reply', 'series.struck'));

-- A restore's history action (SPEC §25).
ALTER TABLE booking_event DROP CONSTRAINT booking_event_action_check;
ALTER TABLE booking_event ADD CONSTRAINT booking_event_action_check CHECK (action IN (
    'created', 'moved', 'retitled', 'cancelled', 'checked_in', 'released', 'approved', 'rejected', 'restored'));
