//! Messages written whole when they are queued (SPEC §23's iMIP): the
//! invitation is the person's own stored event and the reply a room's
//! answer, both known only in the transaction that stores the event, so the
//! outbox row carries the finished message and the mail worker only sends
//! it. Outbox kinds `imip.request`, `imip.cancel`, `imip.reply`.

use serde::{Deserialize, Serialize};

/// Whether an outbox kind carries a [`Prepared`] message.
pub fn is_prepared(kind: &str) -> bool {
    kind.starts_with("imip.")
}

/// A finished message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prepared {
    /// The `From:` address (a room's, the organizer's); none:
    /// `YEYAK_MAIL_FROM`, which is always the envelope sender and `Sender:`.
    pub from: Option<String>,
    pub from_name: Option<String>,
    pub to: String,
    pub to_name: Option<String>,
    pub subject: String,
    pub text: String,
    /// The `text/calendar` part.
    pub calendar: String,
    /// Its `METHOD` (`REQUEST`, `CANCEL`, `REPLY`).
    pub method: String,
}
