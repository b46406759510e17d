-- API keys: only a SHA-256 of each (high-entropy) secret is stored.
CREATE TABLE api_key (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant     text NOT NULL CHECK (tenant ~ '^[A-Za-z0-9._-]{1,64}$'),
    role       text NOT NULL CHECK (role IN ('integration', 'admin')),
    key_hash   text NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
    label      text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
