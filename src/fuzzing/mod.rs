//! The fuzz harnesses (SPEC §22): one function per parser of bytes from
//! outside, each handing the bytes to the code the server runs on them and
//! asserting what that code promises (no panic; a tree no deeper than its
//! bound; a value written back reads back the same). `fuzz/fuzz_targets/`
//! calls these under `cargo fuzz`, and `tests/fuzz_corpus.rs` replays the
//! saved corpus and every input that ever failed through them, so a
//! harness lives once.
//!
//! Every harness calls the server's own functions; where a page handler
//! does date arithmetic inline (the day, week and find pages), the
//! `page_query` harness repeats it beside a note naming the handler.

mod calendar;
mod forms;
mod inputs;
mod json;
mod requests;

pub use calendar::{dav_path, freebusy, ics, invitation, rrule, xml};
pub use forms::{form_account, form_booking, form_room, page_query};
pub use json::{json_booking, json_capacity, json_room, json_series};
pub use requests::{accept_language, authorization, cookies, headers};

/// A harness: the bytes of one input, a panic for a failure.
pub type Harness = fn(&[u8]);

/// Every target by name: `fuzz/fuzz_targets/{name}.rs`, `fuzz/corpus/{name}/`
/// and `fuzz/regressions/{name}/`.
pub const TARGETS: &[(&str, Harness)] = &[
    ("xml", xml),
    ("ics", ics),
    ("invitation", invitation),
    ("freebusy", freebusy),
    ("rrule", rrule),
    ("accept_language", accept_language),
    ("authorization", authorization),
    ("cookies", cookies),
    ("headers", headers),
    ("dav_path", dav_path),
    ("form_booking", form_booking),
    ("form_account", form_account),
    ("form_room", form_room),
    ("page_query", page_query),
    ("json_booking", json_booking),
    ("json_series", json_series),
    ("json_room", json_room),
    ("json_capacity", json_capacity),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_harness_takes_nothing_and_garbage() {
        for (_, harness) in TARGETS {
            for input in [&b""[..], b"\0\xff{<", b"date=2030-01-07&start=10:00&end=11:00"] {
                harness(input);
            }
        }
    }
}
