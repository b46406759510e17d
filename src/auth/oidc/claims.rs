//! What a verified OpenID sign-in says about the person (SPEC §16): the
//! ID token's claims, gaps filled from userinfo, and the groups claim
//! (`YEYAK_OIDC_GROUPS_CLAIM`, an array of strings, in either).

use openidconnect::core::CoreGenderClaim;
use openidconnect::{AdditionalClaims, IdTokenClaims, UserInfoClaims};
use serde::{Deserialize, Serialize};

/// Every claim beyond the standard ones, by name (the groups claim's name
/// is configured, so it cannot be a field).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct Extra {
    #[serde(flatten)]
    pub claims: serde_json::Map<String, serde_json::Value>,
}

impl AdditionalClaims for Extra {}

impl Extra {
    /// The groups under `claim`: an array of strings (a lone string is one group).
    fn groups(&self, claim: &str) -> Option<Vec<String>> {
        match self.claims.get(claim)? {
            serde_json::Value::Array(items) => {
                Some(items.iter().filter_map(|g| g.as_str().map(str::to_owned)).collect())
            }
            serde_json::Value::String(one) => Some(vec![one.clone()]),
            _ => None,
        }
    }
}

/// A person as the provider vouched for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub issuer: String,
    pub subject: String,
    pub preferred_username: Option<String>,
    pub name: Option<String>,
    /// Only an address the provider did not mark `email_verified: false`.
    pub email: Option<String>,
    pub groups: Vec<String>,
}

impl Identity {
    /// The ID token's claims first; userinfo (same subject, checked when it
    /// was fetched) fills what the token leaves out. An email address and
    /// its `email_verified` are taken together from one of them.
    pub fn from_claims(
        id: &IdTokenClaims<Extra, CoreGenderClaim>,
        userinfo: Option<&UserInfoClaims<Extra, CoreGenderClaim>>,
        groups_claim: &str,
    ) -> Identity {
        let info = userinfo.map(UserInfoClaims::standard_claims);
        let username = id.preferred_username().or_else(|| info.and_then(|i| i.preferred_username()));
        let name = id.name().and_then(|n| n.get(None)).or_else(|| info.and_then(|i| i.name()?.get(None)));
        let email = match (id.email(), info.and_then(|i| i.email().map(|e| (e, i.email_verified())))) {
            (Some(e), _) => Some((e, id.email_verified())),
            (None, from_info) => from_info,
        };
        let groups =
            id.additional_claims().groups(groups_claim).or_else(|| userinfo?.additional_claims().groups(groups_claim));
        Identity {
            issuer: id.issuer().as_str().to_owned(),
            subject: id.subject().as_str().to_owned(),
            preferred_username: username.map(|u| u.as_str().to_owned()),
            name: name.map(|n| n.as_str().to_owned()),
            email: email.filter(|(_, verified)| *verified != Some(false)).map(|(e, _)| e.as_str().to_owned()),
            groups: groups.unwrap_or_default(),
        }
    }
}

/// Who may sign in and who is an admin, by group (`YEYAK_OIDC_ALLOWED_GROUPS`,
/// `YEYAK_OIDC_ADMIN_GROUPS`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupRules {
    pub admin: Vec<String>,
    /// `None`: everyone the provider signs in.
    pub allowed: Option<Vec<String>>,
}

impl GroupRules {
    /// From the comma-separated settings (blank entries ignored).
    pub fn parse(admin: &str, allowed: Option<&str>) -> GroupRules {
        let list = |raw: &str| raw.split(',').map(str::trim).filter(|g| !g.is_empty()).map(str::to_owned).collect();
        GroupRules { admin: list(admin), allowed: allowed.map(list) }
    }

    pub fn admits(&self, groups: &[String]) -> bool {
        self.allowed.as_ref().is_none_or(|allowed| groups.iter().any(|g| allowed.contains(g)))
    }

    pub fn is_admin(&self, groups: &[String]) -> bool {
        groups.iter().any(|g| self.admin.contains(g))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(json: serde_json::Value) -> IdTokenClaims<Extra, CoreGenderClaim> {
        serde_json::from_value(json).unwrap()
    }

    fn base() -> serde_json::Value {
        serde_json::json!({"iss": "https://id.example", "aud": "yeyak", "sub": "s-1", "exp": 2_000_000_000, "iat": 1_900_000_000})
    }

    #[test]
    fn an_unverified_email_is_ignored_and_groups_come_from_either_source() {
        let mut id = base();
        id["email"] = "kim@example.com".into();
        id["email_verified"] = false.into();
        id["preferred_username"] = "kim".into();
        let who = Identity::from_claims(&claims(id.clone()), None, "groups");
        assert_eq!((who.email, who.preferred_username.as_deref()), (None, Some("kim")));
        id["email_verified"] = true.into();
        id["roles"] = serde_json::json!(["yeyak-admins", 7, "staff"]);
        let who = Identity::from_claims(&claims(id), None, "roles");
        assert_eq!(who.email.as_deref(), Some("kim@example.com"));
        assert_eq!(who.groups, ["yeyak-admins", "staff"]);

        let json = serde_json::json!({
            "sub": "s-1", "name": "김 철수", "email": "k@example.com", "groups": ["office"]
        });
        let info: UserInfoClaims<Extra, CoreGenderClaim> =
            UserInfoClaims::from_json::<std::io::Error>(json.to_string().as_bytes(), None).unwrap();
        let who = Identity::from_claims(&claims(base()), Some(&info), "groups");
        assert_eq!(who.name.as_deref(), Some("김 철수"));
        assert_eq!(who.email.as_deref(), Some("k@example.com"), "no email_verified: not refused");
        assert_eq!(who.groups, ["office"]);
    }

    #[test]
    fn groups_decide_who_may_enter_and_who_is_admin() {
        let rules = GroupRules::parse("yeyak-admins, ops", Some("office,"));
        let g = |gs: &[&str]| gs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(rules.admits(&g(&["office"])));
        assert!(!rules.admits(&g(&["yeyak-admins"])), "admins too must be in an allowed group");
        assert!(rules.is_admin(&g(&["ops"])));
        assert!(!rules.is_admin(&g(&["office"])));
        let open = GroupRules::parse("", None);
        assert!(open.admits(&[]));
        assert!(!open.is_admin(&g(&["anything"])));
    }
}
