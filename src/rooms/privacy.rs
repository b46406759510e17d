//! Private bookings (SPEC §26), one rule for every reader: a private
//! booking's title, organizer and attendees are for its organizer, their
//! delegates and admins; everyone else — colleagues, the door display,
//! another owner's integration key, room calendars — reads "비공개 예약" /
//! "Private booking" and nothing else about it. Its time stays busy
//! everywhere (the readers of free time never look at titles).

use super::booking::Booking;
use crate::command::Principal;

/// Who reads bookings.
#[derive(Debug, Clone, Default)]
pub struct Reader {
    admin: bool,
    /// Organizer digests whose private bookings this reader sees: their
    /// own, and the people who named them a delegate.
    digests: Vec<String>,
}

impl Reader {
    /// An admin (a person or an admin key): everything.
    pub fn admin() -> Reader {
        Reader { admin: true, digests: Vec::new() }
    }

    /// Nobody in particular: the door display, room feeds and room
    /// calendars, whose answers are the same whoever asks.
    pub fn anyone() -> Reader {
        Reader::default()
    }

    /// A caller of the pipeline: an admin, else whoever it acts for, and
    /// the people who named them a delegate (`also`: their digests).
    pub fn of(principal: &Principal, also: impl IntoIterator<Item = String>) -> Reader {
        if principal.is_admin() {
            return Reader::admin();
        }
        let mut digests = vec![principal.digest().as_str().to_owned()];
        digests.extend(also);
        Reader { admin: false, digests }
    }

    /// Whether this reader sees what `b` is about.
    pub fn sees(&self, private: bool, organizer_digest: &str) -> bool {
        !private || self.admin || self.digests.iter().any(|d| d == organizer_digest)
    }

    /// `b` as this reader may read it: a private booking they may not see
    /// is titled `label` and names no organizer, tenant or delegate.
    pub fn show(&self, mut b: Booking, label: &str) -> Booking {
        if !self.sees(b.private, &b.organizer_digest) {
            b.title = label.to_owned();
            b.organizer = String::new();
            b.organizer_tenant = None;
            b.booked_by = None;
        }
        b
    }

    pub fn show_all(&self, bookings: Vec<Booking>, label: &str) -> Vec<Booking> {
        bookings.into_iter().map(|b| self.show(b, label)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    #[test]
    fn a_private_booking_is_its_organizers_their_delegates_and_admins() {
        let kim = Principal::person(b"k", 1, "kim", "Kim", false);
        let lee = Principal::person(b"k", 2, "lee", "Lee", false);
        let admin = Principal::person(b"k", 3, "root", "Root", true);
        let mut b = Booking::example(1, "인사 면담", &["A"], Utc::now(), Utc::now());
        b.organizer = "Kim".into();
        b.organizer_digest = kim.digest().as_str().to_owned();
        b.private = true;
        assert_eq!(Reader::of(&kim, []).show(b.clone(), "비공개 예약").title, "인사 면담");
        assert_eq!(Reader::of(&admin, []).show(b.clone(), "비공개 예약").title, "인사 면담");
        let hidden = Reader::of(&lee, []).show(b.clone(), "비공개 예약");
        assert_eq!((hidden.title.as_str(), hidden.organizer.as_str()), ("비공개 예약", ""));
        let delegate = Reader::of(&lee, [kim.digest().as_str().to_owned()]);
        assert_eq!(delegate.show(b.clone(), "x").title, "인사 면담");
        assert_eq!(Reader::anyone().show(b.clone(), "x").title, "x");
        b.private = false;
        assert_eq!(Reader::anyone().show(b, "x").title, "인사 면담", "only private ones");
    }
}
