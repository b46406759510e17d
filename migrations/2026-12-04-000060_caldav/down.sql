DROP INDEX booking_event_txid_idx;
ALTER TABLE booking_event DROP COLUMN txid;
DROP TABLE dav_event;
DROP TABLE app_password;
