-- One booking of two adjoining rooms: QA+QB for client 0, QB+QC for client 1
-- (`:flip` = 1 swaps them), as in the A+B vs B+C races; the room copies go in
-- room order and the first one that finds the slot taken ends the attempt.
-- Otherwise as booking.sql; `:slot` is set by the scenario.
\set k random(1, 2000000000)
\set side (:client_id + :flip) % 2
BEGIN;
WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended('pgbbooking.create' || :client_id::text || '-' || :k::text, 0)) AS locked), claim AS (INSERT INTO idempotency_record (tenant, operation, idempotency_key, fingerprint, state, owner_token, lease_expires_at, created_at) SELECT 'pgb', 'booking.create', :client_id::text || '-' || :k::text, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'IN_PROGRESS', gen_random_uuid(), now() + interval '90 seconds', now() FROM lock WHERE locked ON CONFLICT DO NOTHING RETURNING 1) SELECT (SELECT locked FROM lock) AS locked, EXISTS (SELECT 1 FROM claim) AS inserted;
SAVEPOINT diesel_savepoint_1;
SELECT r.code, r.suite, r.position, r.max_duration_minutes, r.horizon_days, r.approval_required, r.check_in_required, COALESCE((SELECT array_agg(m.code ORDER BY m.position, m.code) FROM room m WHERE m.active AND m.suite = r.suite), '{}') AS suite_members FROM room r WHERE r.code = ANY(ARRAY[(CASE WHEN :side = 0 THEN 'QA' ELSE 'QB' END), (CASE WHEN :side = 0 THEN 'QB' ELSE 'QC' END)]) AND r.active ORDER BY r.position, r.code FOR KEY SHARE OF r;
INSERT INTO reservation (title, organizer_name, organizer_digest, organizer_staff_id, organizer_tenant, starts_at, ends_at, status, check_in_required, series_id, occurrence_start, created_at, updated_at) VALUES ('t', 'pgb', 'd7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592', NULL, 'pgb', timestamptz '2031-01-01' + :slot::int * interval '1 hour', timestamptz '2031-01-01' + (:slot::int + 1) * interval '1 hour', 'CONFIRMED', false, NULL, NULL, now(), now()) RETURNING id AS rid \gset
WITH ins AS (INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active) VALUES (:rid, (CASE WHEN :side = 0 THEN 'QA' ELSE 'QB' END), timestamptz '2031-01-01' + :slot::int * interval '1 hour', timestamptz '2031-01-01' + (:slot::int + 1) * interval '1 hour', true) ON CONFLICT DO NOTHING RETURNING 1) SELECT count(*) AS won FROM ins \gset
\if :won = 1
WITH ins AS (INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active) VALUES (:rid, (CASE WHEN :side = 0 THEN 'QB' ELSE 'QC' END), timestamptz '2031-01-01' + :slot::int * interval '1 hour', timestamptz '2031-01-01' + (:slot::int + 1) * interval '1 hour', true) ON CONFLICT DO NOTHING RETURNING 1) SELECT count(*) AS won FROM ins \gset
\endif
\if :won = 1
SELECT r.id, r.title, r.organizer_name, r.organizer_digest, r.organizer_staff_id, r.starts_at, r.ends_at, r.cancelled_at, r.version, r.status, r.series_id, r.check_in_required, r.checked_in_at, r.released_at, r.is_exception, r.occurrence_start, r.updated_at, r.organizer_tenant, COALESCE(array_agg(rr.room ORDER BY rm.position, rm.code) FILTER (WHERE rr.room IS NOT NULL), '{}') AS rooms FROM reservation r LEFT JOIN reservation_room rr ON rr.reservation_id = r.id LEFT JOIN room rm ON rm.code = rr.room WHERE r.id = :rid GROUP BY r.id;
INSERT INTO booking_event (reservation_id, at, action, actor, changes) SELECT id, now(), 'created', 'pgb', changes FROM unnest(ARRAY[:rid]::int8[], ARRAY['{"rooms": {"after": ["P01"], "before": null}, "title": {"after": "t", "before": null}, "status": {"after": "CONFIRMED", "before": null}}']::jsonb[]) AS e(id, changes);
INSERT INTO notification_outbox (delivery_id, kind, payload, status, next_attempt_at, created_at) VALUES ('pgb-booking-' || :rid || '-v1-changed', 'booking.created', '{"rooms": ["P01"], "title": "t", "action": "created", "status": "CONFIRMED", "version": 1, "seriesId": null, "bookingId": 1, "organizer": "pgb", "organizerStaffId": null}', 'PENDING', now(), now()) ON CONFLICT DO NOTHING;
RELEASE SAVEPOINT diesel_savepoint_1;
UPDATE idempotency_record SET state = 'COMPLETED', response_status = 201, response_body = '{"id": 1,"title": "t","organizer": "pgb","rooms": ["P01"],"startsAt": "2031-01-01T01.00.00Z","endsAt": "2031-01-01T02.00.00Z","cancelledAt": null,"version": 1,"status": "CONFIRMED","seriesId": null,"checkInRequired": false,"checkedInAt": null,"releasedAt": null}', completed_at = now() WHERE tenant = 'pgb' AND operation = 'booking.create' AND idempotency_key = :client_id::text || '-' || :k::text AND owner_token IS NOT NULL AND state = 'IN_PROGRESS';
\else
ROLLBACK TO SAVEPOINT diesel_savepoint_1;
UPDATE idempotency_record SET state = 'COMPLETED', response_status = 409, response_body = '{"code": "ROOM_TIME_TAKEN","message": "taken","details": {"rooms": ["P01"]},"retryable": false}', completed_at = now() WHERE tenant = 'pgb' AND operation = 'booking.create' AND idempotency_key = :client_id::text || '-' || :k::text AND owner_token IS NOT NULL AND state = 'IN_PROGRESS';
\endif
COMMIT;
