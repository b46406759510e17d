//! Who runs a command. Every door turns its caller into a [`Principal`]
//! before anything runs: a signed-in person, an admin (a person or an admin
//! API key), an integration's key acting for one of its owners, the door
//! display of one room, or yeyak's own background work. The pipeline checks
//! the principal's [`Role`] against the command's declaration; the rules
//! that also depend on the thing acted on (the organizer rule) read the
//! principal inside the command.

use crate::identity::{OwnerDigest, OwnerId, Tenant};

/// The kinds of caller a command may be declared for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// A signed-in person without admin rights.
    Staff,
    /// A signed-in admin, or an API key with the admin role.
    Admin,
    /// An integration's API key.
    Integration,
    /// The door display of one room.
    Display,
    /// yeyak's own background work (the sweeper).
    System,
}

impl Role {
    pub const ALL: [Role; 5] = [Role::Staff, Role::Admin, Role::Integration, Role::Display, Role::System];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Staff => "staff",
            Role::Admin => "admin",
            Role::Integration => "integration",
            Role::Display => "display",
            Role::System => "system",
        }
    }

    const fn bit(self) -> u8 {
        match self {
            Role::Staff => 1,
            Role::Admin => 2,
            Role::Integration => 4,
            Role::Display => 8,
            Role::System => 16,
        }
    }
}

/// The roles a command is declared for (a small set, fixed at compile time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowed(u8);

impl Allowed {
    pub const fn of(roles: &[Role]) -> Allowed {
        let mut bits = 0;
        let mut i = 0;
        while i < roles.len() {
            bits |= roles[i].bit();
            i += 1;
        }
        Allowed(bits)
    }

    pub fn permits(self, role: Role) -> bool {
        self.0 & role.bit() != 0
    }

    pub fn roles(self) -> Vec<Role> {
        Role::ALL.into_iter().filter(|r| self.permits(*r)).collect()
    }
}

/// What kind of caller, with what that kind carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A signed-in person without admin rights.
    Staff { id: i64 },
    /// A signed-in admin (`staff_id`), or an admin API key (`None`).
    Admin { staff_id: Option<i64> },
    /// An integration's API key acting for one of its owners.
    Integration,
    /// The door display of the room `room` (its code).
    Display { room: String },
    /// yeyak's own background work.
    System,
}

/// A caller as every command sees it.
#[derive(Debug, Clone)]
pub struct Principal {
    kind: Kind,
    /// The idempotency scope's tenant: the key's tenant, or `staff`,
    /// `display`, `system` for yeyak's own doors.
    tenant: Tenant,
    /// Keyed digest of whom the command acts for: decides ownership and is
    /// part of every fingerprint.
    digest: OwnerDigest,
    /// Who a booking's history names for the change.
    name: String,
    /// A delegate acting for the person this principal is (SPEC §25).
    behalf: Option<Behalf>,
}

/// A delegate acting for a person (SPEC §25): the principal is the person
/// (digest, staff id, role), so ownership, rules, quota and approval follow
/// from them; the delegate is kept for the history, `bookedBy` and mail. The
/// pipeline checks the delegation inside the command's transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Behalf {
    pub delegate_id: i64,
    /// The person's display name, which history shows beside the delegate's.
    pub person_name: String,
}

fn own_tenant(name: &str) -> Tenant {
    Tenant::parse(name).expect("yeyak's own tenant names are valid")
}

impl Principal {
    /// A signed-in person (browser forms): scope tenant `staff`, the
    /// person's digest, admin or staff by their account.
    pub fn person(secret: &[u8], id: i64, username: &str, display_name: &str, is_admin: bool) -> Principal {
        Principal {
            kind: if is_admin { Kind::Admin { staff_id: Some(id) } } else { Kind::Staff { id } },
            tenant: own_tenant("staff"),
            digest: OwnerDigest::of_staff(secret, username),
            name: display_name.to_owned(),
            behalf: None,
        }
    }

    /// The delegate `delegate_id` (named `delegate_name`) acting for the
    /// person `person_id`: a staff principal of the person whatever the
    /// delegate's own role, so the person's rules apply.
    pub fn for_person(
        secret: &[u8],
        (delegate_id, delegate_name): (i64, &str),
        (person_id, person_username, person_name): (i64, &str, &str),
    ) -> Principal {
        Principal {
            kind: Kind::Staff { id: person_id },
            tenant: own_tenant("staff"),
            digest: OwnerDigest::of_staff(secret, person_username),
            name: delegate_name.to_owned(),
            behalf: Some(Behalf { delegate_id, person_name: person_name.to_owned() }),
        }
    }

    /// An API key of `tenant` acting for `owner` (or, without one, for
    /// itself: admin routes that name no `X-Reservation-Owner`).
    pub fn api_key(secret: &[u8], tenant: &Tenant, is_admin: bool, owner: Option<&OwnerId>) -> Principal {
        let digest = match owner {
            Some(owner) => OwnerDigest::of_owner(secret, tenant, owner),
            None => OwnerDigest::of_tenant(secret, tenant),
        };
        Principal {
            kind: if is_admin { Kind::Admin { staff_id: None } } else { Kind::Integration },
            tenant: tenant.clone(),
            digest,
            name: tenant.as_str().to_owned(),
            behalf: None,
        }
    }

