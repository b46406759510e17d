-- Repeated failed sign-ins per username (known or not) slow further attempts down.
CREATE TABLE staff_login_throttle (
    username     text PRIMARY KEY CHECK (username ~ '^[A-Za-z0-9._-]{1,64}$'),
    failures     integer NOT NULL CHECK (failures >= 1),
    window_start timestamptz NOT NULL,
    locked_until timestamptz
);
