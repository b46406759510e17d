DROP INDEX reservation_booked_by_idx;
