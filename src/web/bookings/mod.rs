//! The booking forms and the booking page. Handlers turn form fields into
//! domain values, run the same commands as the JSON API, and answer
//! with a redirect (success) or the page with the refusal in the page's
//! language and the input kept. One file per step.

mod acting;
mod cancel;
mod create;
mod detail;
mod found;

pub use acting::{for_series as principal_for_series, page_reader};
pub use cancel::{cancel, confirm_cancel};
pub use create::create;
pub use detail::{check_in, detail, move_booking};
pub use found::{load, time_label};
