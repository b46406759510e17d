//! The SMTP provider of the outbox's `mail` channel (`lettre` builds and
//! speaks, `pool` keeps the connections): `YEYAK_SMTP_URL` (`smtp://host:port`,
//! `smtps://user:pass@host`), `YEYAK_MAIL_FROM`, `YEYAK_SMTP_POOL`. The
//! delivery id is the Message-ID, so a receiver that sees the same message
//! twice (a crash between the server's acceptance and our DELIVERED mark)
//! can tell.

use std::time::Duration;

use chrono_tz::Tz;
use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::Message;

use super::pool::{self, Pool, Sent, Server};
use super::prepared::{is_prepared, Prepared};
use super::{render, Notice};
use crate::outbox::provider::{SendOutcome, Sender};
use crate::outbox::store::Claimed;

/// How long one step (connect, a reply) may take.
const TIMEOUT: Duration = Duration::from_secs(10);

pub struct Mailer {
    pool: Pool,
    from: Mailbox,
    tz: Tz,
    host: String,
    room_domain: String,
    /// Where links in mail point (`YEYAK_PUBLIC_URL`'s origin), or empty.
    links: String,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mailer({}, {:?})", self.from, self.pool)
    }
}

/// Connections open at once unless `YEYAK_SMTP_POOL` says otherwise.
pub const DEFAULT_POOL: usize = 4;

impl Mailer {
    /// A mailer for `url` sending as `from`, its UIDs and Message-IDs on
    /// `host`; the error names what is wrong with the settings. The rooms'
    /// addresses are in `host` and the pool is [`DEFAULT_POOL`] wide unless
    /// set with [`Mailer::with_room_domain`] and [`Mailer::with_pool`].
    pub fn new(url: &str, from: &str, tz: Tz, host: &str) -> Result<Mailer, String> {
        let server = Server::from_url(url, TIMEOUT).map_err(|e| format!("YEYAK_SMTP_URL: {e}"))?;
        let from: Mailbox = from.parse().map_err(|e| format!("YEYAK_MAIL_FROM `{from}`: {e}"))?;
        Ok(Mailer {
            pool: Pool::new(server, DEFAULT_POOL),
            from,
            tz,
            host: host.to_owned(),
            room_domain: host.to_owned(),
            links: String::new(),
        })
    }

    /// At most `size` connections open at once (`YEYAK_SMTP_POOL`).
    pub fn with_pool(mut self, size: usize) -> Self {
        self.pool = self.pool.resized(size);
        self
    }

    /// The origin links in mail start with (`YEYAK_PUBLIC_URL`).
    pub fn with_links(mut self, origin: Option<&str>) -> Self {
        self.links = origin.unwrap_or_default().trim_end_matches('/').to_owned();
        self
    }

    /// The rooms' mail domain (`YEYAK_ROOM_MAIL_DOMAIN`), for their addresses.
    pub fn with_room_domain(mut self, domain: &str) -> Self {
        self.room_domain = domain.to_owned();
        self
    }

    /// How many messages may be in flight at once.
    pub fn connections(&self) -> usize {
        self.pool.size()
    }

    /// Connections parked for reuse now.
    pub fn idle_connections(&self) -> usize {
        self.pool.idle()
    }

    fn message(&self, n: &Claimed) -> Result<(Message, lettre::address::Envelope), String> {
        let unreadable = |e: serde_json::Error| format!("unreadable notice: {e}");
        let p = if is_prepared(&n.kind) {
            serde_json::from_value(n.payload.clone()).map_err(unreadable)?
        } else if n.kind == crate::outbox::Kind::SeriesStruck.as_str() {
            let notice: super::StruckNotice = serde_json::from_value(n.payload.clone()).map_err(unreadable)?;
            super::render_struck(&notice, &self.links)
        } else {
            let notice: Notice = serde_json::from_value(n.payload.clone()).map_err(unreadable)?;
            let r = render(&n.kind, &notice, self.tz, &self.host, &self.room_domain, n.created_at);
            Prepared {
                from: None,
                from_name: None,
                to: notice.to,
                to_name: Some(notice.to_name),
                subject: r.subject,
                text: r.text,
                calendar: r.calendar,
                method: r.method.as_str().to_owned(),
            }
        };
        let address: lettre::Address = p.to.parse().map_err(|e| format!("recipient `{}`: {e}", p.to))?;
        let to = Mailbox::new(p.to_name, address.clone());
        let from = match &p.from {
            Some(from) => Mailbox::new(p.from_name, from.parse().map_err(|e| format!("sender `{from}`: {e}"))?),
            None => self.from.clone(),
        };
        let mut builder = Message::builder().from(from.clone());
        if from != self.from {
            builder = builder.sender(self.from.clone());
        }
        let builder = builder.to(to).subject(p.subject).message_id(Some(format!("<{}@{}>", n.delivery_id, self.host)));
        let message = if p.calendar.is_empty() {
            builder.header(ContentType::TEXT_PLAIN).body(p.text)
        } else {
            let calendar_type = ContentType::parse(&format!("text/calendar; charset=utf-8; method={}", p.method))
                .map_err(|e| e.to_string())?;
            builder.multipart(
                MultiPart::alternative()
                    .singlepart(SinglePart::builder().header(ContentType::TEXT_PLAIN).body(p.text))
                    .singlepart(SinglePart::builder().header(calendar_type).body(p.calendar)),
            )
        }
        .map_err(|e| e.to_string())?;
        let envelope = pool::envelope(&self.from.email, &address)?;
        Ok((message, envelope))
    }

    /// Sends one message. A permanent refusal (5xx) or an unreadable notice
    /// is permanent, with the server's reply as it was; a temporary one
    /// (4xx), a dropped connection or a timeout is retried (SPEC §18).
    pub async fn deliver(&self, n: &Claimed) -> SendOutcome {
        let (message, envelope) = match self.message(n) {
            Ok(m) => m,
            Err(e) => return SendOutcome::Permanent(e),
        };
        match self.pool.send(&envelope, &message.formatted()).await {
            Sent::Accepted => SendOutcome::Accepted,
            Sent::Refused { permanent: true, reply } => SendOutcome::Permanent(reply),
            Sent::Refused { permanent: false, reply } => SendOutcome::Retryable(reply),
            Sent::Failed(e) => SendOutcome::Retryable(format!("SMTP: {e}")),
        }
    }
}

impl Sender for Mailer {
    fn send<'a>(&'a self, n: &'a Claimed) -> futures_util::future::BoxFuture<'a, SendOutcome> {
        Box::pin(self.deliver(n))
    }

    fn concurrency(&self) -> usize {
        self.pool.size()
    }
}
