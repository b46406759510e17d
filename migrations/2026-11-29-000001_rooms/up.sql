-- Meeting rooms and bookings (seed 002, SPEC §2).
-- btree_gist gives GiST the `=` on text that the EXCLUDE constraint needs.
CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TABLE room (
    code     text PRIMARY KEY CHECK (code ~ '^[A-Z][A-Z0-9]{0,15}$'),
    name     text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    -- Rooms link only as a contiguous run of positions (A+B, B+C, A+B+C; never A+C).
    position integer NOT NULL UNIQUE CHECK (position > 0)
);

INSERT INTO room (code, name, position) VALUES
    ('A', '회의실 A', 1),
    ('B', '회의실 B', 2),
    ('C', '회의실 C', 3);

-- The source of truth for a booking.
CREATE TABLE reservation (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    title            text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    organizer_name   text NOT NULL CHECK (length(organizer_name) BETWEEN 1 AND 200),
    -- Keyed digest of who may change the booking; the display name never decides.
    organizer_digest text NOT NULL,
    starts_at        timestamptz NOT NULL,
    ends_at          timestamptz NOT NULL,
    cancelled_at     timestamptz,
    version          integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    CONSTRAINT reservation_time_order CHECK (ends_at > starts_at)
);

CREATE INDEX reservation_time_idx ON reservation USING gist (tstzrange(starts_at, ends_at, '[)'));

-- One row per booked room, copying the parent's time and cancel state so that
-- one EXCLUDE constraint can compare bookings across rooms (seed 002 §연결 예약).
CREATE TABLE reservation_room (
    reservation_id bigint NOT NULL REFERENCES reservation (id) ON DELETE CASCADE,
    room           text NOT NULL REFERENCES room (code),
    starts_at      timestamptz NOT NULL,
    ends_at        timestamptz NOT NULL,
    active         boolean NOT NULL,
    PRIMARY KEY (reservation_id, room),
    CONSTRAINT reservation_room_time_order CHECK (ends_at > starts_at),
    CONSTRAINT reservation_room_no_overlap EXCLUDE USING gist (
        room WITH =,
        tstzrange(starts_at, ends_at, '[)') WITH &&
    ) WHERE (active)
);
