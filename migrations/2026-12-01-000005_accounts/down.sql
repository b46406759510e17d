DROP TABLE address_login_throttle;
ALTER TABLE api_key DROP COLUMN last_used_at;
ALTER TABLE staff_user DROP COLUMN configured_password_hash, DROP COLUMN disabled_at;
