-- Calendar apps' mail (SPEC §23, iMIP): invitations and cancellations to a
-- person's colleagues and the rooms' replies are written whole when the
-- event is stored (`mail::prepared`) and queued beside the booking notices.
ALTER TABLE notification_outbox DROP CONSTRAINT notification_outbox_kind_check;
ALTER TABLE notification_outbox ADD CONSTRAINT notification_outbox_kind_check CHECK (kind IN (
    'offer.created', 'offer.expired', 'hold.expired', 'waitlist.expired', 'waitlist.evicted',
    'booking.created', 'booking.moved', 'booking.cancelled', 'booking.approved', 'booking.rejected',
    'booking.released', 'booking.reminder', 'imip.request', 'imip.cancel', 'imip.reply'));
