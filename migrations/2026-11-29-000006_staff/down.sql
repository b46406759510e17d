DROP TABLE staff_session;
DROP TABLE staff_user;
