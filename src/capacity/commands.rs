//! The capacity commands of SPEC §7.1, each run by the pipeline in one
//! transaction for the principal's owner digest: a resource (admin), holds,
//! the waitlist and offers (integrations and admins), an admin's eviction.
//! Their fingerprints are the JSON below, unchanged since Part I.

use serde_json::{json, Value};

use super::domain::{Entry, ExtendBy, Hold, NewResource, Offer, ResourceView, UnitsAsk};
use super::{holds, resources, waitlist};
use crate::command::{Command, CommandError, Ctx, Operation, ResultCounter, Role};
use crate::db::Conn;

const CLIENTS: &[Role] = &[Role::Integration, Role::Admin];

pub static CREATE_RESOURCE: Operation = Operation::new("resource.create", &[Role::Admin]).creates();
pub static CREATE_HOLD: Operation = Operation::new("hold.create", CLIENTS).creates().counted_in(ResultCounter::Holds);
pub static CONFIRM_HOLD: Operation = Operation::new("hold.confirm", CLIENTS);
pub static CANCEL_HOLD: Operation = Operation::new("hold.cancel", CLIENTS);
pub static EXTEND_HOLD: Operation = Operation::new("hold.extend", CLIENTS);
pub static JOIN_WAITLIST: Operation = Operation::new("waitlist.join", CLIENTS).creates();
pub static LEAVE_WAITLIST: Operation = Operation::new("waitlist.cancel", CLIENTS);
pub static ACCEPT_OFFER: Operation = Operation::new("offer.accept", CLIENTS);
pub static DECLINE_OFFER: Operation = Operation::new("offer.decline", CLIENTS);
pub static EVICT_ENTRY: Operation = Operation::new("waitlist.evict", &[Role::Admin]);

/// Implements [`Command`] for a struct from its operation, fingerprint and
/// work (the work reads the struct as `$s` and the context as `$ctx`).
macro_rules! capacity_command {
    ($name:ident, $op:ident, $out:ty, |$s:ident| $fingerprint:expr, |$c:ident, $ctx:ident| $work:expr) => {
        impl Command for $name {
            type Output = $out;

            fn operation(&self) -> &'static Operation {
                &$op
            }

            fn fingerprint(&self) -> Value {
                let $s = self;
                $fingerprint
            }

            async fn run(&self, $c: &mut Conn, $ctx: &Ctx<'_>) -> Result<$out, CommandError> {
                let $s = self;
                $work
            }
        }
    };
}

#[derive(Debug, Clone)]
pub struct CreateResource(pub NewResource);

capacity_command!(
    CreateResource,
    CREATE_RESOURCE,
    ResourceView,
    |s| serde_json::to_value(&s.0).unwrap_or_default(),
    |conn, ctx| resources::create(conn, &s.0, ctx.now).await.map(ResourceView::from)
);

#[derive(Debug, Clone, Copy)]
pub struct CreateHold {
    pub resource_id: i64,
    pub ask: UnitsAsk,
}

capacity_command!(CreateHold, CREATE_HOLD, Hold, |s| s.ask.payload(s.resource_id), |conn, ctx| {
    let hold_ttl = ctx.policy.hold_ttl;
    holds::create(conn, s.resource_id, ctx.principal.digest(), s.ask, ctx.now, hold_ttl).await
});

/// A confirm or a cancel of a hold: the revision and policy version seen.
#[derive(Debug, Clone, Copy)]
pub struct HoldTransition {
    pub hold_id: i64,
    pub expected_revision: Option<i64>,
    pub policy_version: Option<i32>,
}

impl HoldTransition {
    fn payload(&self) -> Value {
        json!({ "holdId": self.hold_id, "expectedRevision": self.expected_revision, "policyVersion": self.policy_version })
    }
}

#[derive(Debug, Clone, Copy)]
pub struct ConfirmHold(pub HoldTransition);

