-- Floor plans (SPEC §28): an area's plan image, kept in the database beside
-- the area (one backup, one replication stream; at most 5 MiB each). The
-- image was decoded in full before it was stored; `etag` is its SHA-256.
CREATE TABLE area_plan (
    area         text PRIMARY KEY REFERENCES area (code) ON UPDATE CASCADE ON DELETE CASCADE,
    content_type text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg', 'image/webp')),
    image        bytea NOT NULL CHECK (octet_length(image) BETWEEN 1 AND 5242880),
    width        integer NOT NULL CHECK (width BETWEEN 1 AND 8000),
    height       integer NOT NULL CHECK (height BETWEEN 1 AND 8000),
    etag         text NOT NULL,
    updated_at   timestamptz NOT NULL
);
