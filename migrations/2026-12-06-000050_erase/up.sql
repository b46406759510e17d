-- Erase and retention (SPEC §26): a person erased keeps an anonymised
-- account row (bookings and reports still point at it), and bookings that
-- lost their title and organizer name say when.
ALTER TABLE staff_user
    ADD COLUMN erased_at timestamptz,
    DROP CONSTRAINT staff_user_password_hash_check,
    ADD CONSTRAINT staff_user_password_hash_check CHECK (
        (source = 'local' AND erased_at IS NULL AND password_hash LIKE '$argon2%')
        OR ((source <> 'local' OR erased_at IS NOT NULL) AND password_hash = '!'));

ALTER TABLE reservation ADD COLUMN anonymised_at timestamptz;
ALTER TABLE booking_series ADD COLUMN anonymised_at timestamptz;

-- The retention sweep's batches: bookings still named, by their end. The
-- index empties as the sweep runs; with retention off it is a plain index
-- of ends (the day page's own reads use the gist index).
CREATE INDEX reservation_named_by_end_idx ON reservation (ends_at) WHERE anonymised_at IS NULL;
CREATE INDEX booking_series_named_by_end_idx ON booking_series (ends_at) WHERE anonymised_at IS NULL;

-- Who a history entry names, by account: an erase renames exactly that
-- person's entries, never a namesake's.
ALTER TABLE booking_event ADD COLUMN actor_staff_id bigint, ADD COLUMN actor_for_staff_id bigint;

-- Entries written before this: the account whose display name it is, when
-- exactly one account has that name (a namesake's entries stay unlinked).
WITH named AS (
    SELECT display_name, min(id) AS id FROM staff_user GROUP BY display_name HAVING count(*) = 1
)
UPDATE booking_event e SET actor_staff_id = named.id FROM named WHERE e.actor = named.display_name;
WITH named AS (
    SELECT display_name, min(id) AS id FROM staff_user GROUP BY display_name HAVING count(*) = 1
)
UPDATE booking_event e SET actor_for_staff_id = named.id FROM named WHERE e.actor_for = named.display_name;
