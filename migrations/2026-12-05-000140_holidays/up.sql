-- Holiday calendars (SPEC §24): named sets of days an area may close on and
-- that the reports do not count as working days. A PUT of a calendar's days
-- replaces them in one transaction. A person may also name their own time
-- zone (null: the installation's YEYAK_TIMEZONE).
CREATE TABLE holiday_calendar (
    code       text PRIMARY KEY CHECK (length(code) BETWEEN 1 AND 100),
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE holiday (
    calendar text NOT NULL REFERENCES holiday_calendar (code) ON DELETE CASCADE,
    day      date NOT NULL,
    name     text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    PRIMARY KEY (calendar, day)
);

ALTER TABLE area ADD COLUMN holiday_calendar text REFERENCES holiday_calendar (code);

ALTER TABLE staff_user ADD COLUMN time_zone text;
