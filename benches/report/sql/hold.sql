\set k random(1, 2000000000)
BEGIN;
SELECT pg_try_advisory_xact_lock(hashtextextended('pgbhold.create' || :client_id::text || '-' || :k::text, 0)) AS locked;
INSERT INTO idempotency_record (tenant, operation, idempotency_key, fingerprint, state, owner_token, lease_expires_at, created_at) VALUES ('pgb', 'hold.create', :client_id::text || '-' || :k::text, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'IN_PROGRESS', gen_random_uuid(), now() + interval '90 seconds', now()) ON CONFLICT DO NOTHING;
SAVEPOINT diesel_savepoint_1;
UPDATE capacity_resource SET occupied_count = occupied_count + 1, revision = revision + 1, updated_at = now() WHERE id = :rid AND state = 'OPEN' AND waiting_count = 0 AND occupied_count + 1 <= capacity AND (NULL::int8 IS NULL OR revision = NULL::int8) AND (NULL::int4 IS NULL OR policy_version = NULL::int4) RETURNING policy_version;
INSERT INTO capacity_hold (resource_id, owner_digest, state, quantity, policy_version, expires_at, created_at, updated_at) VALUES (:rid, 'd7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592', 'HELD', 1, 1, now() + interval '30 seconds', now(), now()) RETURNING id, resource_id, state, quantity, revision, policy_version, expires_at, owner_digest;
RELEASE SAVEPOINT diesel_savepoint_1;
UPDATE idempotency_record SET state = 'COMPLETED', response_status = 201, response_body = '{"id": 1,"resourceId": 1,"state": "HELD","quantity": 1,"revision": 0,"policyVersion": 1,"expiresAt": "2030-01-01T00.00.30Z"}', completed_at = now() WHERE tenant = 'pgb' AND operation = 'hold.create' AND idempotency_key = :client_id::text || '-' || :k::text AND owner_token IS NOT NULL AND state = 'IN_PROGRESS';
COMMIT;
