//! Every operation a command can run, in one list: what the role-matrix
//! test walks (every operation against every kind of caller), and what
//! `docs/ARCHITECTURE.md` means by "the registrations". A new command adds
//! its operation here; the matrix test then checks its declaration.

use crate::command::Operation;

/// Every declared operation.
pub static ALL: &[&Operation] = &[
    &crate::rooms::store::create::CREATE,
    &crate::rooms::store::move_to::MOVE,
    &crate::rooms::store::cancel::CANCEL,
    &crate::rooms::store::decide::APPROVE,
    &crate::rooms::store::decide::REJECT,
    &crate::rooms::store::retire_room::RETIRE,
    &crate::checkin::CHECK_IN,
    &crate::checkin::release::RELEASE,
    &crate::checkin::restore::RESTORE,
    &crate::series::store::create::CREATE,
    &crate::series::store::change::UPDATE,
    &crate::series::store::cancel::CANCEL,
    &crate::catalogue::commands::CREATE,
    &crate::catalogue::commands::CREATE_AREA,
    &crate::catalogue::commands::UPDATE_AREA,
    &crate::catalogue::commands::CREATE_HOLIDAY_CALENDAR,
    &crate::catalogue::commands::REPLACE_HOLIDAYS,
    &crate::catalogue::commands::UPDATE,
    &crate::catalogue::plans::REPLACE_PLAN,
    &crate::capacity::commands::CREATE_RESOURCE,
    &crate::capacity::commands::CREATE_HOLD,
    &crate::capacity::commands::CONFIRM_HOLD,
    &crate::capacity::commands::CANCEL_HOLD,
    &crate::capacity::commands::EXTEND_HOLD,
    &crate::capacity::commands::JOIN_WAITLIST,
    &crate::capacity::commands::LEAVE_WAITLIST,
    &crate::capacity::commands::ACCEPT_OFFER,
    &crate::capacity::commands::DECLINE_OFFER,
    &crate::capacity::commands::EVICT_ENTRY,
    &crate::capacity::expiry::SETTLE,
    &crate::capacity::expiry::DRAIN,
    &crate::mail::reminders::ENQUEUE,
    &crate::outbox::REDRIVE,
    &crate::sweeper::SWEEP,
    &crate::people::commands::CREATE_STAFF,
    &crate::auth::commands::SET_DISABLED,
    &crate::auth::commands::RESET_PASSWORD,
    &crate::auth::commands::CREATE_KEY,
    &crate::auth::commands::REVOKE_KEY,
    &crate::auth::commands::SET_LANGUAGE,
    &crate::auth::commands::SET_TIME_ZONE,
    &crate::auth::commands::CHANGE_OWN_PASSWORD,
    &crate::people::commands::ADD_DELEGATE,
    &crate::people::commands::REMOVE_DELEGATE,
    &crate::people::commands::UPDATE_STAFF,
    &crate::privacy::erase::ERASE_STAFF,
    &crate::auth::away::ADD,
    &crate::calendar::token::ROTATE,
    &crate::dav::put::PUT,
    &crate::dav::put::DELETE,
    &crate::auth::app_password::CREATE,
    &crate::auth::app_password::REVOKE,
    &crate::display::ISSUE,
    &crate::display::REVOKE,
];

/// The operation named `name`.
pub fn find(name: &str) -> Option<&'static Operation> {
    ALL.iter().copied().find(|op| op.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_operation_allows_someone() {
        let mut names: Vec<&str> = ALL.iter().map(|op| op.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "an operation name is registered twice");
        for op in ALL {
            assert!(!op.allowed.roles().is_empty(), "{} allows nobody", op.name);
        }
    }
}
