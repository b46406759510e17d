//! Request extractors: they turn headers and bodies into domain values or a
//! documented 4xx before a handler runs — who calls (`caller`), the command
//! they send (`command`), and JSON bodies (`json`).

mod caller;
mod command;
mod json;
mod range;

pub use caller::{
    authenticate_first, bearer, AdminCaller, AdminReader, ApiCaller, MaybeOwner, Owner, Reading, OWNER_HEADER,
};
pub use command::{AdminCommand, ApiCommand, IdemKey};
pub use json::{rfc3339, ApiJson, JSON_LIMIT};
pub use range::RangeQuery;
