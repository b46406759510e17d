-- Setup and cleanup time around a room's meetings (SPEC §24 "Buffers").
--
-- A room gains its buffers; each room copy of a booking keeps the buffers in
-- force when it was written (a booking made or moved writes its copies
-- anew), so changing a room's buffers never touches existing bookings. The
-- copy's occupied range — start less its before-buffer to end plus its
-- after-buffer — is what `reservation_room_no_overlap` compares: the
-- database alone keeps two meetings of a room at least the first's
-- after-buffer plus the second's before-buffer apart.
--
-- `reservation_room_meetings_apart` compares the meetings themselves. It
-- is created first so that PostgreSQL, which checks a table's exclusion
-- indexes in the order they were made, names it when meetings overlap
-- (ROOM_TIME_TAKEN) and names `reservation_room_no_overlap` only when
-- nothing but buffers do (ROOM_BUFFER_TAKEN).
ALTER TABLE room
    ADD COLUMN buffer_before_minutes integer NOT NULL DEFAULT 0
        CONSTRAINT room_buffer_before_range CHECK (buffer_before_minutes BETWEEN 0 AND 240),
    ADD COLUMN buffer_after_minutes integer NOT NULL DEFAULT 0
        CONSTRAINT room_buffer_after_range CHECK (buffer_after_minutes BETWEEN 0 AND 240);

ALTER TABLE reservation_room
    ADD COLUMN buffer_before_minutes integer NOT NULL DEFAULT 0,
    ADD COLUMN buffer_after_minutes integer NOT NULL DEFAULT 0;

-- Minutes only: a fixed number of seconds, the same in every time zone, so
-- the range is immutable and may be indexed.
CREATE FUNCTION reservation_room_occupied(starts timestamptz, ends timestamptz, before integer, after integer)
    RETURNS tstzrange LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT tstzrange(starts - before * interval '1 minute', ends + after * interval '1 minute', '[)') $$;

-- A copy takes its room's buffers as they are when it is written.
CREATE FUNCTION reservation_room_take_buffers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT r.buffer_before_minutes, r.buffer_after_minutes
      INTO NEW.buffer_before_minutes, NEW.buffer_after_minutes
      FROM room r WHERE r.code = NEW.room;
    NEW.buffer_before_minutes := coalesce(NEW.buffer_before_minutes, 0);
    NEW.buffer_after_minutes := coalesce(NEW.buffer_after_minutes, 0);
    RETURN NEW;
END $$;

CREATE TRIGGER reservation_room_take_buffers BEFORE INSERT ON reservation_room
    FOR EACH ROW EXECUTE FUNCTION reservation_room_take_buffers();

ALTER TABLE reservation_room DROP CONSTRAINT reservation_room_no_overlap;
ALTER TABLE reservation_room ADD CONSTRAINT reservation_room_meetings_apart EXCLUDE USING gist (
    room WITH =,
    tstzrange(starts_at, ends_at, '[)') WITH &&
) WHERE (active);
ALTER TABLE reservation_room ADD CONSTRAINT reservation_room_no_overlap EXCLUDE USING gist (
    room WITH =,
    reservation_room_occupied(starts_at, ends_at, buffer_before_minutes, buffer_after_minutes) WITH &&
) WHERE (active);
