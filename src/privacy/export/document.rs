//! The export's document (SPEC §26): the sections a person's JSON holds,
//! as the OpenAPI document describes them and the rows read into them.

use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Int4, Int8, Nullable, Text, Timestamptz};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::rooms::domain::Status;

/// The document, as the OpenAPI document describes it. The export writes
/// these fields in this order, piece by piece, never this struct whole.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersonalExport {
    /// When the export's snapshot was taken.
    pub exported_at: DateTime<Utc>,
    pub profile: ExportProfile,
    pub identities: Vec<ExportIdentity>,
    /// Bookings they organize or made for someone else, by start.
    pub bookings: Vec<ExportBookingEntry>,
    /// Series they organize or made for someone else, by id.
    pub series: Vec<ExportSeriesEntry>,
    pub delegations: ExportDelegations,
    pub app_passwords: Vec<ExportAppPassword>,
    pub sessions: Vec<ExportSession>,
    /// Mail sent (or to be sent) to their address as it is now.
    pub mail_deliveries: Vec<ExportMailDelivery>,
    /// Views of their data by admins (SPEC §26), naming no one.
    pub access_records: Vec<ExportAccessRecord>,
    pub away_days: Vec<ExportAwaySpan>,
}

/// The account.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportProfile {
    pub username: String,
    pub display_name: String,
    pub email: Option<String>,
    pub admin: bool,
    pub disabled: bool,
    pub disabled_at: Option<DateTime<Utc>>,
    /// `ko` or `en`; null: not chosen.
    pub language: Option<String>,
    /// An IANA zone; null: the installation's.
    pub time_zone: Option<String>,
    pub created_at: DateTime<Utc>,
    pub last_sign_in_at: Option<DateTime<Utc>>,
    /// `local`, `oidc` or `ldap` (SPEC §16).
    pub source: String,
}

/// A company identity the account is linked to (SPEC §16).
#[derive(Debug, Serialize, JsonSchema, Queryable)]
#[serde(rename_all = "camelCase")]
pub struct ExportIdentity {
    /// The OpenID issuer, or `ldap:` and the directory.
    pub issuer: String,
    pub subject: String,
    pub created_at: DateTime<Utc>,
}

/// A booking with its rooms and history.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportBookingEntry {
    pub id: i64,
    pub title: String,
    /// The organizer's name as the booking keeps it.
    pub organizer: String,
    /// Whether they organize it (else they made it for someone, SPEC §25).
    pub organized: bool,
    /// The username of the delegate who made it; null when the organizer did.
    pub booked_by: Option<String>,
    /// Room codes.
    pub rooms: Vec<String>,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    pub status: Status,
    pub private: bool,
    pub series_id: Option<i64>,
    pub created_at: DateTime<Utc>,
    pub cancelled_at: Option<DateTime<Utc>>,
    pub checked_in_at: Option<DateTime<Utc>>,
    pub released_at: Option<DateTime<Utc>>,
    /// Every change, oldest first.
    pub history: Vec<ExportHistoryEntry>,
}

/// One change of a booking (SPEC §12).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportHistoryEntry {
    pub at: DateTime<Utc>,
    /// `created`, `moved`, `retitled`, `cancelled`, `checked_in`, …
    pub action: String,
    /// Who made the change, as the history names them.
    pub actor: String,
    /// The person a delegate made it for, else null (as the history API names it).
    #[serde(rename = "onBehalfOf")]
    pub actor_for: Option<String>,
    /// `{field: {before, after}}`.
    pub changes: Value,
}

/// A series.
#[derive(Debug, Serialize, JsonSchema, QueryableByName)]
#[serde(rename_all = "camelCase")]
pub struct ExportSeriesEntry {
    #[diesel(sql_type = Int8)]
    pub id: i64,
    #[diesel(sql_type = Text)]
    pub title: String,
    #[diesel(sql_type = Text, column_name = organizer_name)]
    pub organizer: String,
    #[diesel(sql_type = Bool)]
    pub organized: bool,
    #[diesel(sql_type = Nullable<Text>)]
    pub booked_by: Option<String>,
    #[diesel(sql_type = Array<Text>)]
    pub rooms: Vec<String>,
    /// The RRULE.
    #[diesel(sql_type = Text)]
    pub recurrence: String,
    /// The first occurrence's start and end.
    #[diesel(sql_type = Timestamptz)]
    pub starts_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    pub ends_at: DateTime<Utc>,
    #[diesel(sql_type = Text, column_name = timezone)]
    pub time_zone: String,
    #[diesel(sql_type = Bool)]
    pub private: bool,
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
    /// When repeated no-shows cancelled it (SPEC §25), and when it was restored.
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub struck_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub restored_at: Option<DateTime<Utc>>,
}

/// Whom they named as delegates, and who named them (SPEC §25).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportDelegations {
    pub delegates: Vec<ExportDelegate>,
    pub delegate_for: Vec<ExportDelegate>,
}

/// The other side of a delegation.
#[derive(Debug, Serialize, JsonSchema, Queryable)]
#[serde(rename_all = "camelCase")]
pub struct ExportDelegate {
    pub username: String,
    pub display_name: String,
    pub since: DateTime<Utc>,
}

/// An app password (SPEC §17): never its secret or digest.
#[derive(Debug, Serialize, JsonSchema, Queryable)]
#[serde(rename_all = "camelCase")]
pub struct ExportAppPassword {
    pub label: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A browser session: yeyak keeps when it began and when it ends, no
/// "last seen" time and no address (never its token).
#[derive(Debug, Serialize, JsonSchema, Queryable)]
#[serde(rename_all = "camelCase")]
pub struct ExportSession {
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// A mail to them in the outbox.
#[derive(Debug, Serialize, JsonSchema, QueryableByName)]
#[serde(rename_all = "camelCase")]
pub struct ExportMailDelivery {
    #[diesel(sql_type = Text)]
    pub delivery_id: String,
    #[diesel(sql_type = Text)]
    pub kind: String,
    /// `PENDING`, `DELIVERED` or `EXHAUSTED`.
    #[diesel(sql_type = Text)]
    pub status: String,
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub delivered_at: Option<DateTime<Utc>>,
}

/// An admin's view of their data: when, what, how many people it showed.
#[derive(Debug, Serialize, JsonSchema, QueryableByName)]
#[serde(rename_all = "camelCase")]
pub struct ExportAccessRecord {
    #[serde(skip)]
    #[diesel(sql_type = Int8)]
    pub id: i64,
    #[diesel(sql_type = Timestamptz)]
    pub at: DateTime<Utc>,
    /// `staff_list`, `staff_api_list`, `bookings_csv`, `export`, `history` or `erase`.
    #[diesel(sql_type = Text)]
    pub kind: String,
    #[diesel(sql_type = Int4)]
    pub people: i32,
}

/// Days away (SPEC §28), both inclusive.
#[derive(Debug, Serialize, JsonSchema, Queryable)]
#[serde(rename_all = "camelCase")]
pub struct ExportAwaySpan {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub created_at: DateTime<Utc>,
}