    /// The door display of a room: its own organizer digest, so the
    /// bookings it makes are its own; `name` is what history shows (the
    /// door's words, in its language: `도어 디스플레이 (3층 큰 회의실)`).
    pub fn display(secret: &[u8], room_code: &str, name: &str) -> Principal {
        let tenant = own_tenant("display");
        let owner = OwnerId::parse(room_code).expect("room codes are valid owners");
        Principal {
            kind: Kind::Display { room: room_code.to_owned() },
            digest: OwnerDigest::of_owner(secret, &tenant, &owner),
            tenant,
            name: name.to_owned(),
            behalf: None,
        }
    }

    /// yeyak's own background work, named `name` in the history.
    pub fn system(name: &str) -> Principal {
        Principal {
            kind: Kind::System,
            tenant: own_tenant("system"),
            digest: OwnerDigest::from_stored(String::new()),
            name: name.to_owned(),
            behalf: None,
        }
    }

    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    pub fn role(&self) -> Role {
        match self.kind {
            Kind::Staff { .. } => Role::Staff,
            Kind::Admin { .. } => Role::Admin,
            Kind::Integration => Role::Integration,
            Kind::Display { .. } => Role::Display,
            Kind::System => Role::System,
        }
    }

    /// Admins change anyone's bookings and are exempt from the booking
    /// rules that protect others from one person (horizon, approval, quota).
    pub fn is_admin(&self) -> bool {
        matches!(self.kind, Kind::Admin { .. })
    }

    /// The signed-in person behind the call, if any.
    pub fn staff_id(&self) -> Option<i64> {
        match self.kind {
            Kind::Staff { id } => Some(id),
            Kind::Admin { staff_id } => staff_id,
            _ => None,
        }
    }

    /// The room of a door display.
    pub fn display_room(&self) -> Option<&str> {
        match &self.kind {
            Kind::Display { room } => Some(room),
            _ => None,
        }
    }

    pub fn tenant(&self) -> &Tenant {
        &self.tenant
    }

    /// The tenant of the API key behind the call (an integration's, or an
    /// admin key's), which a booking keeps so pages never show it as a
    /// colleague's (SPEC §20); none for people, door displays and the system.
    pub fn key_tenant(&self) -> Option<&Tenant> {
        match self.kind {
            Kind::Integration | Kind::Admin { staff_id: None } => Some(&self.tenant),
            _ => None,
        }
    }

    pub fn digest(&self) -> &OwnerDigest {
        &self.digest
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The delegation this principal acts under, if any.
    pub fn behalf(&self) -> Option<&Behalf> {
        self.behalf.as_ref()
    }

    /// The delegate a booking made now records as `bookedBy`.
    pub fn booked_by(&self) -> Option<i64> {
        self.behalf.as_ref().map(|b| b.delegate_id)
    }

    /// Whom the history names the change for (the person, when a delegate acts).
    pub fn acting_for(&self) -> Option<&str> {
        self.behalf.as_ref().map(|b| b.person_name.as_str())
    }

    /// The account the history's actor names (the delegate, when one acts),
    /// so an erase renames exactly that person's entries (SPEC §26).
    pub fn actor_staff_id(&self) -> Option<i64> {
        self.behalf.as_ref().map(|b| b.delegate_id).or_else(|| self.staff_id())
    }

    /// The account of [`Principal::acting_for`].
    pub fn acting_for_staff_id(&self) -> Option<i64> {
        self.behalf.as_ref().and(self.staff_id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_have_their_roles() {
        let t = Tenant::parse("t").unwrap();
        assert_eq!(Principal::person(b"k", 1, "a", "A", false).role(), Role::Staff);
        assert_eq!(Principal::person(b"k", 1, "a", "A", true).role(), Role::Admin);
        assert_eq!(Principal::api_key(b"k", &t, true, None).role(), Role::Admin);
        assert_eq!(Principal::api_key(b"k", &t, false, None).role(), Role::Integration);
        assert_eq!(Principal::display(b"k", "A", "에이").role(), Role::Display);
        assert_eq!(Principal::system("s").role(), Role::System);
        assert_eq!(Principal::person(b"k", 7, "a", "A", true).staff_id(), Some(7));
        assert_eq!(Principal::api_key(b"k", &t, true, None).staff_id(), None);
        assert_eq!(Principal::api_key(b"k", &t, false, None).key_tenant(), Some(&t));
        assert_eq!(Principal::api_key(b"k", &t, true, None).key_tenant(), Some(&t));
        assert_eq!(Principal::person(b"k", 7, "a", "A", true).key_tenant(), None);
        assert_eq!(Principal::person(b"k", 7, "a", "A", false).key_tenant(), None);
        assert_eq!(Principal::display(b"k", "A", "에이").key_tenant(), None);
        assert_eq!(Principal::system("s").key_tenant(), None);
        let d = Principal::for_person(b"k", (7, "Dee"), (9, "pat", "Pat"));
        assert_eq!(d.role(), Role::Staff);
        assert_eq!(d.staff_id(), Some(9));
        assert_eq!(d.digest(), Principal::person(b"k", 9, "pat", "Pat", false).digest());
        assert_eq!((d.name(), d.acting_for(), d.booked_by()), ("Dee", Some("Pat"), Some(7)));
    }

    #[test]
    fn allowed_sets() {
        let a = Allowed::of(&[Role::Staff, Role::Integration]);
        assert!(a.permits(Role::Staff) && a.permits(Role::Integration));
        assert!(!a.permits(Role::Admin) && !a.permits(Role::Display) && !a.permits(Role::System));
        assert_eq!(a.roles(), vec![Role::Staff, Role::Integration]);
    }
}
