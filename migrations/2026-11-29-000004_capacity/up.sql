-- Capacity control plane (seed 000, seed 001, SPEC §3). The constraints make
-- impossible states unrepresentable; `occupied_count` is moved only by the
-- conditional UPDATE of a hold and by promote-or-release.
CREATE TABLE capacity_resource (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    code           text NOT NULL UNIQUE CHECK (code ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
    name           text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    capacity       integer NOT NULL CHECK (capacity BETWEEN 1 AND 1000000),
    occupied_count integer NOT NULL DEFAULT 0,
    -- Moves by one exactly when occupied_count, capacity, state or policy changes.
    revision       bigint NOT NULL DEFAULT 0 CHECK (revision >= 0),
    policy_version integer NOT NULL DEFAULT 1 CHECK (policy_version >= 1),
    timezone       text NOT NULL DEFAULT 'UTC',
    state          text NOT NULL DEFAULT 'OPEN' CHECK (state IN ('OPEN', 'CLOSED')),
    -- FIFO bookkeeping, changed under the resource row lock: the last sequence
    -- handed out and how many entries are WAITING (a new hold may not pass them).
    last_sequence  bigint NOT NULL DEFAULT 0 CHECK (last_sequence >= 0),
    waiting_count  integer NOT NULL DEFAULT 0 CHECK (waiting_count >= 0),
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT capacity_resource_occupied_within_capacity CHECK (0 <= occupied_count AND occupied_count <= capacity)
);

INSERT INTO capacity_resource (code, name, capacity, timezone) VALUES ('demo-room-utc', 'Demo room (UTC)', 1, 'UTC');

CREATE TABLE waitlist_entry (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    resource_id    bigint NOT NULL REFERENCES capacity_resource (id),
    owner_digest   text NOT NULL,
    sequence       bigint NOT NULL CHECK (sequence >= 1),
    state          text NOT NULL CHECK (state IN ('WAITING', 'OFFERED', 'ACCEPTED', 'DECLINED', 'EXPIRED', 'CANCELLED')),
    quantity       integer NOT NULL CHECK (quantity BETWEEN 1 AND 1000),
    revision       bigint NOT NULL DEFAULT 0 CHECK (revision >= 0),
    policy_version integer NOT NULL CHECK (policy_version >= 1),
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    CONSTRAINT waitlist_entry_fifo UNIQUE (resource_id, sequence)
);

CREATE INDEX waitlist_entry_waiting_idx ON waitlist_entry (resource_id, sequence) WHERE state = 'WAITING';

CREATE TABLE capacity_hold (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    resource_id    bigint NOT NULL REFERENCES capacity_resource (id),
    owner_digest   text NOT NULL,
    state          text NOT NULL CHECK (state IN ('HELD', 'CONFIRMED', 'CANCELLED', 'EXPIRED')),
    quantity       integer NOT NULL CHECK (quantity BETWEEN 1 AND 1000),
    revision       bigint NOT NULL DEFAULT 0 CHECK (revision >= 0),
    policy_version integer NOT NULL CHECK (policy_version >= 1),
    -- A HELD hold always expires; a hold born from an accepted offer never did.
    expires_at     timestamptz,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    CONSTRAINT capacity_hold_held_expires CHECK (state <> 'HELD' OR expires_at IS NOT NULL)
);

CREATE INDEX capacity_hold_due_idx ON capacity_hold (expires_at) WHERE state = 'HELD';
CREATE INDEX capacity_hold_live_idx ON capacity_hold (resource_id) WHERE state IN ('HELD', 'CONFIRMED');

CREATE TABLE capacity_offer (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    resource_id  bigint NOT NULL REFERENCES capacity_resource (id),
    -- One offer per entry, ever.
    entry_id     bigint NOT NULL UNIQUE REFERENCES waitlist_entry (id),
    owner_digest text NOT NULL,
    state        text NOT NULL CHECK (state IN ('ACTIVE', 'ACCEPTED', 'DECLINED', 'EXPIRED')),
    quantity     integer NOT NULL CHECK (quantity BETWEEN 1 AND 1000),
    revision     bigint NOT NULL DEFAULT 0 CHECK (revision >= 0),
    expires_at   timestamptz NOT NULL,
    hold_id      bigint UNIQUE REFERENCES capacity_hold (id),
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    CONSTRAINT capacity_offer_accepted_has_hold CHECK ((state = 'ACCEPTED') = (hold_id IS NOT NULL))
);

CREATE INDEX capacity_offer_due_idx ON capacity_offer (expires_at) WHERE state = 'ACTIVE';
CREATE INDEX capacity_offer_live_idx ON capacity_offer (resource_id) WHERE state = 'ACTIVE';
