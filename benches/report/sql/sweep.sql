-- The sweeper's transaction for one resource of the drain's backlog
-- (`capacity.settle`, `src/capacity/expiry.rs`), each resource once: a
-- sequence hands them out. Lock the resource, expire entries that waited too
-- long (`YEYAK_WAITLIST_MAX_WAIT_HOURS`, 24), expire its due holds and offers,
-- enqueue the notifications, offer the freed unit to the first waiter (every
-- resource of the backlog has one), all inside the command's savepoint. The
-- report checks this against the server's own statements at bench time.
SELECT nextval('pgb_sweep') + :base - 1 AS rid \gset
BEGIN;
SAVEPOINT diesel_savepoint_1;
SELECT id, code, name, state, capacity, occupied_count, revision, policy_version, timezone, waiting_count FROM capacity_resource WHERE id = :rid LIMIT 1 FOR UPDATE;
UPDATE waitlist_entry SET state = 'EXPIRED', revision = revision + 1, updated_at = now() WHERE resource_id = :rid AND state = 'WAITING' AND created_at <= now() - interval '24 hours' RETURNING id;
UPDATE capacity_hold SET state = 'EXPIRED', revision = revision + 1, updated_at = now() WHERE resource_id = :rid AND state = 'HELD' AND expires_at <= now() RETURNING id, quantity;
UPDATE capacity_offer SET state = 'EXPIRED', revision = revision + 1, updated_at = now() WHERE resource_id = :rid AND state = 'ACTIVE' AND expires_at <= now() RETURNING id, entry_id, quantity;
INSERT INTO notification_outbox (delivery_id, kind, payload, status, next_attempt_at, created_at) SELECT 'pgb-hold-' || h.id || '-expired', 'hold.expired', '{"holdId":  3, "resourceId":  2}', 'PENDING', now(), now() FROM capacity_hold h WHERE h.resource_id = :rid AND h.state = 'EXPIRED' ON CONFLICT DO NOTHING;
SELECT id AS eid, owner_digest AS waiter, quantity FROM waitlist_entry WHERE resource_id = :rid AND state = 'WAITING' ORDER BY sequence LIMIT 1 FOR UPDATE \gset
INSERT INTO capacity_offer (resource_id, entry_id, owner_digest, state, quantity, expires_at, created_at, updated_at) VALUES (:rid, :eid, :waiter, 'ACTIVE', 1, now() + interval '20 seconds', now(), now()) RETURNING id;
UPDATE waitlist_entry SET state = 'OFFERED', revision = revision + 1, updated_at = now() WHERE id = :eid;
INSERT INTO notification_outbox (delivery_id, kind, payload, status, next_attempt_at, created_at) VALUES ('pgb-waitlist-' || :eid || '-offered', 'offer.created', '{"entryId":  2, "offerId":  2, "expiresAt":  "2026-11-29T22.43.03.873825Z", "resourceId":  2}', 'PENDING', now(), now()) ON CONFLICT DO NOTHING;
UPDATE capacity_resource SET occupied_count = 1, waiting_count = waiting_count - 1, revision = revision + 1, updated_at = now() WHERE id = :rid;
RELEASE SAVEPOINT diesel_savepoint_1;
COMMIT;
