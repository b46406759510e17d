ALTER TABLE staff_login_throttle DROP CONSTRAINT staff_login_throttle_username_lower;
ALTER TABLE staff_user ADD CONSTRAINT staff_user_username_key UNIQUE (username);
DROP INDEX staff_user_username_lower_key;
