//! The words pages use for a booking's states, its history's actions and
//! its fields, in the page's language (the domain keeps only codes).

use crate::history::Action;
use crate::i18n::I18n;
use crate::rooms::domain::Status;

/// A booking's status as pages show it.
pub fn status(i18n: &I18n, status: Status) -> String {
    i18n.t(match status {
        Status::Confirmed => "status-confirmed",
        Status::Pending => "status-pending",
        Status::Cancelled => "status-cancelled",
        Status::Rejected => "status-rejected",
        Status::Released => "status-released",
    })
}

/// A history event's action.
pub fn action(i18n: &I18n, action: Action) -> String {
    i18n.t(match action {
        Action::Created => "history-created",
        Action::Moved => "history-moved",
        Action::Retitled => "history-retitled",
        Action::Cancelled => "history-cancelled",
        Action::CheckedIn => "history-checked-in",
        Action::Released => "history-released",
        Action::Approved => "history-approved",
        Action::Rejected => "history-rejected",
        Action::Restored => "history-restored",
    })
}

/// A changed field of a history event (an unknown one as it is named).
pub fn field(i18n: &I18n, name: &str) -> String {
    let key = match name {
        "title" => "history-field-title",
        "rooms" => "history-field-rooms",
        "startsAt" => "history-field-starts-at",
        "endsAt" => "history-field-ends-at",
        "status" => "history-field-status",
        "checkedInAt" => "history-field-checked-in-at",
        "releasedAt" => "history-field-released-at",
        "reason" => "history-field-reason",
        other => return other.to_owned(),
    };
    i18n.t(key)
}
