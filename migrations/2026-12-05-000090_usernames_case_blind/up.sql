-- Usernames compare case-insensitively (ASCII; SPEC §22, §25): `Kim` and
-- `kim` are one person, decided by this index, never by a read before an
-- insert. Sign-in looks accounts up through it.
CREATE UNIQUE INDEX staff_user_username_lower_key ON staff_user (lower(username));
ALTER TABLE staff_user DROP CONSTRAINT staff_user_username_key;

-- One throttle row per person whatever the spelling typed.
DELETE FROM staff_login_throttle WHERE username <> lower(username);
ALTER TABLE staff_login_throttle ADD CONSTRAINT staff_login_throttle_username_lower CHECK (username = lower(username));
