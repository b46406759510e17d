-- A person's export (SPEC §26) reads the bookings they made for someone
-- else (SPEC §25) by start, a page at a time, beside those they organize
-- (reservation_staff_idx); only delegates' bookings have a booked_by.
CREATE INDEX reservation_booked_by_idx ON reservation (booked_by, starts_at) WHERE booked_by IS NOT NULL;
