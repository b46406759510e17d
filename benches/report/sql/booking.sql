\set k random(1, 2000000000)
BEGIN;
WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended('pgbbooking.create' || :client_id::text || '-' || :k::text, 0)) AS locked), claim AS (INSERT INTO idempotency_record (tenant, operation, idempotency_key, fingerprint, state, owner_token, lease_expires_at, created_at) SELECT 'pgb', 'booking.create', :client_id::text || '-' || :k::text, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'IN_PROGRESS', gen_random_uuid(), now() + interval '90 seconds', now() FROM lock WHERE locked ON CONFLICT DO NOTHING RETURNING 1) SELECT (SELECT locked FROM lock) AS locked, EXISTS (SELECT 1 FROM claim) AS inserted;
SAVEPOINT diesel_savepoint_1;
INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at) VALUES ('t', 'pgb', 'd7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592', timestamptz '2031-01-01' + :slot::int * interval '1 hour', timestamptz '2031-01-01' + (:slot::int + 1) * interval '1 hour', now(), now()) RETURNING id AS rid \gset
WITH ins AS (INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active) VALUES (:rid, :room, timestamptz '2031-01-01' + :slot::int * interval '1 hour', timestamptz '2031-01-01' + (:slot::int + 1) * interval '1 hour', true) ON CONFLICT DO NOTHING RETURNING 1) SELECT count(*) AS won FROM ins \gset
\if :won = 1
RELEASE SAVEPOINT diesel_savepoint_1;
\else
ROLLBACK TO SAVEPOINT diesel_savepoint_1;
\endif
UPDATE idempotency_record SET state = 'COMPLETED', response_status = 201, response_body = '{"id": 1,"title": "t","organizer": "pgb","rooms": ["A"],"startsAt": "2030-01-01T01.00.00Z","endsAt": "2030-01-01T02.00.00Z","cancelledAt": null,"version": 1}', completed_at = now() WHERE tenant = 'pgb' AND operation = 'booking.create' AND idempotency_key = :client_id::text || '-' || :k::text AND owner_token IS NOT NULL AND state = 'IN_PROGRESS';
COMMIT;
