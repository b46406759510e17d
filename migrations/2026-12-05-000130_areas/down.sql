ALTER TABLE room DROP CONSTRAINT room_area_fkey;
DROP TABLE area;
