DELETE FROM booking_event WHERE action = 'restored';
ALTER TABLE booking_event DROP CONSTRAINT booking_event_action_check;
ALTER TABLE booking_event ADD CONSTRAINT booking_event_action_check CHECK (action IN (
    'created', 'moved', 'retitled', 'cancelled', 'checked_in', 'released', 'approved', 'rejected'));
DELETE FROM notification_outbox WHERE kind = 'series.struck';
ALTER TABLE notification_outbox DROP CONSTRAINT notification_outbox_kind_check;
ALTER TABLE notification_outbox ADD CONSTRAINT notification_outbox_kind_check CHECK (kind IN (
    'offer.created', 'offer.expired', 'hold.expired', 'waitlist.expired', 'waitlist.evicted',
    'booking.created', 'booking.moved', 'booking.cancelled', 'booking.approved', 'booking.rejected',
    'booking.released', 'booking.reminder', 'imip.request', 'imip.cancel', 'imip.reply'));
ALTER TABLE reservation DROP CONSTRAINT reservation_released_until_after_end;
ALTER TABLE reservation DROP COLUMN released_until;
ALTER TABLE booking_series DROP COLUMN restored_at;
ALTER TABLE booking_series DROP COLUMN struck_at;
ALTER TABLE booking_event DROP COLUMN actor_for;
ALTER TABLE booking_series DROP COLUMN booked_by;
ALTER TABLE reservation DROP COLUMN booked_by;
DROP TABLE delegation;
