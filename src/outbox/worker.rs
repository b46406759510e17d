//! The delivery worker: claim due rows with a lease, send, settle. Every
//! process runs one; `SKIP LOCKED` and the lease let them share the work.

use std::sync::Arc;

use chrono::Duration;
use serde::Serialize;
use uuid::Uuid;

use super::provider::{Provider, Providers, SendOutcome};
use super::store::{self, Claimed};
use super::RetryPolicy;
use crate::admission::{Bulkhead, Lane};
use crate::clock::Clock;
use crate::db::{self, DbError, Pool};

/// How long a claim keeps other workers away (SPEC §6).
pub const CLAIM_LEASE_SECONDS: i64 = 30;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliverySummary {
    pub claimed: usize,
    pub delivered: usize,
    pub retried: usize,
    pub exhausted: usize,
    /// Settlements refused because another worker took the row over.
    pub stale: usize,
}

#[derive(Clone)]
pub struct DeliveryWorker {
    pub id: Uuid,
    pool: Pool,
    clock: Arc<dyn Clock>,
    providers: Providers,
    policy: RetryPolicy,
    bulkhead: Option<Arc<Bulkhead>>,
    metrics: Arc<crate::metrics::Metrics>,
}

impl DeliveryWorker {
    pub fn new(pool: Pool, clock: Arc<dyn Clock>, provider: Provider) -> Self {
        DeliveryWorker {
            id: Uuid::new_v4(),
            pool,
            clock,
            providers: Providers { webhook: provider, mail: None },
            policy: RetryPolicy::default(),
            bulkhead: None,
            metrics: Arc::default(),
        }
    }

    /// Delivers `mail` rows with this provider (SMTP).
    pub fn with_mail(mut self, mail: Provider) -> Self {
        self.providers.mail = Some(mail);
        self
    }

    /// Records delivery latency in the application's metrics.
    pub fn with_metrics(mut self, metrics: Arc<crate::metrics::Metrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Does its database work in the bulkhead's background lane.
    pub fn with_bulkhead(mut self, bulkhead: Arc<Bulkhead>) -> Self {
        self.bulkhead = Some(bulkhead);
        self
    }

    /// Claims up to `limit` due deliveries (without sending them).
    pub async fn claim(&self, limit: i64) -> Result<Vec<Claimed>, DbError> {
        let mut conn = self.pool.get().await?;
        Ok(store::claim(&mut conn, self.id, self.clock.now(), Duration::seconds(CLAIM_LEASE_SECONDS), limit).await?)
    }

    /// Sends one claimed delivery and settles it.
    pub async fn deliver(&self, n: &Claimed, summary: &mut DeliverySummary) -> Result<(), DbError> {
        let outcome = match self.providers.send_to(&n.channel) {
            Some(provider) => provider.send(n).await,
            None => {
                SendOutcome::Retryable(format!("no provider for the {} channel (is YEYAK_SMTP_URL set?)", n.channel))
            }
        };
        let now = self.clock.now();
        let mut pooled = self.pool.get().await?;
        let conn: &mut db::Conn = &mut pooled;
        db::begin(conn).await?;
        let settled = self.settle(conn, n, &outcome, now).await;
        let (label, applied) = db::finish(conn, settled).await?;
        match (label, applied) {
            (_, false) => summary.stale += 1,
            ("DELIVERED", true) => {
                summary.delivered += 1;
                let waited = (now - n.created_at).num_milliseconds().max(0) as f64 / 1000.0;
                self.metrics.outbox_delivery.observe(waited);
            }
            ("EXHAUSTED", true) => summary.exhausted += 1,
            _ => summary.retried += 1,
        }
        Ok(())
    }

    async fn settle(
        &self,
        conn: &mut db::Conn,
        n: &Claimed,
        outcome: &SendOutcome,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(&'static str, bool), DbError> {
        let (recorded, detail) = match outcome {
            SendOutcome::Accepted => ("ACCEPTED", None),
            SendOutcome::Duplicate => ("DUPLICATE", None),
            SendOutcome::Retryable(e) => ("RETRYABLE", Some(e.as_str())),
            SendOutcome::Permanent(e) => ("PERMANENT", Some(e.as_str())),
        };
        let result = match outcome {
            SendOutcome::Accepted | SendOutcome::Duplicate => {
                ("DELIVERED", store::mark_delivered(conn, &n.delivery_id, &n.channel, self.id, now).await?)
            }
            SendOutcome::Retryable(e) | SendOutcome::Permanent(e) => {
                let permanent = matches!(outcome, SendOutcome::Permanent(_));
                let exhausted = permanent || n.attempt_count >= self.policy.max_attempts;
                let next = (!exhausted).then(|| now + self.policy.delay(n.attempt_count));
                let applied = store::mark_failed(conn, &n.delivery_id, &n.channel, self.id, next, e).await?;
                (if exhausted { "EXHAUSTED" } else { "PENDING" }, applied)
            }
        };
        let recorded = if result.1 { recorded } else { "STALE" };
        store::record_attempt(conn, n, self.id, now, recorded, detail).await?;
        Ok(result)
    }

    /// One pass: claim, send and settle up to `limit` deliveries.
    pub async fn run_once(&self, limit: i64) -> Result<DeliverySummary, DbError> {
        let _lane = match &self.bulkhead {
            Some(b) => b.enter(Lane::Background).await,
            None => None,
        };
        let claimed = self.claim(limit).await?;
        let mut summary = DeliverySummary { claimed: claimed.len(), ..Default::default() };
        for n in &claimed {
            self.deliver(n, &mut summary).await?;
        }
        Ok(summary)
    }
}
