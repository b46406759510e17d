\set k random(1, 1000)
BEGIN;
WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended('pgbreplay' || :k::text, 0)) AS locked), claim AS (INSERT INTO idempotency_record (tenant, operation, idempotency_key, fingerprint, state, owner_token, lease_expires_at, created_at) SELECT 'pgb', 'hold.create', 'replay-' || :k::text, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'IN_PROGRESS', gen_random_uuid(), now() + interval '90 seconds', now() FROM lock WHERE locked ON CONFLICT DO NOTHING RETURNING 1) SELECT (SELECT locked FROM lock) AS locked, EXISTS (SELECT 1 FROM claim) AS inserted;
SELECT fingerprint, state, owner_token, lease_expires_at, response_status, response_body FROM idempotency_record WHERE tenant = 'pgb' AND operation = 'hold.create' AND idempotency_key = 'replay-' || :k::text LIMIT 1 FOR UPDATE;
COMMIT;
