DROP TABLE idempotency_record;
