-- Calendars and mail (SPEC §10). Staff may have an email address; their
-- calendar feed token is derived from YEYAK_SECRET_KEY and this generation
-- (nothing of it is stored; rotating bumps the generation, which ends the
-- old token at once).
ALTER TABLE staff_user
    ADD COLUMN email text CHECK (email IS NULL OR (length(email) BETWEEN 3 AND 254 AND email ~ '^[^@[:space:]]+@[^@[:space:]]+$')),
    ADD COLUMN calendar_generation integer NOT NULL DEFAULT 1 CHECK (calendar_generation >= 1);

-- Each channel delivers an event on its own (webhook or mail), under the
-- same stable delivery id.
ALTER TABLE notification_attempt DROP CONSTRAINT notification_attempt_delivery_id_fkey;
ALTER TABLE notification_attempt DROP CONSTRAINT notification_attempt_pkey;
ALTER TABLE notification_outbox DROP CONSTRAINT notification_outbox_pkey;
ALTER TABLE notification_outbox
    ADD COLUMN channel text NOT NULL DEFAULT 'webhook' CHECK (channel IN ('webhook', 'mail'));
ALTER TABLE notification_outbox ADD PRIMARY KEY (delivery_id, channel);
ALTER TABLE notification_attempt ADD COLUMN channel text NOT NULL DEFAULT 'webhook';
ALTER TABLE notification_attempt ADD PRIMARY KEY (delivery_id, channel, attempt, worker);
ALTER TABLE notification_attempt ADD CONSTRAINT notification_attempt_delivery_fkey
    FOREIGN KEY (delivery_id, channel) REFERENCES notification_outbox (delivery_id, channel) ON DELETE CASCADE;

-- The reminder scan: confirmed bookings by start.
CREATE INDEX reservation_confirmed_start_idx ON reservation (starts_at) WHERE status = 'CONFIRMED';
-- A moved or cancelled booking withdraws its pending reminders.
CREATE INDEX notification_outbox_pending_reminder_idx ON notification_outbox (((payload ->> 'bookingId')::bigint))
    WHERE kind = 'booking.reminder' AND status = 'PENDING';
