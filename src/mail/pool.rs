//! SMTP connections kept open and shared (SPEC §18): at most
//! `YEYAK_SMTP_POOL` open at once per process, each reused for message
//! after message, every socket with `TCP_NODELAY`.
//!
//! Why not lettre's own transport: its client writes a message in two
//! pieces (the body, then `\r\n.\r\n`) and waits for the reply. Without
//! `TCP_NODELAY` Nagle holds the second piece until the server ACKs the
//! first, and a server that has nothing to say until it sees the end delays
//! that ACK (40 ms on Linux): each message stalled about 48 ms, 44
//! messages/s over reused connections (issue 29). lettre opens its sockets
//! itself, so here the socket is ours ([`AsyncSmtpConnection::connect_with_transport`])
//! and lettre speaks SMTP on it. Its pool also bounds only idle
//! connections and sends a `NOOP` before each reuse; this one bounds open
//! ones and tests only a connection that sat idle.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{AsyncSmtpConnection, AsyncTokioStream, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use lettre::transport::smtp::Error as SmtpError;
use lettre::Address;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

/// How a connection is encrypted.
#[derive(Clone)]
enum Encryption {
    None,
    /// `STARTTLS` after the greeting; `required`: refuse a server without it.
    StartTls {
        params: TlsParameters,
        required: bool,
    },
    /// TLS from the first byte (`smtps://`).
    Implicit(TlsParameters),
}

/// Where and how to connect: `YEYAK_SMTP_URL` in lettre's URL format
/// (`smtp://host:25`, `smtp://host?tls=required` (587, STARTTLS),
/// `smtps://user:pass@host` (465), an optional EHLO name as the path).
#[derive(Clone)]
pub struct Server {
    host: String,
    port: u16,
    tls: Encryption,
    credentials: Option<Credentials>,
    hello: ClientId,
    timeout: Duration,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

impl Server {
    /// The server of a URL; the error says what is wrong with it.
    pub fn from_url(raw: &str, timeout: Duration) -> Result<Server, String> {
        let url = url::Url::parse(raw).map_err(|e| e.to_string())?;
        let host = url.host_str().ok_or("no host")?.trim_matches(['[', ']']).to_owned();
        let tls = url.query_pairs().find(|(k, _)| k == "tls").map(|(_, v)| v.into_owned());
        let params = || TlsParameters::new(host.clone()).map_err(|e| e.to_string());
        let (tls, port) = match (url.scheme(), tls.as_deref()) {
            ("smtp", None) => (Encryption::None, 25),
            ("smtp", Some("required")) => (Encryption::StartTls { params: params()?, required: true }, 587),
            ("smtp", Some("opportunistic")) => (Encryption::StartTls { params: params()?, required: false }, 587),
            ("smtps", _) => (Encryption::Implicit(params()?), 465),
            (scheme, tls) => return Err(format!("unknown scheme `{scheme}` or tls `{}`", tls.unwrap_or(""))),
        };
        let decode = |s: &str| percent_decode(s);
        let credentials = (!url.username().is_empty())
            .then(|| Credentials::new(decode(url.username()), decode(url.password().unwrap_or_default())));
        let hello = match url.path().trim_matches('/') {
            "" => ClientId::default(),
            name => ClientId::Domain(name.to_owned()),
        };
        Ok(Server { port: url.port().unwrap_or(port), host, tls, credentials, hello, timeout })
    }

