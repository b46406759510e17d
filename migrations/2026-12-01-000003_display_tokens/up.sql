-- Door displays (SPEC §11): a token per room opens that room's kiosk page and
-- nothing else. Only a SHA-256 of each token is stored.
CREATE TABLE room_display_token (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    room       text NOT NULL REFERENCES room (code),
    token_hash text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    created_by bigint REFERENCES staff_user (id),
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);

CREATE INDEX room_display_token_room_idx ON room_display_token (room) WHERE revoked_at IS NULL;
