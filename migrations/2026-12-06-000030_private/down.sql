ALTER TABLE booking_series DROP COLUMN private;
ALTER TABLE reservation DROP COLUMN private;
