-- One hand-off of a chain on resource :rid (capacity 1, a long queue made
-- beforehand): the holder cancels, the unit is offered to the next waiter,
-- who accepts. Two transactions, as the two API commands send them.
\set k random(1, 2000000000)
\set rid :base + :client_id
BEGIN;
WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended('pgbhold.cancel' || :client_id::text || '-' || :k::text, 0)) AS locked), claim AS (INSERT INTO idempotency_record (tenant, operation, idempotency_key, fingerprint, state, owner_token, lease_expires_at, created_at) SELECT 'pgb', 'hold.cancel', :client_id::text || '-' || :k::text, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'IN_PROGRESS', gen_random_uuid(), now() + interval '90 seconds', now() FROM lock WHERE locked ON CONFLICT DO NOTHING RETURNING 1) SELECT (SELECT locked FROM lock) AS locked, EXISTS (SELECT 1 FROM claim) AS inserted;
SAVEPOINT diesel_savepoint_1;
SELECT id AS hid FROM capacity_hold WHERE resource_id = :rid AND state IN ('HELD', 'CONFIRMED') LIMIT 1 \gset
SELECT id, code, name, state, capacity, occupied_count, revision, policy_version, timezone, waiting_count FROM capacity_resource WHERE id = :rid LIMIT 1 FOR UPDATE;
SELECT id, resource_id, state, quantity, revision, policy_version, expires_at, owner_digest FROM capacity_hold WHERE id = :hid LIMIT 1 FOR UPDATE;
UPDATE capacity_hold SET state = 'CANCELLED', revision = revision + 1, updated_at = now() WHERE id = :hid RETURNING id, resource_id, state, quantity, revision, policy_version, expires_at, owner_digest;
SELECT id AS eid, owner_digest AS waiter, quantity FROM waitlist_entry WHERE resource_id = :rid AND state = 'WAITING' ORDER BY sequence LIMIT 1 FOR UPDATE \gset
INSERT INTO capacity_offer (resource_id, entry_id, owner_digest, state, quantity, expires_at, created_at, updated_at) VALUES (:rid, :eid, :waiter, 'ACTIVE', 1, now() + interval '20 seconds', now(), now()) RETURNING id AS oid \gset
UPDATE waitlist_entry SET state = 'OFFERED', revision = revision + 1, updated_at = now() WHERE id = :eid;
INSERT INTO notification_outbox (delivery_id, kind, payload, status, next_attempt_at, created_at) VALUES ('pgb-waitlist-' || :eid || '-offered', 'offer.created', '{"entryId":  1, "offerId":  1, "expiresAt":  "2026-11-29T22.42.02.944390Z", "resourceId":  1}', 'PENDING', now(), now()) ON CONFLICT DO NOTHING;
UPDATE capacity_resource SET occupied_count = 1, waiting_count = waiting_count - 1, revision = revision + 0, updated_at = now() WHERE id = :rid;
RELEASE SAVEPOINT diesel_savepoint_1;
UPDATE idempotency_record SET state = 'COMPLETED', response_status = 200, response_body = '{"id": 1,"resourceId": 1,"state": "CANCELLED","quantity": 1,"revision": 1,"policyVersion": 1,"expiresAt": "2026-11-29T22.42.12.793256Z"}', completed_at = now() WHERE tenant = 'pgb' AND operation = 'hold.cancel' AND idempotency_key = :client_id::text || '-' || :k::text AND owner_token IS NOT NULL AND state = 'IN_PROGRESS';
COMMIT;
BEGIN;
WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended('pgboffer.accept' || :client_id::text || '-' || :k::text, 0)) AS locked), claim AS (INSERT INTO idempotency_record (tenant, operation, idempotency_key, fingerprint, state, owner_token, lease_expires_at, created_at) SELECT 'pgb', 'offer.accept', :client_id::text || '-' || :k::text, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'IN_PROGRESS', gen_random_uuid(), now() + interval '90 seconds', now() FROM lock WHERE locked ON CONFLICT DO NOTHING RETURNING 1) SELECT (SELECT locked FROM lock) AS locked, EXISTS (SELECT 1 FROM claim) AS inserted;
SAVEPOINT diesel_savepoint_1;
SELECT resource_id FROM capacity_offer WHERE id = :oid LIMIT 1;
SELECT id, code, name, state, capacity, occupied_count, revision, policy_version, timezone, waiting_count FROM capacity_resource WHERE id = :rid LIMIT 1 FOR UPDATE;
SELECT id, resource_id, entry_id, state, revision, expires_at, hold_id, quantity, owner_digest FROM capacity_offer WHERE id = :oid LIMIT 1 FOR UPDATE;
INSERT INTO capacity_hold (resource_id, owner_digest, state, quantity, policy_version, expires_at, created_at, updated_at) VALUES (:rid, :waiter, 'CONFIRMED', 1, 1, NULL, now(), now()) RETURNING id AS newhold \gset
UPDATE waitlist_entry SET state = 'ACCEPTED', revision = revision + 1, updated_at = now() WHERE id = :eid;
UPDATE capacity_offer SET state = 'ACCEPTED', hold_id = :newhold, revision = revision + 1, updated_at = now() WHERE id = :oid RETURNING id, resource_id, entry_id, state, revision, expires_at, hold_id, quantity, owner_digest;
RELEASE SAVEPOINT diesel_savepoint_1;
UPDATE idempotency_record SET state = 'COMPLETED', response_status = 200, response_body = '{"id": 1,"resourceId": 1,"entryId": 1,"state": "ACCEPTED","revision": 1,"expiresAt": "2026-11-29T22.42.02.944390Z","holdId": 2}', completed_at = now() WHERE tenant = 'pgb' AND operation = 'offer.accept' AND idempotency_key = :client_id::text || '-' || :k::text AND owner_token IS NOT NULL AND state = 'IN_PROGRESS';
COMMIT;
