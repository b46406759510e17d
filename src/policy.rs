//! The rules that come from configuration, as every command reads them
//! (SPEC §3, §11, §12): one value built at start-up and handed to each
//! command's context, so no command reaches for the application state.

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// `YEYAK_TIMEZONE`: where local times and days are read.
    pub timezone: Tz,
    /// `YEYAK_MAX_ACTIVE_BOOKINGS`: live future bookings per organizer.
    pub max_active_bookings: Option<u32>,
    /// A check-in opens this long before the start…
    pub check_in_open: Duration,
    /// …and closes this long after it; then the sweeper releases the booking.
    pub check_in_grace: Duration,
    /// `YEYAK_NO_SHOW_STRIKES`: consecutive no-show releases that cancel a
    /// series' future occurrences (SPEC §25); 0 never.
    pub no_show_strikes: u32,
    /// Notices also go by mail (`YEYAK_SMTP_URL` is set).
    pub mail: bool,
    /// Calendar apps' events invite colleagues and hear rooms' answers by
    /// iMIP mail (`YEYAK_IMIP`, with mail on; SPEC §23).
    pub imip: bool,
    /// Mail reminders go this long before a start (`YEYAK_REMINDER_MINUTES`;
    /// `None` without mail or when 0).
    pub reminder_ahead: Option<Duration>,
    /// A new hold's life (never more than `hold_max_lifetime`).
    pub hold_ttl: Duration,
    /// A hold's longest total life from its creation.
    pub hold_max_lifetime: Duration,
    /// How long an offer to a waiting owner stays open.
    pub offer_ttl: Duration,
    /// WAITING entries older than this expire.
    pub waitlist_max_wait: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            timezone: chrono_tz::Asia::Seoul,
            max_active_bookings: None,
            check_in_open: Duration::minutes(10),
            check_in_grace: Duration::minutes(15),
            no_show_strikes: 3,
            mail: false,
            imip: true,
            reminder_ahead: None,
            hold_ttl: Duration::seconds(300),
            hold_max_lifetime: Duration::seconds(1800),
            offer_ttl: Duration::seconds(300),
            waitlist_max_wait: Duration::hours(24),
        }
    }
}

impl Policy {
    /// `[opens, closes)` of the check-in of a booking starting at `starts_at`.
    pub fn check_in_window(&self, starts_at: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
        (starts_at - self.check_in_open, starts_at + self.check_in_grace)
    }
}
