//! Who is calling: API keys (integrations) and the end user they act for.
//! Staff sign-in for the browser UI lands beside these.

pub mod api_key;
pub mod app_password;
pub mod commands;
pub mod hashing;
pub mod keys;
pub mod owner;
pub mod staff;
pub mod throttle;

pub use api_key::{ApiKeyRegistry, Caller, Role};
pub use owner::{OwnerDigest, OwnerId};
