DROP TABLE room_display_token;
