//! Where notifications go: the log (default) or a webhook. The delivery id
//! travels as `Idempotency-Key`, so a receiver that saw it before answers 409
//! and the outbox counts that as delivered. The webhook follows no redirect
//! (SPEC §20): a 3xx could send booking details to wherever the receiver
//! points, an internal address included, so it is a failed attempt, logged
//! and permanent — the same request would be redirected again; the operator
//! fixes `YEYAK_WEBHOOK_URL` and redrives the dead-lettered notices.

use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::json;

use super::store::Claimed;

/// What the receiving side said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendOutcome {
    Accepted,
    /// The receiver had it already (409): delivered earlier.
    Duplicate,
    /// 5xx, timeout, connection failure: try again later.
    Retryable(String),
    /// Any other 4xx, or a redirect (3xx): trying again will not help.
    Permanent(String),
}

#[derive(Debug, Clone)]
pub enum Provider {
    Log,
    Webhook {
        url: String,
        client: reqwest::Client,
    },
    /// The `mail` channel: SMTP (`mail::smtp::Mailer` implements [`Sender`]).
    Smtp(std::sync::Arc<dyn Sender>),
}

/// A channel's sender that lives outside the outbox: the outbox decides when
/// and how often, the sender only how (mail implements it for SMTP).
pub trait Sender: Send + Sync + std::fmt::Debug {
    fn send<'a>(&'a self, n: &'a Claimed) -> BoxFuture<'a, SendOutcome>;

    /// How many sends may run at once (an SMTP pool's size).
    fn concurrency(&self) -> usize {
        1
    }
}

/// The provider of each outbox channel.
#[derive(Debug, Clone)]
pub struct Providers {
    /// `webhook` rows: the webhook, or the log when none is set.
    pub webhook: Provider,
    /// `mail` rows: SMTP when `YEYAK_SMTP_URL` is set.
    pub mail: Option<Provider>,
}

impl Providers {
    pub fn send_to(&self, channel: &str) -> Option<&Provider> {
        match channel {
            "mail" => self.mail.as_ref(),
            _ => Some(&self.webhook),
        }
    }
}

impl Provider {
    /// A webhook provider with a 5 s timeout per request, following no
    /// redirect.
    pub fn webhook(url: &str) -> Self {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .connect_timeout(Duration::from_secs(2))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("HTTP client");
        Provider::Webhook { url: url.to_owned(), client }
    }

    /// How many of this provider's sends a worker runs at once.
    pub fn concurrency(&self) -> usize {
        match self {
            Provider::Smtp(sender) => sender.concurrency().max(1),
            _ => 1,
        }
    }

    pub async fn send(&self, n: &Claimed) -> SendOutcome {
        match self {
            Provider::Log => {
                tracing::info!(delivery_id = %n.delivery_id, kind = %n.kind, payload = %n.payload, "notification");
                SendOutcome::Accepted
            }
            Provider::Webhook { url, client } => {
                let event = json!({
                    "deliveryId": n.delivery_id,
                    "kind": n.kind,
                    "payload": n.payload,
                    "createdAt": n.created_at,
                    "attempt": n.attempt_count,
                });
                match client.post(url).header("Idempotency-Key", &n.delivery_id).json(&event).send().await {
                    Ok(res) if res.status().is_redirection() => {
                        let to = res.headers().get(reqwest::header::LOCATION).and_then(|l| l.to_str().ok());
                        tracing::warn!(
                            delivery_id = %n.delivery_id, status = res.status().as_u16(), location = to.unwrap_or(""),
                            "the webhook answered a redirect, which yeyak does not follow: fix YEYAK_WEBHOOK_URL"
                        );
                        classify(res.status().as_u16())
                    }
                    Ok(res) => classify(res.status().as_u16()),
                    Err(e) => SendOutcome::Retryable(format!("request failed: {e}")),
                }
            }
            Provider::Smtp(mailer) => mailer.send(n).await,
        }
    }
}

/// What an answer means; a failure keeps the HTTP status verbatim
/// (`503 Service Unavailable`) as the delivery's `lastError` (SPEC §18).
fn classify(status: u16) -> SendOutcome {
    let verbatim = || reqwest::StatusCode::from_u16(status).map_or_else(|_| status.to_string(), |s| s.to_string());
    match status {
        200..=299 => SendOutcome::Accepted,
        409 => SendOutcome::Duplicate,
        500..=599 | 408 | 429 => SendOutcome::Retryable(verbatim()),
        // A redirect too: the same address would redirect again (the log line says so).
        _ => SendOutcome::Permanent(verbatim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        assert_eq!(classify(201), SendOutcome::Accepted);
        assert_eq!(classify(409), SendOutcome::Duplicate);
        assert_eq!(classify(503), SendOutcome::Retryable("503 Service Unavailable".into()));
        assert_eq!(classify(400), SendOutcome::Permanent("400 Bad Request".into()));
        for redirect in [301, 302, 303, 307, 308] {
            assert!(matches!(classify(redirect), SendOutcome::Permanent(e) if e.starts_with(&redirect.to_string())));
        }
    }
}