    /// A new connection: TCP with `TCP_NODELAY`, TLS as configured, EHLO, AUTH.
    async fn connect(&self) -> Result<AsyncSmtpConnection, Fail> {
        let tcp = tokio::time::timeout(self.timeout, TcpStream::connect((self.host.as_str(), self.port)))
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "connection timed out"))
            .and_then(|r| r)
            .map_err(|e| Fail::Io(format!("connecting to {}:{}: {e}", self.host, self.port)))?;
        tcp.set_nodelay(true).map_err(|e| Fail::Io(e.to_string()))?;
        let stream: Box<dyn AsyncTokioStream> = match &self.tls {
            Encryption::Implicit(params) => {
                #[allow(deprecated)]
                let mut tls = lettre::transport::smtp::client::AsyncNetworkStream::use_existing_tokio1(Box::new(tcp));
                tls.upgrade_tls(params.clone()).await?;
                Box::new(Upgraded(tls))
            }
            _ => Box::new(tcp),
        };
        let connect = AsyncSmtpConnection::connect_with_transport(stream, &self.hello);
        let mut conn = tokio::time::timeout(self.timeout, connect)
            .await
            .map_err(|_| Fail::Io(format!("no greeting from {}:{} in time", self.host, self.port)))??;
        if let Encryption::StartTls { params, required } = &self.tls {
            if conn.can_starttls() {
                conn.starttls(params.clone(), &self.hello).await?;
            } else if *required {
                conn.abort().await;
                return Err(Fail::Io("the server offers no STARTTLS (tls=required)".into()));
            }
        }
        if let Some(credentials) = &self.credentials {
            conn.auth(&[Mechanism::Plain, Mechanism::Login], credentials).await?;
        }
        Ok(conn)
    }
}

/// Why a hand-over failed: what lettre said, or our own socket's trouble.
#[derive(Debug)]
enum Fail {
    Smtp(SmtpError),
    Io(String),
}

impl From<SmtpError> for Fail {
    fn from(e: SmtpError) -> Self {
        Fail::Smtp(e)
    }
}

impl Fail {
    /// No reply from the server (a network failure, not a refusal).
    fn is_silent(&self) -> bool {
        match self {
            Fail::Smtp(e) => e.status().is_none(),
            Fail::Io(_) => true,
        }
    }
}

fn percent_decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// An implicit-TLS stream, handed back to lettre as a plain one.
#[allow(deprecated)]
#[derive(Debug)]
struct Upgraded(lettre::transport::smtp::client::AsyncNetworkStream);

impl AsyncTokioStream for Upgraded {
    fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.peer_addr()
    }
}

