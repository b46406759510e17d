-- Accounts and keys (SPEC §13).
-- A disabled person cannot sign in; their sessions, calendar feeds and the
-- door displays they set up stop at once (every check joins this column).
-- `configured_password_hash` remembers which YEYAK_ADMIN_PASSWORD was last
-- applied to the configured admin, so a changed setting takes effect at the
-- next start without undoing a password changed on /account in between.
ALTER TABLE staff_user
    ADD COLUMN disabled_at timestamptz,
    ADD COLUMN configured_password_hash text CHECK (configured_password_hash LIKE '$argon2%');

-- Last use of a stored key, written at most once a minute per key.
ALTER TABLE api_key ADD COLUMN last_used_at timestamptz;

-- Failed sign-ins per client address, beside those per username: the
-- address limit is the lower one, so one stranger cannot keep an account
-- locked.
CREATE TABLE address_login_throttle (
    address      inet PRIMARY KEY,
    failures     integer NOT NULL CHECK (failures >= 1),
    window_start timestamptz NOT NULL,
    locked_until timestamptz
);

-- The retention purge selects old windows.
CREATE INDEX address_login_throttle_window_idx ON address_login_throttle (window_start);
