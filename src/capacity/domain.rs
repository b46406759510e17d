//! Capacity values and wire shapes (SPEC §3, §7.1). No I/O.

use chrono::{DateTime, Utc};
use diesel::{Queryable, QueryableByName, Selectable};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

/// Units asked for by a hold or a waitlist entry: 1-1000, default 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Quantity(i32);

impl Quantity {
    pub const MAX: i32 = 1000;

    pub fn parse(raw: Option<i64>) -> Result<Self, ApiError> {
        match raw {
            None => Ok(Quantity(1)),
            Some(q) if (1..=i64::from(Self::MAX)).contains(&q) => Ok(Quantity(q as i32)),
            Some(_) => Err(ApiError::malformed("quantity", format!("must be 1-{}", Self::MAX))),
        }
    }

    pub fn get(self) -> i32 {
        self.0
    }
}

/// Seconds a hold may be extended by in one call: 1-300.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ExtendBy(i64);

impl ExtendBy {
    pub fn parse(raw: i64) -> Result<Self, ApiError> {
        if (1..=300).contains(&raw) {
            Ok(ExtendBy(raw))
        } else {
            Err(ApiError::malformed("extendBySeconds", "must be 1-300"))
        }
    }

    pub fn seconds(self) -> i64 {
        self.0
    }
}

/// What a hold or a waitlist join asks for: units, and optionally the
/// resource revision and policy version the client saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitsAsk {
    pub quantity: Quantity,
    pub expected_resource_revision: Option<i64>,
    pub policy_version: Option<i32>,
}

impl UnitsAsk {
    pub fn parse(
        quantity: Option<i64>,
        expected_resource_revision: Option<i64>,
        policy_version: Option<i64>,
    ) -> Result<Self, ApiError> {
        Ok(UnitsAsk {
            quantity: Quantity::parse(quantity)?,
            expected_resource_revision: parse_revision("expectedResourceRevision", expected_resource_revision)?,
            policy_version: parse_policy(policy_version)?,
        })
    }

    /// What the idempotency fingerprint of a command on `resource_id` covers.
    pub fn payload(&self, resource_id: i64) -> serde_json::Value {
        serde_json::json!({
            "resourceId": resource_id,
            "quantity": self.quantity.get(),
            "expectedResourceRevision": self.expected_resource_revision,
            "policyVersion": self.policy_version,
        })
    }
}

/// A revision the client expects (`expectedRevision`, `expectedResourceRevision`).
pub fn parse_revision(field: &str, raw: Option<i64>) -> Result<Option<i64>, ApiError> {
    match raw {
        Some(r) if r < 0 => Err(ApiError::malformed(field, "must be 0 or more")),
        other => Ok(other),
    }
}

pub fn parse_policy(raw: Option<i64>) -> Result<Option<i32>, ApiError> {
    match raw {
        None => Ok(None),
        Some(p) if (1..=i64::from(i32::MAX)).contains(&p) => Ok(Some(p as i32)),
        Some(_) => Err(ApiError::malformed("policyVersion", "must be 1 or more")),
    }
}

/// A new resource as asked by an admin.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewResource {
    pub code: String,
    pub name: String,
    pub capacity: i32,
    pub timezone: String,
    pub policy_version: i32,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewResourceBody {
    pub code: String,
    pub name: String,
    pub capacity: i64,
    pub timezone: Option<String>,
    pub policy_version: Option<i64>,
}

impl NewResource {
    pub fn parse(body: NewResourceBody) -> Result<Self, ApiError> {
        let code_ok = (1..=64).contains(&body.code.len())
            && body.code.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
            && body.code.as_bytes()[0].is_ascii_alphanumeric();
        if !code_ok {
            return Err(ApiError::malformed("code", "must be 1-64 of [A-Za-z0-9._-], starting with a letter or digit"));
        }
        let name = crate::rooms::domain::Title::parse_field("name", &body.name)?;
        if !(1..=1_000_000).contains(&body.capacity) {
            return Err(ApiError::malformed("capacity", "must be 1-1000000"));
        }
        let timezone = body.timezone.unwrap_or_else(|| "UTC".to_owned());
        if timezone.parse::<chrono_tz::Tz>().is_err() {
            return Err(ApiError::malformed("timezone", "must be an IANA time zone such as UTC or Asia/Seoul"));
        }
        Ok(NewResource {
            code: body.code,
            name: name.as_str().to_owned(),
            capacity: body.capacity as i32,
            timezone,
            policy_version: parse_policy(body.policy_version)?.unwrap_or(1),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Queryable, Selectable)]
#[serde(rename_all = "camelCase")]
#[diesel(table_name = crate::db::schema::capacity_resource)]
pub struct ResourceRow {
    pub id: i64,
    pub code: String,
    pub name: String,
    pub state: String,
    pub capacity: i32,
    pub occupied_count: i32,
    pub revision: i64,
    pub policy_version: i32,
    pub timezone: String,
    #[serde(skip)]
    pub waiting_count: i32,
}

/// A resource as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceView {
    pub id: i64,
    pub code: String,
    pub name: String,
    pub state: String,
    pub capacity: i32,
    pub occupied_count: i32,
    pub available_count: i32,
    pub revision: i64,
    pub policy_version: i32,
    pub timezone: String,
}

impl From<ResourceRow> for ResourceView {
    fn from(r: ResourceRow) -> Self {
        ResourceView {
            available_count: r.capacity - r.occupied_count,
            id: r.id,
            code: r.code,
            name: r.name,
            state: r.state,
            capacity: r.capacity,
            occupied_count: r.occupied_count,
            revision: r.revision,
            policy_version: r.policy_version,
            timezone: r.timezone,
        }
    }
}

#[derive(
    Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Queryable, QueryableByName, Selectable, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
#[diesel(table_name = crate::db::schema::capacity_hold)]
pub struct Hold {
    pub id: i64,
    pub resource_id: i64,
    pub state: String,
    pub quantity: i32,
    pub revision: i64,
    pub policy_version: i32,
    pub expires_at: Option<DateTime<Utc>>,
    #[serde(skip)]
    pub owner_digest: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Queryable, Selectable, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[diesel(table_name = crate::db::schema::capacity_offer)]
pub struct Offer {
    pub id: i64,
    pub resource_id: i64,
    pub entry_id: i64,
    pub state: String,
    pub revision: i64,
    pub expires_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_id: Option<i64>,
    #[serde(skip)]
    pub quantity: i32,
    #[serde(skip)]
    pub owner_digest: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub id: i64,
    pub resource_id: i64,
    pub state: String,
    pub sequence: i64,
    pub revision: i64,
    /// 1-based place among the WAITING entries; absent once it stopped waiting.
    pub position: Option<i64>,
    pub quantity: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offer_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offer_revision: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offer_expires_at: Option<DateTime<Utc>>,
    #[serde(skip)]
    pub owner_digest: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        assert_eq!(Quantity::parse(None).unwrap().get(), 1);
        assert_eq!(Quantity::parse(Some(1000)).unwrap().get(), 1000);
        assert!(Quantity::parse(Some(0)).is_err());
        assert!(Quantity::parse(Some(-1)).is_err());
        assert!(Quantity::parse(Some(1001)).is_err());
        assert!(Quantity::parse(Some(i64::MAX)).is_err());
    }

    #[test]
    fn extend_bounds() {
        assert!(ExtendBy::parse(0).is_err());
        assert!(ExtendBy::parse(301).is_err());
        assert_eq!(ExtendBy::parse(300).unwrap().seconds(), 300);
    }
}
