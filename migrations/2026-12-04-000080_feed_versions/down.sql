DROP INDEX notification_outbox_booking_idx;
DROP TRIGGER staff_feed_bump ON staff_user;
DROP TRIGGER room_feed_bump ON room;
DROP FUNCTION calendar_feed_bump();
DROP TRIGGER booking_event_feed_bump ON booking_event;
DROP FUNCTION calendar_feed_bump_bookings();
DROP TABLE calendar_feed_version;
