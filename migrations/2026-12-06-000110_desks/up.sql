-- Desks, assigned desks and away days (SPEC §28).
--
-- A desk is a room of kind 'desk': the same tables, the same EXCLUDE
-- constraints (`reservation_room_meetings_apart`, `reservation_room_no_overlap`)
-- decide a desk-day as they decide a meeting. Desks have no buffers and
-- book alone (no suite). `plan_x`, `plan_y` place a room or desk on its
-- area's floor plan, as fractions of the image.
ALTER TABLE room
    ADD COLUMN kind text NOT NULL DEFAULT 'room' CONSTRAINT room_kind_known CHECK (kind IN ('room', 'desk')),
    ADD COLUMN assigned_to bigint REFERENCES staff_user (id),
    ADD COLUMN plan_x double precision CONSTRAINT room_plan_x_range CHECK (plan_x BETWEEN 0 AND 1),
    ADD COLUMN plan_y double precision CONSTRAINT room_plan_y_range CHECK (plan_y BETWEEN 0 AND 1),
    ADD CONSTRAINT room_plan_both CHECK ((plan_x IS NULL) = (plan_y IS NULL)),
    ADD CONSTRAINT room_desk_alone CHECK (
        kind = 'room' OR (suite IS NULL AND buffer_before_minutes = 0 AND buffer_after_minutes = 0)),
    ADD CONSTRAINT room_assigned_is_desk CHECK (assigned_to IS NULL OR kind = 'desk');

-- One desk per person per half day (SPEC §28), decided by the database: a
-- desk's room copy carries its booking's organizer, and no two active desk
-- copies of one organizer overlap. Desk bookings are whole units (a day,
-- its morning or its afternoon, `rooms::desks`), so overlapping ranges are
-- the same half day. A room's copies carry null and are not compared.
-- Made after the room constraints, so a second booking of the same desk
-- by the same person is still named by `reservation_room_meetings_apart`.
ALTER TABLE reservation_room ADD COLUMN desk_holder text;

CREATE FUNCTION reservation_room_take_desk_holder() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM room r WHERE r.code = NEW.room AND r.kind = 'desk') THEN
        SELECT p.organizer_digest INTO NEW.desk_holder FROM reservation p WHERE p.id = NEW.reservation_id;
    ELSE
        NEW.desk_holder := NULL;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER reservation_room_take_desk_holder BEFORE INSERT ON reservation_room
    FOR EACH ROW EXECUTE FUNCTION reservation_room_take_desk_holder();

ALTER TABLE reservation_room ADD CONSTRAINT reservation_room_one_desk_per_person EXCLUDE USING gist (
    desk_holder WITH =,
    tstzrange(starts_at, ends_at, '[)') WITH &&
) WHERE (active AND desk_holder IS NOT NULL);

-- Days a person is away (`POST /account/away`, both dates inclusive): others
-- may book the desk assigned to them on those days.
CREATE TABLE staff_away (
    staff_id   bigint NOT NULL REFERENCES staff_user (id) ON DELETE CASCADE,
    from_date  date NOT NULL,
    to_date    date NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (staff_id, from_date, to_date),
    CONSTRAINT staff_away_order CHECK (to_date >= from_date)
);
