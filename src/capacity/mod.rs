//! Capacity control plane (seed 000, seed 001, SPEC §3, §7.1): resources sold
//! in counted units, holds, a FIFO waitlist, offers, and the hand-off that
//! passes freed units to the next waiter without ever releasing them first.
//!
//! `domain` holds values and wire shapes; `resources`, `holds`, `waitlist`,
//! `handoff` and `expiry` the SQL of each step (every function runs inside
//! the caller's transaction); `commands` what the doors run.

pub mod commands;
pub mod domain;
pub mod expiry;
pub mod handoff;
pub mod holds;
pub mod resources;
pub mod waitlist;

use serde_json::json;

use crate::error::{ApiError, ErrorCode};

pub fn owner_mismatch() -> ApiError {
    ApiError::new(ErrorCode::OwnerMismatch, "this belongs to another owner")
}

fn invalid_state(state: &str) -> ApiError {
    ApiError::new(ErrorCode::InvalidState, format!("not allowed in state {state}"))
        .with_details(json!({ "state": state }))
}

fn stale_revision(expected: i64, current: i64) -> ApiError {
    ApiError::new(ErrorCode::StaleRevision, "the revision changed; read it again")
        .with_details(json!({ "expectedRevision": expected, "currentRevision": current }))
        .with_current_revision(current)
}

fn policy_mismatch(asked: i32, current: i32) -> ApiError {
    ApiError::new(ErrorCode::PolicyVersionMismatch, "the resource's policy version changed")
        .with_details(json!({ "policyVersion": asked, "currentPolicyVersion": current }))
}

/// Checks an optional expected revision against the current one.
fn check_revision(expected: Option<i64>, current: i64) -> Result<(), ApiError> {
    match expected {
        Some(e) if e != current => Err(stale_revision(e, current)),
        _ => Ok(()),
    }
}

fn check_policy(asked: Option<i32>, current: i32) -> Result<(), ApiError> {
    match asked {
        Some(p) if p != current => Err(policy_mismatch(p, current)),
        _ => Ok(()),
    }
}
