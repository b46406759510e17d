DROP INDEX notification_outbox_pending_reminder_idx;
DROP INDEX reservation_confirmed_start_idx;
DELETE FROM notification_outbox WHERE channel <> 'webhook';
ALTER TABLE notification_attempt DROP CONSTRAINT notification_attempt_delivery_fkey;
ALTER TABLE notification_attempt DROP CONSTRAINT notification_attempt_pkey;
ALTER TABLE notification_attempt DROP COLUMN channel;
ALTER TABLE notification_attempt ADD PRIMARY KEY (delivery_id, attempt, worker);
ALTER TABLE notification_outbox DROP CONSTRAINT notification_outbox_pkey;
ALTER TABLE notification_outbox DROP COLUMN channel;
ALTER TABLE notification_outbox ADD PRIMARY KEY (delivery_id);
ALTER TABLE notification_attempt ADD CONSTRAINT notification_attempt_delivery_id_fkey
    FOREIGN KEY (delivery_id) REFERENCES notification_outbox (delivery_id) ON DELETE CASCADE;
ALTER TABLE staff_user DROP COLUMN email, DROP COLUMN calendar_generation;
