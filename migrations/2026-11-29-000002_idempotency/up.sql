-- Idempotency records (seed 000 §같은 요청을 다시 받았을 때, seed 001 ch. 3-8, SPEC §4).
-- The primary key on the scope resolves the unique-key race; never select-then-insert.
CREATE TABLE idempotency_record (
    tenant           text NOT NULL,
    operation        text NOT NULL,
    idempotency_key  text NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
    fingerprint      text NOT NULL,
    state            text NOT NULL CHECK (state IN ('IN_PROGRESS', 'COMPLETED')),
    owner_token      uuid NOT NULL,
    lease_expires_at timestamptz NOT NULL,
    response_status  smallint CHECK (response_status BETWEEN 100 AND 599),
    -- Kept as text so that a replay returns the first response byte for byte.
    response_body    text,
    created_at       timestamptz NOT NULL,
    completed_at     timestamptz,
    PRIMARY KEY (tenant, operation, idempotency_key),
    CONSTRAINT idempotency_completed_has_response CHECK (
        (state = 'COMPLETED') = (response_status IS NOT NULL AND response_body IS NOT NULL AND completed_at IS NOT NULL)
    )
);

CREATE INDEX idempotency_record_created_idx ON idempotency_record (created_at);
