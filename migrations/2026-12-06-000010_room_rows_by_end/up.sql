-- A room's rows of any status by their end (SPEC §27): one area's
-- utilisation report reads its rooms' rows that end after the period's
-- start, cancelled ones too, instead of every booking of the site in the
-- period (the exclusion indexes hold only active rows).
CREATE INDEX reservation_room_room_end_idx ON reservation_room (room, ends_at);
