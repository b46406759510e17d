ALTER TABLE booking_event DROP COLUMN actor_staff_id, DROP COLUMN actor_for_staff_id;
DROP INDEX booking_series_named_by_end_idx;
DROP INDEX reservation_named_by_end_idx;
ALTER TABLE booking_series DROP COLUMN anonymised_at;
ALTER TABLE reservation DROP COLUMN anonymised_at;
ALTER TABLE staff_user
    DROP CONSTRAINT staff_user_password_hash_check,
    DROP COLUMN erased_at,
    ADD CONSTRAINT staff_user_password_hash_check CHECK (
        (source = 'local' AND password_hash LIKE '$argon2%') OR (source <> 'local' AND password_hash = '!'));
