//! A real MTA for the mail bench: a private Postfix instance (Debian's
//! `postfix`) run from a configuration generated in a temporary directory —
//! its own queue, `inet_interfaces = 127.0.0.1` on a free port, every
//! message delivered to the `discard` transport. The system's own Postfix
//! configuration is never read or changed (`postfix -c DIR`).
//!
//! Install once: `DEBIAN_FRONTEND=noninteractive apt-get install -y postfix`
//! (answer "No configuration": `echo "postfix postfix/main_mailer_type select
//! No configuration" | debconf-set-selections` first). Needs root (Postfix
//! drops to its `postfix` user itself). Without it the bench says so and
//! measures the in-process sink only.

use std::path::PathBuf;
use std::process::Command;

pub struct Postfix {
    dir: PathBuf,
    pub url: String,
}

impl Postfix {
    /// Starts the instance, or says why it cannot.
    pub fn start() -> Result<Postfix, String> {
        if !std::path::Path::new("/usr/sbin/postfix").exists() {
            return Err("postfix is not installed (apt-get install postfix)".into());
        }
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
            l.local_addr().map_err(|e| e.to_string())?.port()
        };
        let dir = std::env::temp_dir().join(format!("yeyak-bench-postfix-{}", uuid::Uuid::new_v4().simple()));
        let (conf, queue, data) = (dir.join("conf"), dir.join("queue"), dir.join("data"));
        for d in [&conf, &queue, &data] {
            std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
        }
        let main = format!(
            "compatibility_level = 3.6
queue_directory = {queue}
data_directory = {data}
mail_owner = postfix
setgid_group = postdrop
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
myhostname = bench.yeyak.local
mydestination =
relayhost =
mynetworks = 127.0.0.0/8
smtpd_relay_restrictions = permit_mynetworks, reject
default_transport = discard
local_transport = discard
maillog_file = {log}
maillog_file_prefixes = {dir}
in_flow_delay = 0
biff = no
",
            queue = queue.display(),
            data = data.display(),
            log = dir.join("maillog").display(),
            dir = dir.display(),
        );
        std::fs::write(conf.join("main.cf"), main).map_err(|e| e.to_string())?;
        let master = std::fs::read_to_string("/etc/postfix/master.cf").map_err(|e| e.to_string())?;
        let master: String = master
            .lines()
            .map(|l| {
                if l.starts_with("smtp ") && l.contains(" inet ") {
                    format!("127.0.0.1:{port} inet n - n - - smtpd")
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(conf.join("master.cf"), master + "\n").map_err(|e| e.to_string())?;
        let chown = Command::new("chown").args(["postfix"]).arg(&data).status().map_err(|e| e.to_string())?;
        if !chown.success() {
            return Err("chown postfix (the bench must run as root to start Postfix)".into());
        }
        let started = Command::new("postfix").arg("-c").arg(&conf).arg("start").output().map_err(|e| e.to_string())?;
        if !started.status.success() {
            let log = std::fs::read_to_string(dir.join("maillog")).unwrap_or_default();
            return Err(format!("postfix start: {}{log}", String::from_utf8_lossy(&started.stderr)));
        }
        let pf = Postfix { dir, url: format!("smtp://127.0.0.1:{port}") };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(pf);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Err("postfix did not listen".into())
    }

    /// Messages the instance accepted so far (queued, then discarded).
    pub fn delivered(&self) -> usize {
        std::fs::read_to_string(self.dir.join("maillog"))
            .map(|log| log.lines().filter(|l| l.contains("postfix/discard") && l.contains("status=sent")).count())
            .unwrap_or(0)
    }
}

impl Drop for Postfix {
    fn drop(&mut self) {
        let _ = Command::new("postfix").arg("-c").arg(self.dir.join("conf")).arg("stop").output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
