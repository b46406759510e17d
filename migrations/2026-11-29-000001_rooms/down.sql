DROP TABLE reservation_room;
DROP TABLE reservation;
DROP TABLE room;