impl AsyncRead for Upgraded {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let unfilled = buf.initialize_unfilled();
        match futures_util::io::AsyncRead::poll_read(Pin::new(&mut self.0), cx, unfilled) {
            Poll::Ready(Ok(n)) => {
                buf.advance(n);
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncWrite for Upgraded {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        futures_util::io::AsyncWrite::poll_write(Pin::new(&mut self.0), cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        futures_util::io::AsyncWrite::poll_flush(Pin::new(&mut self.0), cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        futures_util::io::AsyncWrite::poll_close(Pin::new(&mut self.0), cx)
    }
}

/// A connection parked between messages.
struct Parked {
    conn: AsyncSmtpConnection,
    since: Instant,
}

/// A parked connection older than this is closed, not reused.
const IDLE_MAX: Duration = Duration::from_secs(60);
/// A parked connection idle longer than this is tested with `NOOP` first.
const IDLE_TEST: Duration = Duration::from_secs(5);

/// At most `size` connections open at once, shared by every sender of the
/// process.
pub struct Pool {
    server: Server,
    permits: Semaphore,
    idle: Mutex<Vec<Parked>>,
    size: usize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pool({:?}, {})", self.server, self.size)
    }
}

/// What one message's hand-over came to.
#[derive(Debug)]
pub enum Sent {
    Accepted,
    /// The server's reply to a refusal (`550 5.1.1 …`): 4xx or 5xx.
    Refused {
        permanent: bool,
        reply: String,
    },
    /// No reply: the connection failed or timed out.
    Failed(String),
}

impl Pool {
    pub fn new(server: Server, size: usize) -> Pool {
        let size = size.max(1);
        Pool { server, permits: Semaphore::new(size), idle: Mutex::new(Vec::new()), size }
    }

    /// The same server, `size` wide (before any connection is open).
    pub fn resized(self, size: usize) -> Pool {
        Pool::new(self.server, size)
    }

    /// How many connections may be open at once.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Connections parked now (for tests).
    pub fn idle(&self) -> usize {
        self.idle.lock().expect("pool lock").len()
    }

    /// A parked connection still fit for use, if any.
    async fn reuse(&self) -> Option<AsyncSmtpConnection> {
        loop {
            let parked = self.idle.lock().expect("pool lock").pop()?;
            let idle = parked.since.elapsed();
            let mut conn = parked.conn;
            if idle > IDLE_MAX || (idle > IDLE_TEST && !conn.test_connected().await) {
                conn.abort().await;
                continue;
            }
            return Some(conn);
        }
    }

    /// Hands one message to the server, on a parked connection or a new one
    /// (a parked one the server closed meanwhile is replaced at once).
    pub async fn send(&self, envelope: &lettre::address::Envelope, message: &[u8]) -> Sent {
        let _permit = self.permits.acquire().await.expect("the pool's semaphore is never closed");
        let reused = self.reuse().await;
        let was_reused = reused.is_some();
        let mut conn = match reused {
            Some(conn) => conn,
            None => match self.server.connect().await {
                Ok(conn) => conn,
                Err(e) => return classify(e),
            },
        };
        let mut result = self.send_on(&mut conn, envelope, message).await;
        if was_reused && matches!(result, Err(ref e) if e.is_silent()) {
            // The server closed it while parked: a fresh one, once.
            conn = match self.server.connect().await {
                Ok(conn) => conn,
                Err(e) => return classify(e),
            };
            result = self.send_on(&mut conn, envelope, message).await;
        }
        if !conn.has_broken() && result.is_ok() {
            self.idle.lock().expect("pool lock").push(Parked { conn, since: Instant::now() });
        } else {
            conn.abort().await;
        }
        match result {
            Ok(_) => Sent::Accepted,
            Err(e) => classify(e),
        }
    }

    async fn send_on(
        &self,
        conn: &mut AsyncSmtpConnection,
        envelope: &lettre::address::Envelope,
        message: &[u8],
    ) -> Result<lettre::transport::smtp::response::Response, Fail> {
        match tokio::time::timeout(self.server.timeout, conn.send(envelope, message)).await {
            Ok(result) => Ok(result?),
            Err(_) => {
                conn.abort().await;
                Err(Fail::Io(format!("no reply within {:?}", self.server.timeout)))
            }
        }
    }

    /// Closes every parked connection (`QUIT`).
    pub async fn close(&self) {
        let parked: Vec<Parked> = std::mem::take(&mut *self.idle.lock().expect("pool lock"));
        for mut p in parked {
            let _ = p.conn.quit().await;
        }
    }
}

/// A refusal keeps the server's reply as it was sent (code and text).
fn classify(fail: Fail) -> Sent {
    match fail {
        Fail::Smtp(e) => match e.status() {
            Some(code) => {
                let text = std::error::Error::source(&e).map(ToString::to_string).unwrap_or_default();
                Sent::Refused { permanent: e.is_permanent(), reply: format!("{code} {text}").trim_end().to_owned() }
            }
            None => Sent::Failed(e.to_string()),
        },
        Fail::Io(e) => Sent::Failed(e),
    }
}

/// An envelope from one address to one.
pub fn envelope(from: &Address, to: &Address) -> Result<lettre::address::Envelope, String> {
    lettre::address::Envelope::new(Some(from.clone()), vec![to.clone()]).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_their_server() {
        let t = Duration::from_secs(1);
        let s = Server::from_url("smtp://127.0.0.1:2525", t).unwrap();
        assert_eq!((s.host.as_str(), s.port, matches!(s.tls, Encryption::None)), ("127.0.0.1", 2525, true));
        assert!(s.credentials.is_none());
        let s = Server::from_url("smtps://us%40er:p%2Bss@mail.example.com", t).unwrap();
        assert_eq!((s.port, matches!(s.tls, Encryption::Implicit(_))), (465, true));
        assert_eq!(s.credentials, Some(Credentials::new("us@er".into(), "p+ss".into())));
        let s = Server::from_url("smtp://mail.example.com?tls=required", t).unwrap();
        assert!(matches!(s.tls, Encryption::StartTls { required: true, .. }) && s.port == 587);
        assert!(Server::from_url("http://x", t).is_err());
        assert!(Server::from_url("smtp://", t).is_err());
    }
}
