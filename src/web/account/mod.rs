//! The person's own account (SPEC §13, §15, §16, §17, §19): signing in and
//! out (`sign_in`), the account page (`page`) and what they change there
//! (`settings`), and their data to take away (`export`). Each step in a
//! file of its own; the route table names them through this module.

mod away;
mod export;
mod page;
mod settings;
mod sign_in;

pub use away::add_away;
pub use export::export_json;
pub use page::account;
pub use settings::{
    add_delegate, change_password, choose_language, choose_time_zone, create_app_password, remove_delegate,
    revoke_app_password, rotate_calendar_token, MIN_PASSWORD_CHARS,
};
pub use sign_in::{login, login_form, logout, safe_next, LoginQuery};
