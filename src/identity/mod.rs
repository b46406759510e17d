//! Who acts, as values with no I/O (the ground under `command`,
//! `idempotency`, `config` and `auth`): an integration's tenant and key,
//! the end user it acts for and the digest that is all yeyak stores of
//! them, and who may sign in with a password. `auth` finds and checks them.

pub mod key;
pub mod owner;
pub mod password_login;

pub use key::{Caller, ConfiguredKey, Role, Tenant};
pub use owner::{OwnerDigest, OwnerId};
pub use password_login::PasswordLogin;
