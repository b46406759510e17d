//! Who is calling: API keys (integrations) and the end user they act for,
//! staff sign-in for the browser UI, and sign-in with the company's
//! identity (OpenID Connect, LDAP; SPEC §16).

pub mod api_key;
pub mod app_password;
pub mod away;
pub mod commands;
pub mod hashing;
pub mod keys;
pub mod ldap;
pub mod linked;
pub mod oidc;
pub mod staff;
pub mod throttle;

pub use crate::identity::{OwnerDigest, OwnerId};
pub use api_key::{ApiKeyRegistry, Caller, Role};

pub use crate::identity::PasswordLogin;
