-- Notification outbox (seed 000 §알림 작업자, SPEC §6). A row is written in the
-- same transaction as the state change that causes it, keyed by a stable
-- delivery id, so enqueueing twice is harmless and providers can deduplicate.
CREATE TABLE notification_outbox (
    delivery_id      text PRIMARY KEY CHECK (length(delivery_id) BETWEEN 1 AND 200),
    kind             text NOT NULL CHECK (kind IN ('offer.created', 'offer.expired', 'hold.expired')),
    payload          jsonb NOT NULL,
    status           text NOT NULL CHECK (status IN ('PENDING', 'DELIVERED', 'EXHAUSTED')),
    attempt_count    integer NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    next_attempt_at  timestamptz,
    -- The worker that claimed the row and until when; only it may mark the outcome.
    claimed_by       uuid,
    claim_expires_at timestamptz,
    last_error       text,
    created_at       timestamptz NOT NULL,
    delivered_at     timestamptz,
    CONSTRAINT notification_pending_has_next_attempt CHECK ((status = 'PENDING') = (next_attempt_at IS NOT NULL)),
    CONSTRAINT notification_delivered_has_time CHECK ((status = 'DELIVERED') = (delivered_at IS NOT NULL))
);

CREATE INDEX notification_outbox_due_idx ON notification_outbox (next_attempt_at) WHERE status = 'PENDING';

-- One row per attempt, for operators and for the backoff tests.
CREATE TABLE notification_attempt (
    delivery_id  text NOT NULL REFERENCES notification_outbox (delivery_id) ON DELETE CASCADE,
    attempt      integer NOT NULL CHECK (attempt >= 1),
    worker       uuid NOT NULL,
    attempted_at timestamptz NOT NULL,
    outcome      text NOT NULL CHECK (outcome IN ('ACCEPTED', 'DUPLICATE', 'RETRYABLE', 'PERMANENT', 'STALE')),
    detail       text,
    PRIMARY KEY (delivery_id, attempt, worker)
);
