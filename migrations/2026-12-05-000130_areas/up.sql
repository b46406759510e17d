-- Areas as data (SPEC §24): today's area labels become rows, and a room's
-- area names one. A room naming an area that does not exist yet creates it
-- with the defaults (the catalogue's writer inserts it first). A null time
-- zone is the installation's (YEYAK_TIMEZONE); working hours are
-- {"mon": ["09:00", "18:00"], …, "sun": null}.
CREATE TABLE area (
    code                      text PRIMARY KEY CHECK (length(code) BETWEEN 1 AND 100),
    name                      text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    time_zone                 text,
    working_hours             jsonb NOT NULL DEFAULT
        '{"mon": ["09:00", "18:00"], "tue": ["09:00", "18:00"], "wed": ["09:00", "18:00"],
          "thu": ["09:00", "18:00"], "fri": ["09:00", "18:00"], "sat": null, "sun": null}',
    restrict_to_working_hours boolean NOT NULL DEFAULT false,
    closed_on_holidays        boolean NOT NULL DEFAULT false,
    position                  integer NOT NULL,
    created_at                timestamptz NOT NULL DEFAULT now(),
    updated_at                timestamptz NOT NULL DEFAULT now()
);

INSERT INTO area (code, name, position)
SELECT area, area, row_number() OVER (ORDER BY area)::int FROM (SELECT DISTINCT area FROM room) labels;

ALTER TABLE room ADD CONSTRAINT room_area_fkey FOREIGN KEY (area) REFERENCES area (code);
