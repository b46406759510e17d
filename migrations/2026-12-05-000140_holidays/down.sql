ALTER TABLE staff_user DROP COLUMN time_zone;
ALTER TABLE area DROP COLUMN holiday_calendar;
DROP TABLE holiday;
DROP TABLE holiday_calendar;
