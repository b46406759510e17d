ALTER TABLE staff_user DROP COLUMN language;