capacity_command!(ConfirmHold, CONFIRM_HOLD, Hold, |s| s.0.payload(), |conn, ctx| {
    let t = s.0;
    holds::confirm(conn, t.hold_id, ctx.principal.digest(), t.expected_revision, t.policy_version, ctx.now).await
});

#[derive(Debug, Clone, Copy)]
pub struct CancelHold(pub HoldTransition);

capacity_command!(CancelHold, CANCEL_HOLD, Hold, |s| s.0.payload(), |conn, ctx| {
    let (t, ttl) = (s.0, ctx.policy.offer_ttl);
    holds::cancel(conn, t.hold_id, ctx.principal.digest(), t.expected_revision, t.policy_version, ctx.now, ttl).await
});

#[derive(Debug, Clone, Copy)]
pub struct ExtendHold {
    pub hold_id: i64,
    pub expected_revision: Option<i64>,
    pub by: ExtendBy,
}

capacity_command!(
    ExtendHold,
    EXTEND_HOLD,
    Hold,
    |s| json!({ "holdId": s.hold_id, "expectedRevision": s.expected_revision, "extendBySeconds": s.by.seconds() }),
    |conn, ctx| {
        let max = ctx.policy.hold_max_lifetime;
        holds::extend(conn, s.hold_id, ctx.principal.digest(), s.expected_revision, s.by, max, ctx.now).await
    }
);

#[derive(Debug, Clone, Copy)]
pub struct JoinWaitlist {
    pub resource_id: i64,
    pub ask: UnitsAsk,
}

capacity_command!(JoinWaitlist, JOIN_WAITLIST, Entry, |s| s.ask.payload(s.resource_id), |conn, ctx| {
    waitlist::join(conn, s.resource_id, ctx.principal.digest(), s.ask, ctx.now).await
});

#[derive(Debug, Clone, Copy)]
pub struct LeaveWaitlist {
    pub entry_id: i64,
    pub expected_revision: Option<i64>,
}

capacity_command!(
    LeaveWaitlist,
    LEAVE_WAITLIST,
    Entry,
    |s| json!({ "entryId": s.entry_id, "expectedRevision": s.expected_revision }),
    |conn, ctx| {
        let ttl = ctx.policy.offer_ttl;
        waitlist::leave(conn, s.entry_id, ctx.principal.digest(), s.expected_revision, ctx.now, ttl).await
    }
);

#[derive(Debug, Clone, Copy)]
pub struct AcceptOffer {
    pub offer_id: i64,
    pub expected_revision: Option<i64>,
}

capacity_command!(
    AcceptOffer,
    ACCEPT_OFFER,
    Offer,
    |s| json!({ "offerId": s.offer_id, "expectedRevision": s.expected_revision }),
    |conn, ctx| waitlist::accept(conn, s.offer_id, ctx.principal.digest(), s.expected_revision, ctx.now).await
);

#[derive(Debug, Clone, Copy)]
pub struct DeclineOffer {
    pub offer_id: i64,
    pub expected_revision: Option<i64>,
}

capacity_command!(
    DeclineOffer,
    DECLINE_OFFER,
    Offer,
    |s| json!({ "offerId": s.offer_id, "expectedRevision": s.expected_revision }),
    |conn, ctx| {
        let ttl = ctx.policy.offer_ttl;
        waitlist::decline(conn, s.offer_id, ctx.principal.digest(), s.expected_revision, ctx.now, ttl).await
    }
);

/// An admin's eviction of a WAITING or OFFERED entry (SPEC §13).
#[derive(Debug, Clone, Copy)]
pub struct EvictEntry {
    pub entry_id: i64,
    pub expected_revision: Option<i64>,
}

capacity_command!(
    EvictEntry,
    EVICT_ENTRY,
    Entry,
    |s| json!({ "entryId": s.entry_id, "expectedRevision": s.expected_revision }),
    |conn, ctx| {
        let ttl = ctx.policy.offer_ttl;
        waitlist::evict(conn, s.entry_id, s.expected_revision, ctx.now, ttl).await
    }
);
