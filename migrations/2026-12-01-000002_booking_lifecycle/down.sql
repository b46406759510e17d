DELETE FROM notification_outbox WHERE kind LIKE 'booking.%';
ALTER TABLE notification_outbox DROP CONSTRAINT notification_outbox_kind_check;
ALTER TABLE notification_outbox ADD CONSTRAINT notification_outbox_kind_check
    CHECK (kind IN ('offer.created', 'offer.expired', 'hold.expired'));
DROP TABLE booking_event;
DELETE FROM reservation WHERE status IN ('REJECTED', 'RELEASED');
ALTER TABLE reservation
    DROP CONSTRAINT reservation_cancelled_state,
    DROP CONSTRAINT reservation_released_state,
    DROP CONSTRAINT reservation_series_occurrence,
    DROP COLUMN status, DROP COLUMN series_id, DROP COLUMN occurrence_start, DROP COLUMN is_exception,
    DROP COLUMN organizer_staff_id, DROP COLUMN check_in_required, DROP COLUMN checked_in_at,
    DROP COLUMN released_at, DROP COLUMN decided_at, DROP COLUMN decision_reason;
DROP TABLE booking_series;
