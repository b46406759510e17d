-- Sign in with the company's identity (SPEC §16).
-- `source` says where a person signs in: `local` (a password kept here),
-- `oidc` or `ldap` (no local password: `password_hash` holds '!', which no
-- password matches, and the password sign-in looks at local accounts only).
ALTER TABLE staff_user
    ADD COLUMN source text NOT NULL DEFAULT 'local' CHECK (source IN ('local', 'oidc', 'ldap')),
    ADD COLUMN last_sign_in_at timestamptz,
    DROP CONSTRAINT staff_user_password_hash_check,
    ADD CONSTRAINT staff_user_password_hash_check CHECK (
        (source = 'local' AND password_hash LIKE '$argon2%') OR (source <> 'local' AND password_hash = '!'));

-- The link of an account to the company's identity: (issuer, subject) of
-- OpenID Connect, or the directory entry (`ldap`, its entryUUID, objectGUID
-- or DN). Never matched by email or username: the constraint decides who a
-- sign-in is, and an account has at most one link.
CREATE TABLE staff_identity (
    user_id    bigint PRIMARY KEY REFERENCES staff_user (id) ON DELETE CASCADE,
    issuer     text NOT NULL CHECK (issuer <> ''),
    subject    text NOT NULL CHECK (subject <> ''),
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT staff_identity_one_account_per_identity UNIQUE (issuer, subject)
);

-- The ID token of an OpenID sign-in, kept with its session for the
-- provider's sign-out (`id_token_hint`); it ends with the session.
ALTER TABLE staff_session ADD COLUMN id_token text;
