ALTER TABLE reservation DROP COLUMN organizer_tenant;
