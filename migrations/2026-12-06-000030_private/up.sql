-- Private bookings (SPEC §26): their time is busy for everyone; their
-- title, organizer and attendees only for the organizer, their delegates
-- and admins (`rooms::privacy`).
ALTER TABLE reservation ADD COLUMN private boolean NOT NULL DEFAULT false;
ALTER TABLE booking_series ADD COLUMN private boolean NOT NULL DEFAULT false;
