-- Privacy (SPEC §26, issue 42): access records (PIPA's 접속기록).

-- The retention of access records, one row, written by every yeyak process at
-- start-up from `YEYAK_ACCESS_LOG_DAYS` (privacy::access::set_retention).
-- The append-only trigger below reads it from here rather than from a GUC set
-- per connection: a GUC is whatever the session that deletes says it is (a
-- psql session, a pool connection someone forgot), while this row is one
-- value every session sees, and changing it is itself a visible write.
CREATE TABLE privacy_setting (
    only_row        boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    access_log_days integer NOT NULL DEFAULT 730 CHECK (access_log_days >= 1)
);
INSERT INTO privacy_setting (only_row, access_log_days) VALUES (true, 730);

-- Every view or download by an admin of other people's personal data: who
-- (a signed-in admin's staff id and username, or an admin key's tenant), when
-- (the database's clock), what (`kind`), about whom (`subject`, null for a
-- list), from which address, how many people.
CREATE TABLE access_record (
    id            bigserial PRIMARY KEY,
    at            timestamptz NOT NULL DEFAULT now(),
    actor_staff   bigint,
    actor_tenant  text,
    actor_name    text NOT NULL,
    kind          text NOT NULL CHECK (kind IN (
        'staff_list', 'staff_api_list', 'bookings_csv', 'export', 'history', 'erase')),
    subject       bigint,
    address       inet,
    people        integer NOT NULL CHECK (people >= 0),
    CONSTRAINT access_record_one_actor CHECK ((actor_staff IS NULL) <> (actor_tenant IS NULL))
);
CREATE INDEX access_record_at_idx ON access_record (at);
CREATE INDEX access_record_subject_idx ON access_record (subject) WHERE subject IS NOT NULL;

-- Append-only, decided by the database: no UPDATE ever, no DELETE of a
-- record younger than the retention, no TRUNCATE.
CREATE FUNCTION access_record_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        RAISE EXCEPTION 'access_record is append-only: UPDATE refused'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF OLD.at >= now() - make_interval(days => (SELECT access_log_days FROM privacy_setting)) THEN
        RAISE EXCEPTION 'access_record % is younger than the retention: DELETE refused', OLD.id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN OLD;
END $$;
CREATE TRIGGER access_record_append_only BEFORE UPDATE OR DELETE ON access_record
    FOR EACH ROW EXECUTE FUNCTION access_record_append_only();

CREATE FUNCTION access_record_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'access_record is append-only: TRUNCATE refused' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER access_record_no_truncate BEFORE TRUNCATE ON access_record
    FOR EACH STATEMENT EXECUTE FUNCTION access_record_no_truncate();
