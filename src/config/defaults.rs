//! The values settings fall back to, and the bounds a public bind holds
//! them to (SPEC §1, §13, §16, §20).

/// The development API key that a fresh local install accepts (README).
pub const DEV_API_KEYS: &str = "dev:admin:yeyak-dev-key";

/// `DATABASE_URL` when unset (SPEC §1).
pub const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/yeyak";

/// The development defaults that must not face a network (SPEC §13).
pub const DEV_ADMIN_PASSWORD: &str = "yeyak-admin";
pub const DEV_SECRET_KEY: &str = "yeyak-dev-secret-change-me";

/// Between failed OpenID discovery attempts (SPEC §16: no more often than
/// every 30 s, at least every 60 s).
pub const DISCOVERY_RETRY: std::ops::RangeInclusive<std::time::Duration> =
    std::time::Duration::from_secs(30)..=std::time::Duration::from_secs(60);

/// The shortest secrets a public bind accepts (SPEC §20), in characters.
pub const MIN_ADMIN_PASSWORD_CHARS: usize = 12;
pub const MIN_API_KEY_SECRET_CHARS: usize = 24;
pub const MIN_SECRET_KEY_CHARS: usize = 32;

/// `YEYAK_ACCESS_LOG_DAYS` when unset (SPEC §26): two years, PIPA's period
/// for access records of systems holding many people's data.
pub const ACCESS_LOG_DAYS: u32 = 730;
