DROP TABLE notification_attempt;
DROP TABLE notification_outbox;
