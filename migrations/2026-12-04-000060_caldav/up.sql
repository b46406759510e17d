-- CalDAV (SPEC §17): app passwords, the events calendar apps put, and the
-- change history read as sync tokens.

-- App passwords: random secrets of which only a keyed digest (HMAC-SHA256
-- with YEYAK_SECRET_KEY) is kept, so checking one costs microseconds. A
-- revoked one (or one of a disabled person) never signs in again.
CREATE TABLE app_password (
    id           bigserial PRIMARY KEY,
    staff_id     bigint NOT NULL REFERENCES staff_user (id),
    label        text NOT NULL CHECK (char_length(label) BETWEEN 1 AND 100),
    digest       text NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX app_password_staff_idx ON app_password (staff_id, id);

-- The events a person put through CalDAV: the client's UID and resource
-- name, and the booking (or series) the event became. Written by the
-- transaction that books, so an event is never booked without its UID.
CREATE TABLE dav_event (
    staff_id       bigint NOT NULL REFERENCES staff_user (id),
    uid            text NOT NULL CHECK (char_length(uid) BETWEEN 1 AND 255),
    name           text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
    reservation_id bigint REFERENCES reservation (id),
    series_id      bigint REFERENCES booking_series (id),
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (staff_id, uid),
    UNIQUE (staff_id, name),
    CHECK ((reservation_id IS NULL) <> (series_id IS NULL))
);
CREATE UNIQUE INDEX dav_event_reservation_idx ON dav_event (reservation_id) WHERE reservation_id IS NOT NULL;
CREATE UNIQUE INDEX dav_event_series_idx ON dav_event (series_id) WHERE series_id IS NOT NULL;

-- Sync tokens come from the booking history, which every change writes in
-- its own transaction: each event remembers that transaction's id, and a
-- token is a transaction id below which every change has been seen (see
-- src/dav/sync.rs). No second bookkeeping path for the doors to forget.
ALTER TABLE booking_event ADD COLUMN txid bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint);
CREATE INDEX booking_event_txid_idx ON booking_event (txid);
