ALTER TABLE reservation_room DROP CONSTRAINT reservation_room_no_overlap;
ALTER TABLE reservation_room DROP CONSTRAINT reservation_room_meetings_apart;
ALTER TABLE reservation_room ADD CONSTRAINT reservation_room_no_overlap EXCLUDE USING gist (
    room WITH =,
    tstzrange(starts_at, ends_at, '[)') WITH &&
) WHERE (active);
DROP TRIGGER reservation_room_take_buffers ON reservation_room;
DROP FUNCTION reservation_room_take_buffers();
DROP FUNCTION reservation_room_occupied(timestamptz, timestamptz, integer, integer);
ALTER TABLE reservation_room DROP COLUMN buffer_before_minutes, DROP COLUMN buffer_after_minutes;
ALTER TABLE room DROP COLUMN buffer_before_minutes, DROP COLUMN buffer_after_minutes;
