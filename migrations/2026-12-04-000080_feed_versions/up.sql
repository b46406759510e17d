-- Mail and feeds at the office's scale (SPEC §18).
--
-- A change counter per calendar feed: `room:{code}` (a room's bookings),
-- `staff:{id}` and `owner:{digest}` (a person's: bookings they organize, or
-- made under their digest before bookings named their person), and two
-- every feed shows: `rooms` (room names and codes) and `people`
-- (organizers' names and addresses). A feed's ETag is made of its
-- counters, so a poll that still holds costs one small statement.
CREATE TABLE calendar_feed_version (
    feed text PRIMARY KEY CHECK (length(feed) BETWEEN 1 AND 200),
    version bigint NOT NULL DEFAULT 1 CHECK (version >= 1),
    changed_at timestamptz NOT NULL DEFAULT now()
);

-- Every change of a booking writes its history row in the changing
-- transaction (`rooms::events`, at the end of the change), so the feeds it
-- shows in are bumped there: its rooms (and any it left, when the history
-- names rooms before), its person's. One statement per history insert,
-- keys in sorted order, so two writers lock shared counters in the same
-- order; `changed_at` is the change's own time (the history's `at`).
CREATE FUNCTION calendar_feed_bump_bookings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO calendar_feed_version AS v (feed, version, changed_at)
    SELECT k.feed, 1, k.at FROM (
        SELECT f.feed, max(f.at) AS at FROM (
            SELECT 'room:' || rr.room AS feed, e.at
              FROM changed e JOIN reservation_room rr ON rr.reservation_id = e.reservation_id
            UNION ALL
            SELECT 'room:' || left_room, e.at
              FROM changed e, jsonb_array_elements_text(
                       CASE WHEN jsonb_typeof(e.changes -> 'rooms' -> 'before') = 'array'
                            THEN e.changes -> 'rooms' -> 'before' ELSE '[]' END) AS left_room
            UNION ALL
            SELECT CASE WHEN r.organizer_staff_id IS NOT NULL THEN 'staff:' || r.organizer_staff_id
                        WHEN r.organizer_tenant IS NULL THEN 'owner:' || r.organizer_digest END, e.at
              FROM changed e JOIN reservation r ON r.id = e.reservation_id
        ) f WHERE f.feed IS NOT NULL GROUP BY f.feed
    ) k ORDER BY k.feed
    ON CONFLICT (feed) DO UPDATE
       SET version = v.version + 1, changed_at = greatest(v.changed_at, excluded.changed_at);
    RETURN NULL;
END $$;

CREATE TRIGGER booking_event_feed_bump AFTER INSERT ON booking_event
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION calendar_feed_bump_bookings();

-- Room names and codes, and organizers' names and addresses, show in every
-- feed: their own counters (rare changes, by admins and people themselves).
CREATE FUNCTION calendar_feed_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO calendar_feed_version AS v (feed, version, changed_at) VALUES (TG_ARGV[0], 1, now())
    ON CONFLICT (feed) DO UPDATE
       SET version = v.version + 1, changed_at = greatest(v.changed_at, excluded.changed_at);
    RETURN NULL;
END $$;

CREATE TRIGGER room_feed_bump AFTER INSERT OR UPDATE OR DELETE ON room
    FOR EACH STATEMENT EXECUTE FUNCTION calendar_feed_bump('rooms');
CREATE TRIGGER staff_feed_bump AFTER UPDATE OF username, display_name, email ON staff_user
    FOR EACH STATEMENT EXECUTE FUNCTION calendar_feed_bump('people');

-- `GET /api/admin/outbox?bookingId=`: a booking's deliveries, every kind.
CREATE INDEX notification_outbox_booking_idx ON notification_outbox (((payload ->> 'bookingId')::bigint));
