//! A booking's deliveries as an admin reads them (SPEC §18): every channel,
//! every kind (notices and reminders), with the last error as the receiver
//! said it, so "I never got the mail" has an answer.

use diesel::sql_types::{Int4, Int8, Nullable, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use serde::Serialize;

use crate::db::cached::CacheExt;
use crate::db::Conn;

/// One delivery of a booking's notice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, QueryableByName, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    #[diesel(sql_type = Text)]
    pub delivery_id: String,
    /// `webhook` or `mail`.
    #[diesel(sql_type = Text)]
    pub channel: String,
    /// The mail recipient (null for the webhook, whose receiver is `YEYAK_WEBHOOK_URL`).
    #[diesel(sql_type = Nullable<Text>)]
    pub recipient: Option<String>,
    /// `PENDING`, `DELIVERED` or `EXHAUSTED` (SPEC §6).
    #[diesel(sql_type = Text)]
    pub status: String,
    #[diesel(sql_type = Int4)]
    pub attempts: i32,
    /// The last SMTP reply or HTTP answer, verbatim (null once delivered).
    #[diesel(sql_type = Nullable<Text>)]
    pub last_error: Option<String>,
}

/// `{deliveries: [...]}`
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Deliveries {
    pub deliveries: Vec<Delivery>,
}

/// The deliveries of booking `id`, oldest first.
pub async fn of_booking(conn: &mut Conn, id: i64) -> diesel::QueryResult<Vec<Delivery>> {
    diesel::sql_query(
        "SELECT delivery_id, channel, payload ->> 'to' AS recipient, status, attempt_count AS attempts, last_error
           FROM notification_outbox
          WHERE (payload ->> 'bookingId')::bigint = $1
          ORDER BY created_at, delivery_id, channel",
    )
    .bind::<Int8, _>(id)
    .cached()
    .load(conn)
    .await
}
