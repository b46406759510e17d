-- Capacity abuse limits and bounded tables (SPEC §13, issue 18).

-- Rows the old rules let in: a second live entry of one owner on one resource
-- (the offered or else the earliest one stays), and entries asking for more
-- than the capacity (they blocked the line for good). Both leave the line.
WITH ranked AS (
    SELECT id, row_number() OVER (PARTITION BY resource_id, owner_digest
                                  ORDER BY (state = 'OFFERED') DESC, sequence) AS n
      FROM waitlist_entry WHERE state IN ('WAITING', 'OFFERED'))
UPDATE waitlist_entry e SET state = 'CANCELLED', revision = e.revision + 1, updated_at = now()
  FROM ranked r WHERE r.id = e.id AND r.n > 1 AND e.state = 'WAITING';
UPDATE waitlist_entry e SET state = 'CANCELLED', revision = e.revision + 1, updated_at = now()
  FROM capacity_resource r WHERE r.id = e.resource_id AND e.state = 'WAITING' AND e.quantity > r.capacity;
UPDATE capacity_resource r SET waiting_count = (
    SELECT count(*) FROM waitlist_entry e WHERE e.resource_id = r.id AND e.state = 'WAITING');

-- The judge of ALREADY_WAITING: one live entry per owner and resource.
CREATE UNIQUE INDEX waitlist_entry_one_live_per_owner ON waitlist_entry (resource_id, owner_digest)
    WHERE state IN ('WAITING', 'OFFERED');
-- The sweeper's scan for entries waiting longer than YEYAK_WAITLIST_MAX_WAIT_HOURS.
CREATE INDEX waitlist_entry_waiting_since_idx ON waitlist_entry (created_at) WHERE state = 'WAITING';

-- Notifications of entries that left the line without an offer.
ALTER TABLE notification_outbox DROP CONSTRAINT notification_outbox_kind_check;
ALTER TABLE notification_outbox ADD CONSTRAINT notification_outbox_kind_check CHECK (kind IN (
    'offer.created', 'offer.expired', 'hold.expired', 'waitlist.expired', 'waitlist.evicted',
    'booking.created', 'booking.moved', 'booking.cancelled', 'booking.approved', 'booking.rejected',
    'booking.released', 'booking.reminder'));

-- /metrics counts EXHAUSTED deliveries on every scrape: an index, not a scan.
CREATE INDEX notification_outbox_exhausted_idx ON notification_outbox (created_at) WHERE status = 'EXHAUSTED';

-- The retention purge finds its batches by these.
CREATE INDEX notification_outbox_delivered_idx ON notification_outbox (delivered_at) WHERE status = 'DELIVERED';
CREATE INDEX notification_attempt_attempted_idx ON notification_attempt (attempted_at);
CREATE INDEX staff_session_expires_idx ON staff_session (expires_at);
CREATE INDEX staff_login_throttle_window_idx ON staff_login_throttle (window_start);
