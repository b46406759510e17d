//! Who may act on a booking (SPEC §2, §11): the organizer rule, written
//! once for every door. The role check of the pipeline says who may run a
//! command at all; these say who may run it on this booking.

use super::booking::Booking;
use crate::command::Principal;
use crate::error::{ApiError, ErrorCode};

/// What is done to an existing booking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// Move, retitle, cancel, approve or reject.
    Change,
    /// Check in at its start.
    CheckIn,
}

/// Its organizer, or an admin, may change a booking (or a series). The
/// organizer is the digest of whom the booking was made for — the display
/// name never decides.
pub fn may_change(principal: &Principal, organizer_digest: &str) -> bool {
    principal.is_admin() || principal.digest().as_str() == organizer_digest
}

/// Whoever may change a booking may also check it in; so may the door
/// display of one of its rooms (people check in at the door).
pub fn may(principal: &Principal, booking: &Booking, act: Act) -> bool {
    may_change(principal, &booking.organizer_digest)
        || (act == Act::CheckIn && principal.display_room().is_some_and(|room| booking.rooms.iter().any(|r| r == room)))
}

pub fn not_organizer() -> ApiError {
    ApiError::worded(ErrorCode::NotOrganizer, serde_json::json!({}))
}

/// A door display books its own room only, and only that room.
pub fn ensure_may_book(principal: &Principal, rooms: &[String]) -> Result<(), ApiError> {
    match principal.display_room() {
        Some(room) if rooms.len() != 1 || rooms[0] != room => Err(ApiError::worded(
            ErrorCode::Forbidden,
            serde_json::json!({ "field": "rooms", "reason": "display_own_room" }),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn booking_of(organizer: &Principal, rooms: &[&str]) -> Booking {
        let now = Utc::now();
        let mut b = Booking::example(1, "t", rooms, now, now);
        b.organizer_digest = organizer.digest().as_str().to_owned();
        b
    }

    #[test]
    fn the_organizer_rule() {
        let alice = Principal::person(b"k", 1, "alice", "Alice", false);
        let bob = Principal::person(b"k", 2, "bob", "Bob", false);
        let admin = Principal::person(b"k", 3, "root", "Root", true);
        let door_a = Principal::display(b"k", "A", "에이");
        let door_b = Principal::display(b"k", "B", "비");
        let b = booking_of(&alice, &["A"]);
        assert!(may(&alice, &b, Act::Change) && may(&admin, &b, Act::Change));
        assert!(!may(&bob, &b, Act::Change) && !may(&bob, &b, Act::CheckIn));
        assert!(!may(&door_a, &b, Act::Change), "a display changes nothing it did not book");
        assert!(may(&door_a, &b, Act::CheckIn) && !may(&door_b, &b, Act::CheckIn));
        assert!(ensure_may_book(&door_a, &["A".into()]).is_ok());
        assert!(ensure_may_book(&door_a, &["B".into()]).is_err());
        assert!(ensure_may_book(&door_a, &["A".into(), "B".into()]).is_err());
        assert!(ensure_may_book(&alice, &["B".into()]).is_ok());
    }
}
