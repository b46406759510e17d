//! The linking rule (SPEC §8): rooms booked together must be one room, or
//! a contiguous run of one suite's positions; their rules are the
//! strictest of each.

use std::collections::BTreeSet;

use super::{Room, DEFAULT_MAX_DURATION_MINUTES};
use crate::catalogue::hours::AreaRules;
use crate::error::{ApiError, ErrorCode};

/// One room asked for in a booking, as read (and share-locked) inside the
/// booking's transaction, with the active members of its suite in position
/// order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bookable {
    pub code: String,
    pub suite: Option<String>,
    pub position: i32,
    pub max_duration_minutes: i32,
    pub horizon_days: Option<i32>,
    pub approval_required: bool,
    pub check_in_required: bool,
    pub suite_members: Vec<String>,
    /// Its area's zone, hours and holidays.
    pub area: AreaRules,
    /// A desk is booked by day or half day (SPEC §28).
    pub kind: super::RoomKind,
    /// The staff id of a desk's holder.
    pub assigned_to: Option<i64>,
}

/// Rooms that may be booked together, in position order (the order of every
/// write to `reservation_room`, seed 002 §교착), with the rules they share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedRooms {
    rooms: Vec<Bookable>,
}

impl LinkedRooms {
    /// Applies the linking rule to the rooms `asked` for, given what the
    /// database holds of them (`found`: active rooms only).
    pub fn link(asked: &[String], mut found: Vec<Bookable>) -> Result<Self, ApiError> {
        for code in asked {
            if !found.iter().any(|r| &r.code == code) {
                return Err(unknown_room(code));
            }
        }
        found.sort_by(|a, b| (a.position, &a.code).cmp(&(b.position, &b.code)));
        if found.len() > 1 {
            let suite = found[0].suite.clone();
            let same_suite = suite.is_some() && found.iter().all(|r| r.suite == suite);
            let members = &found[0].suite_members;
            let indices: Vec<Option<usize>> = found.iter().map(|r| members.iter().position(|m| m == &r.code)).collect();
            let contiguous = indices.iter().all(Option::is_some)
                && indices.windows(2).all(|w| w[1].zip(w[0]).is_some_and(|(b, a)| b == a + 1));
            if !same_suite || !contiguous {
                return Err(not_linkable(&found));
            }
        }
        Ok(LinkedRooms { rooms: found })
    }

    pub fn codes(&self) -> Vec<String> {
        self.rooms.iter().map(|r| r.code.clone()).collect()
    }

    /// The strictest maximum length among the rooms.
    pub fn max_duration_minutes(&self) -> i32 {
        self.rooms.iter().map(|r| r.max_duration_minutes).min().unwrap_or(DEFAULT_MAX_DURATION_MINUTES)
    }

    /// The shortest horizon among the rooms that have one.
    pub fn horizon_days(&self) -> Option<i32> {
        self.rooms.iter().filter_map(|r| r.horizon_days).min()
    }

    pub fn approval_required(&self) -> bool {
        self.rooms.iter().any(|r| r.approval_required)
    }

    /// The area of the rooms (a suite is in one area, `room_suite_in_one_area`).
    pub fn area(&self) -> &AreaRules {
        static OPEN: std::sync::OnceLock<AreaRules> = std::sync::OnceLock::new();
        self.rooms.first().map_or_else(|| OPEN.get_or_init(AreaRules::default), |r| &r.area)
    }

    pub fn check_in_required(&self) -> bool {
        self.rooms.iter().any(|r| r.check_in_required)
    }

    /// Whether this is a desk (a desk books alone: it has no suite).
    pub fn is_desk(&self) -> bool {
        self.rooms.iter().any(|r| r.kind.is_desk())
    }

    /// The holder of an assigned desk among the rooms.
    pub fn assigned_to(&self) -> Option<i64> {
        self.rooms.iter().find_map(|r| r.assigned_to)
    }
}

pub fn unknown_room(code: &str) -> ApiError {
    ApiError::worded(ErrorCode::UnknownRoom, serde_json::json!({ "field": "rooms", "room": code }))
}

fn not_linkable(found: &[Bookable]) -> ApiError {
    let names: Vec<&str> = found.iter().map(|r| r.code.as_str()).collect();
    let suites: BTreeSet<Option<&str>> = found.iter().map(|r| r.suite.as_deref()).collect();
    // Why, for the catalogue's words: a run of one suite with examples of
    // what may go together, a gap in a small suite, or rooms of no one suite.
    let details = match (suites.len(), found[0].suite_members.as_slice()) {
        (1, members) if members.len() >= 3 && found[0].suite.is_some() => {
            let runs: Vec<String> =
                (2..=members.len()).flat_map(|len| members.windows(len).map(|w| w.join("+"))).take(4).collect();
            serde_json::json!({
                "field": "rooms", "rooms": names, "reason": "suite_run",
                "examples": runs.join(", "), "first": members[0], "last": members[members.len() - 1],
            })
        }
        (1, _) if found[0].suite.is_some() => {
            serde_json::json!({ "field": "rooms", "rooms": names, "reason": "suite_gap" })
        }
        _ => serde_json::json!({ "field": "rooms", "rooms": names, "reason": "apart" }),
    };
    ApiError::worded(ErrorCode::RoomCombinationNotAllowed, details)
}

/// See [`RoomCatalog::combinations`]; `rooms` must be active and ordered.
pub fn combinations(rooms: &[Room]) -> Vec<Vec<String>> {
    let mut runs: Vec<(usize, usize, Vec<String>)> = Vec::new();
    for (i, r) in rooms.iter().enumerate() {
        runs.push((1, i, vec![r.code.clone()]));
    }
    let mut suites: Vec<&str> = rooms.iter().filter_map(|r| r.suite.as_deref()).collect();
    suites.sort_unstable();
    suites.dedup();
    for suite in suites {
        let members: Vec<(usize, &Room)> =
            rooms.iter().enumerate().filter(|(_, r)| r.suite.as_deref() == Some(suite)).collect();
        for len in 2..=members.len() {
            for w in members.windows(len) {
                runs.push((len, w[0].0, w.iter().map(|(_, r)| r.code.clone()).collect()));
            }
        }
    }
    runs.sort_by_key(|(len, first, _)| (*len, *first));
    runs.into_iter().map(|(_, _, codes)| codes).collect()
}
