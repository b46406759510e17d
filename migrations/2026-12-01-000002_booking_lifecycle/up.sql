-- The life of a booking (SPEC §9, §11, §12): a status, series occurrences,
-- check-in and release, approval, and a history written in the same
-- transaction as each change.

-- A recurring series: each occurrence is a normal reservation with series_id,
-- so every rule, check and route applies to it.
CREATE TABLE booking_series (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    title              text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    organizer_name     text NOT NULL CHECK (length(organizer_name) BETWEEN 1 AND 200),
    organizer_digest   text NOT NULL,
    organizer_staff_id bigint REFERENCES staff_user (id),
    rooms              text[] NOT NULL CHECK (cardinality(rooms) >= 1),
    -- RFC 5545 RRULE value as given (without `RRULE:`), computed in `timezone`.
    recurrence         text NOT NULL CHECK (length(recurrence) BETWEEN 1 AND 500),
    starts_at          timestamptz NOT NULL,
    ends_at            timestamptz NOT NULL,
    timezone           text NOT NULL,
    version            integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    CONSTRAINT booking_series_time_order CHECK (ends_at > starts_at)
);

ALTER TABLE reservation
    ADD COLUMN status text NOT NULL DEFAULT 'CONFIRMED'
        CHECK (status IN ('CONFIRMED', 'PENDING', 'CANCELLED', 'REJECTED', 'RELEASED')),
    ADD COLUMN series_id bigint REFERENCES booking_series (id),
    -- The occurrence's start as the series computed it (its RECURRENCE-ID).
    ADD COLUMN occurrence_start timestamptz,
    -- Changed or cancelled through the booking routes: series edits leave it alone.
    ADD COLUMN is_exception boolean NOT NULL DEFAULT false,
    ADD COLUMN organizer_staff_id bigint REFERENCES staff_user (id),
    ADD COLUMN check_in_required boolean NOT NULL DEFAULT false,
    ADD COLUMN checked_in_at timestamptz,
    ADD COLUMN released_at timestamptz,
    ADD COLUMN decided_at timestamptz,
    ADD COLUMN decision_reason text CHECK (decision_reason IS NULL OR length(decision_reason) <= 500);

UPDATE reservation SET status = 'CANCELLED' WHERE cancelled_at IS NOT NULL;

ALTER TABLE reservation
    ADD CONSTRAINT reservation_cancelled_state CHECK ((status = 'CANCELLED') = (cancelled_at IS NOT NULL)),
    ADD CONSTRAINT reservation_released_state CHECK ((status = 'RELEASED') = (released_at IS NOT NULL)),
    ADD CONSTRAINT reservation_series_occurrence CHECK ((series_id IS NULL) = (occurrence_start IS NULL));

CREATE INDEX reservation_series_idx ON reservation (series_id, occurrence_start) WHERE series_id IS NOT NULL;
-- Quota and "my bookings": an organizer's live bookings by end.
CREATE INDEX reservation_organizer_live_idx ON reservation (organizer_digest, ends_at)
    WHERE status IN ('CONFIRMED', 'PENDING');
CREATE INDEX reservation_pending_idx ON reservation (created_at) WHERE status = 'PENDING';
-- The sweeper's no-show scan: confirmed check-in bookings not checked in, by start.
CREATE INDEX reservation_check_in_due_idx ON reservation (starts_at)
    WHERE check_in_required AND status = 'CONFIRMED' AND checked_in_at IS NULL;
CREATE INDEX reservation_staff_idx ON reservation (organizer_staff_id, starts_at) WHERE organizer_staff_id IS NOT NULL;

-- One row per change of a booking, in the transaction of the change.
CREATE TABLE booking_event (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    reservation_id bigint NOT NULL REFERENCES reservation (id) ON DELETE CASCADE,
    at             timestamptz NOT NULL,
    action         text NOT NULL CHECK (action IN ('created', 'moved', 'retitled', 'cancelled', 'checked_in',
                                                   'released', 'approved', 'rejected')),
    actor          text NOT NULL CHECK (length(actor) BETWEEN 1 AND 200),
    changes        jsonb NOT NULL
);

CREATE INDEX booking_event_reservation_idx ON booking_event (reservation_id, id);

INSERT INTO booking_event (reservation_id, at, action, actor, changes)
SELECT id, created_at, 'created', organizer_name,
       jsonb_build_object('title', jsonb_build_object('after', title),
                          'startsAt', jsonb_build_object('after', starts_at),
                          'endsAt', jsonb_build_object('after', ends_at))
  FROM reservation;

-- Booking notifications go through the same outbox as the capacity ones.
ALTER TABLE notification_outbox DROP CONSTRAINT notification_outbox_kind_check;
ALTER TABLE notification_outbox ADD CONSTRAINT notification_outbox_kind_check CHECK (kind IN (
    'offer.created', 'offer.expired', 'hold.expired',
    'booking.created', 'booking.moved', 'booking.cancelled', 'booking.approved', 'booking.rejected',
    'booking.released', 'booking.reminder'));
