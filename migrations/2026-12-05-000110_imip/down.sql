DELETE FROM notification_outbox WHERE kind IN ('imip.request', 'imip.cancel', 'imip.reply');
ALTER TABLE notification_outbox DROP CONSTRAINT notification_outbox_kind_check;
ALTER TABLE notification_outbox ADD CONSTRAINT notification_outbox_kind_check CHECK (kind IN (
    'offer.created', 'offer.expired', 'hold.expired', 'waitlist.expired', 'waitlist.evicted',
    'booking.created', 'booking.moved', 'booking.cancelled', 'booking.approved', 'booking.rejected',
    'booking.released', 'booking.reminder'));
