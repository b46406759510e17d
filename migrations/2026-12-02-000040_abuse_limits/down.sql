DROP INDEX staff_login_throttle_window_idx;
DROP INDEX staff_session_expires_idx;
DROP INDEX notification_attempt_attempted_idx;
DROP INDEX notification_outbox_delivered_idx;
DROP INDEX notification_outbox_exhausted_idx;
DELETE FROM notification_outbox WHERE kind IN ('waitlist.expired', 'waitlist.evicted');
ALTER TABLE notification_outbox DROP CONSTRAINT notification_outbox_kind_check;
ALTER TABLE notification_outbox ADD CONSTRAINT notification_outbox_kind_check CHECK (kind IN (
    'offer.created', 'offer.expired', 'hold.expired',
    'booking.created', 'booking.moved', 'booking.cancelled', 'booking.approved', 'booking.rejected',
    'booking.released', 'booking.reminder'));
DROP INDEX waitlist_entry_waiting_since_idx;
DROP INDEX waitlist_entry_one_live_per_owner;
