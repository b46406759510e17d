//! People (SPEC §25): delegates who book for a person, and the staff
//! directory with the commands an admin changes a person by, for the staff
//! page and the JSON API alike.

pub mod commands;
pub mod delegation;
pub mod directory;

pub use commands::{AddDelegate, CreateStaff, RemoveDelegate, UpdateStaff};
pub use directory::{StaffPage, StaffRecord};
