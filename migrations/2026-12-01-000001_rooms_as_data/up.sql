-- Rooms as data (SPEC §8): attributes, areas, suites. A, B, C keep their
-- codes, names and positions and form the suite "ABC", so every booking rule
-- of §2 holds unchanged. Linking is data: rooms link only within one suite,
-- as a contiguous run of positions; the EXCLUDE constraint on
-- reservation_room stays the only judge of overlap.
ALTER TABLE room DROP CONSTRAINT room_code_check;
ALTER TABLE room ADD CONSTRAINT room_code_check CHECK (code ~ '^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$');
ALTER TABLE room DROP CONSTRAINT room_position_key;

ALTER TABLE room
    ADD COLUMN area                 text NOT NULL DEFAULT '본관' CHECK (length(area) BETWEEN 1 AND 100),
    ADD COLUMN capacity             integer NOT NULL DEFAULT 8 CHECK (capacity BETWEEN 1 AND 10000),
    -- Lowercase tags (`projector`, `video`); the format is checked by the domain type.
    ADD COLUMN equipment            text[] NOT NULL DEFAULT '{}' CHECK (cardinality(equipment) <= 32),
    ADD COLUMN suite                text CHECK (suite IS NULL OR length(suite) BETWEEN 1 AND 100),
    ADD COLUMN check_in_required    boolean NOT NULL DEFAULT false,
    ADD COLUMN approval_required    boolean NOT NULL DEFAULT false,
    ADD COLUMN max_duration_minutes integer NOT NULL DEFAULT 720 CHECK (max_duration_minutes BETWEEN 1 AND 10080),
    ADD COLUMN horizon_days         integer CHECK (horizon_days IS NULL OR horizon_days BETWEEN 1 AND 3650),
    ADD COLUMN active               boolean NOT NULL DEFAULT true,
    ADD COLUMN retired_at           timestamptz,
    ADD COLUMN created_at           timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN updated_at           timestamptz NOT NULL DEFAULT now(),
    ADD CONSTRAINT room_retired_has_time CHECK (active = (retired_at IS NULL));

UPDATE room SET suite = 'ABC' WHERE code IN ('A', 'B', 'C');

-- One active room per position of an area (retired rooms give theirs up).
CREATE UNIQUE INDEX room_area_position_key ON room (area, position) WHERE active;
-- A suite is one run of neighbouring rooms: all its active rooms share an area.
ALTER TABLE room ADD CONSTRAINT room_suite_in_one_area
    EXCLUDE USING gist (suite WITH =, area WITH <>) WHERE (active AND suite IS NOT NULL);
CREATE INDEX room_equipment_idx ON room USING gin (equipment);
