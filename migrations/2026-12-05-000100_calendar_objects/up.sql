-- Calendar apps, round two (SPEC §23).
--
-- A person's calendar object is kept as their app sent it: `dav_event`
-- (their UID and resource name, and what the event booked) gains the stored
-- text with yeyak's own fields written in (`calendar::object`), its ETag
-- and kind, the span its time-range searches compare (a series: from its
-- first start to its last end, open when it repeats for ever), and a
-- tombstone so a sync reports its removal. An object may
-- book nothing (an event without a room, a to-do). The primary key
-- (staff_id, uid) decides that a UID is unique in its collection.
ALTER TABLE dav_event
    ADD COLUMN id bigserial UNIQUE,
    ADD COLUMN body text,
    ADD COLUMN starts_at timestamptz,
    ADD COLUMN ends_at timestamptz,
    ADD COLUMN etag text,
    ADD COLUMN component text NOT NULL DEFAULT 'VEVENT' CHECK (component IN ('VEVENT', 'VTODO')),
    ADD COLUMN updated_at timestamptz,
    ADD COLUMN deleted_at timestamptz,
    ADD CONSTRAINT dav_event_stored CHECK ((body IS NULL) = (etag IS NULL));
ALTER TABLE dav_event DROP CONSTRAINT dav_event_check;
ALTER TABLE dav_event ADD CONSTRAINT dav_event_books_one_thing CHECK (reservation_id IS NULL OR series_id IS NULL);

-- Sync tokens (RFC 6578) are a collection's change counter — `staff:{id}`
-- for a person's `bookings/`, `room:{code}` for a room's — and every change
-- of a collection leaves a row here with the counter it took. A counter is
-- bumped under its row's lock, held to the changing transaction's end, so
-- one collection's changes commit in counter order, and a token never waits
-- on any transaction but those changing that same collection (the old
-- tokens waited on the oldest transaction of the whole database server).
CREATE TABLE calendar_feed_change (
    feed text NOT NULL,
    version bigint NOT NULL,
    reservation_id bigint,
    object_uid text,
    CHECK ((reservation_id IS NULL) <> (object_uid IS NULL))
);
CREATE INDEX calendar_feed_change_feed_idx ON calendar_feed_change (feed, version);

CREATE OR REPLACE FUNCTION calendar_feed_bump_bookings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH touched AS (
        SELECT 'room:' || rr.room AS feed, e.reservation_id, e.at
          FROM changed e JOIN reservation_room rr ON rr.reservation_id = e.reservation_id
        UNION ALL
        SELECT 'room:' || left_room, e.reservation_id, e.at
          FROM changed e, jsonb_array_elements_text(
                   CASE WHEN jsonb_typeof(e.changes -> 'rooms' -> 'before') = 'array'
                        THEN e.changes -> 'rooms' -> 'before' ELSE '[]' END) AS left_room
        UNION ALL
        SELECT CASE WHEN r.organizer_staff_id IS NOT NULL THEN 'staff:' || r.organizer_staff_id
                    WHEN r.organizer_tenant IS NULL THEN 'owner:' || r.organizer_digest END, e.reservation_id, e.at
          FROM changed e JOIN reservation r ON r.id = e.reservation_id
    ), bumped AS (
        INSERT INTO calendar_feed_version AS v (feed, version, changed_at)
        SELECT t.feed, 1, max(t.at) FROM touched t WHERE t.feed IS NOT NULL GROUP BY t.feed ORDER BY t.feed
        ON CONFLICT (feed) DO UPDATE
           SET version = v.version + 1, changed_at = greatest(v.changed_at, excluded.changed_at)
        RETURNING v.feed, v.version
    )
    INSERT INTO calendar_feed_change (feed, version, reservation_id)
    SELECT DISTINCT b.feed, b.version, t.reservation_id FROM bumped b JOIN touched t ON t.feed = b.feed;
    RETURN NULL;
END $$;

-- A stored object's change is its person's collection's change too.
CREATE FUNCTION calendar_feed_bump_objects() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH bumped AS (
        INSERT INTO calendar_feed_version AS v (feed, version, changed_at)
        SELECT DISTINCT 'staff:' || o.staff_id, 1, now() FROM changed o ORDER BY 1
        ON CONFLICT (feed) DO UPDATE SET version = v.version + 1, changed_at = greatest(v.changed_at, excluded.changed_at)
        RETURNING v.feed, v.version
    )
    INSERT INTO calendar_feed_change (feed, version, object_uid)
    SELECT b.feed, b.version, o.uid FROM bumped b JOIN changed o ON b.feed = 'staff:' || o.staff_id;
    RETURN NULL;
END $$;

CREATE TRIGGER dav_event_inserted_feed_bump AFTER INSERT ON dav_event
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION calendar_feed_bump_objects();
CREATE TRIGGER dav_event_updated_feed_bump AFTER UPDATE ON dav_event
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION calendar_feed_bump_objects();
