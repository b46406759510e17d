//! The SMTP provider of the outbox's `mail` channel (`lettre`):
//! `YEYAK_SMTP_URL` (`smtp://host:port`, `smtps://user:pass@host`) and
//! `YEYAK_MAIL_FROM`. The delivery id is the Message-ID, so a receiver that
//! sees the same message twice (a crash between the server's acceptance and
//! our DELIVERED mark) can tell.

use std::time::Duration;

use chrono_tz::Tz;
use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::{render, Notice};
use crate::calendar::ics::Method;
use crate::outbox::provider::{SendOutcome, Sender};
use crate::outbox::store::Claimed;

pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    tz: Tz,
    host: String,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mailer({})", self.from)
    }
}

impl Mailer {
    /// A mailer for `url`; the error names what is wrong with the settings.
    pub fn new(url: &str, from: &str, tz: Tz, host: &str) -> Result<Mailer, String> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| format!("YEYAK_SMTP_URL: {e}"))?
            .timeout(Some(Duration::from_secs(10)))
            .build();
        let from: Mailbox = from.parse().map_err(|e| format!("YEYAK_MAIL_FROM `{from}`: {e}"))?;
        Ok(Mailer { transport, from, tz, host: host.to_owned() })
    }

    fn message(&self, n: &Claimed) -> Result<Message, String> {
        let notice: Notice =
            serde_json::from_value(n.payload.clone()).map_err(|e| format!("unreadable notice: {e}"))?;
        let from_name = self.from.name.clone().unwrap_or_else(|| "yeyak".to_owned());
        let from_addr = self.from.email.to_string();
        let r = render(&n.kind, &notice, self.tz, &self.host, (&from_name, &from_addr), n.created_at);
        let to: Mailbox = Mailbox::new(
            Some(notice.to_name.clone()),
            notice.to.parse().map_err(|e| format!("recipient `{}`: {e}", notice.to))?,
        );
        let method = match r.method {
            Method::Request => "REQUEST",
            Method::Cancel => "CANCEL",
        };
        let calendar_type =
            ContentType::parse(&format!("text/calendar; charset=utf-8; method={method}")).map_err(|e| e.to_string())?;
        Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(r.subject)
            .message_id(Some(format!("<{}@{}>", n.delivery_id, self.host)))
            .multipart(
                MultiPart::alternative()
                    .singlepart(SinglePart::builder().header(ContentType::TEXT_PLAIN).body(r.text))
                    .singlepart(SinglePart::builder().header(calendar_type).body(r.calendar)),
            )
            .map_err(|e| e.to_string())
    }

    /// Sends one message: a permanent SMTP refusal (5xx) or an unreadable
    /// notice is permanent; anything else (down, 4xx, timeout) is retried.
    pub async fn deliver(&self, n: &Claimed) -> SendOutcome {
        let message = match self.message(n) {
            Ok(m) => m,
            Err(e) => return SendOutcome::Permanent(e),
        };
        match self.transport.send(message).await {
            Ok(_) => SendOutcome::Accepted,
            Err(e) if e.is_permanent() => SendOutcome::Permanent(format!("SMTP refused: {e}")),
            Err(e) => SendOutcome::Retryable(format!("SMTP: {e}")),
        }
    }
}

impl Sender for Mailer {
    fn send<'a>(&'a self, n: &'a Claimed) -> futures_util::future::BoxFuture<'a, SendOutcome> {
        Box::pin(self.deliver(n))
    }
}
