//! Shared by the calendar tests (tests/api) and the mail bench.
//! A real SMTP server for the tests (RFC 5321's minimal command set over
//! TCP): it accepts every message into a list, or answers each `RCPT` with a
//! chosen refusal — for every recipient, or for one recipient a number of
//! times (a 5xx for good, a 4xx twice, …). Not a mock of yeyak's provider: yeyak's SMTP client
//! (lettre) talks to it over a socket.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// One received message.
#[derive(Debug, Clone)]
pub struct Mail {
    /// Envelope recipients (`RCPT TO`).
    pub to: Vec<String>,
    /// Headers and body as sent (dot-unstuffed).
    pub data: String,
}

/// A reply to give and how many more times (`None`: always).
type Refusal = (String, Option<usize>);

#[derive(Clone, Default)]
pub struct Sink {
    pub mails: Arc<Mutex<Vec<Mail>>>,
    /// When set, every RCPT gets this reply (e.g. "451 try later").
    pub refuse: Arc<Mutex<Option<String>>>,
    /// Refusals of one recipient (the address, lowercased): the reply and
    /// how many more times to give it (`None`: always).
    pub refuse_for: Arc<Mutex<std::collections::HashMap<String, Refusal>>>,
}

impl Sink {
    /// Starts a sink on a free port; returns it and its `smtp://` URL.
    pub async fn start() -> (Sink, String) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let sink = Sink::default();
        let serving = sink.clone();
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else { return };
                let sink = serving.clone();
                tokio::spawn(async move { sink.session(socket).await });
            }
        });
        (sink, format!("smtp://127.0.0.1:{port}"))
    }

    /// Refuses `address` with `reply`, `times` times (`None`: always).
    pub fn refuse_recipient(&self, address: &str, reply: &str, times: Option<usize>) {
        self.refuse_for.lock().unwrap().insert(address.to_lowercase(), (reply.to_owned(), times));
    }

    /// The refusal for one `RCPT TO:<address>`, counting it down.
    fn refusal_of(&self, rcpt: &str) -> Option<String> {
        let address = rcpt.trim().trim_start_matches('<').trim_end_matches('>').to_lowercase();
        let mut all = self.refuse_for.lock().unwrap();
        let (reply, times) = all.get_mut(&address)?;
        match times {
            Some(0) => None,
            Some(n) => {
                *n -= 1;
                Some(reply.clone())
            }
            None => Some(reply.clone()),
        }
    }

    pub fn received(&self) -> Vec<Mail> {
        self.mails.lock().unwrap().clone()
    }

    async fn session(&self, socket: tokio::net::TcpStream) {
        let (read, mut write) = socket.into_split();
        let mut lines = BufReader::new(read).lines();
        let _ = write.write_all(b"220 sink ESMTP\r\n").await;
        let mut to = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            let upper = line.to_ascii_uppercase();
            let reply: String = if upper.starts_with("EHLO") || upper.starts_with("HELO") {
                "250-sink\r\n250 8BITMIME".into()
            } else if upper.starts_with("MAIL FROM:") {
                "250 ok".into()
            } else if upper.starts_with("RCPT TO:") {
                match self.refuse.lock().unwrap().clone().or_else(|| self.refusal_of(&line[8..])) {
                    Some(refusal) => refusal,
                    None => {
                        to.push(line[8..].trim().to_owned());
                        "250 ok".into()
                    }
                }
            } else if upper == "DATA" {
                let _ = write.write_all(b"354 go ahead\r\n").await;
                let mut data = String::new();
                while let Ok(Some(l)) = lines.next_line().await {
                    if l == "." {
                        break;
                    }
                    data.push_str(l.strip_prefix('.').filter(|_| l.starts_with("..")).unwrap_or(&l));
                    data.push_str("\r\n");
                }
                self.mails.lock().unwrap().push(Mail { to: std::mem::take(&mut to), data });
                "250 queued".into()
            } else if upper == "QUIT" {
                let _ = write.write_all(b"221 bye\r\n").await;
                return;
            } else if upper.starts_with("RSET") || upper.starts_with("NOOP") {
                "250 ok".into()
            } else {
                "502 not implemented".into()
            };
            if write.write_all(format!("{reply}\r\n").as_bytes()).await.is_err() {
                return;
            }
        }
    }
}
