DROP TABLE staff_login_throttle;
