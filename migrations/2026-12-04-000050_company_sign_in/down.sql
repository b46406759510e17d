ALTER TABLE staff_session DROP COLUMN id_token;
DROP TABLE staff_identity;
-- Company accounts cannot exist without their source.
DELETE FROM staff_user WHERE source <> 'local';
ALTER TABLE staff_user
    DROP CONSTRAINT staff_user_password_hash_check,
    ADD CONSTRAINT staff_user_password_hash_check CHECK (password_hash LIKE '$argon2%'),
    DROP COLUMN last_sign_in_at,
    DROP COLUMN source;
