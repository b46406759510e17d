//! `DATABASE_URL` as tokio-postgres reads it: one host, several hosts
//! (`postgres://h1:5432,h2:5433/yeyak?target_session_attrs=read-write`), a Unix
//! socket directory (`postgres:///yeyak?host=/dir`) or `key=value` pairs.
//! `url::Url` rejects the multi-host form ("invalid port number"), so the
//! string is checked by tokio-postgres itself and the one edit start-up needs,
//! naming another database, is made on the text.

use std::str::FromStr;

use tokio_postgres::config::Host;

/// A connection string tokio-postgres accepts, with a database name.
#[derive(Debug, Clone)]
pub struct ConnInfo {
    raw: String,
    parsed: tokio_postgres::Config,
    database: String,
}

impl ConnInfo {
    pub fn parse(raw: &str) -> Result<ConnInfo, String> {
        let parsed = tokio_postgres::Config::from_str(raw).map_err(|e| e.to_string())?;
        let database = parsed.get_dbname().filter(|d| !d.is_empty()).ok_or("no database name")?.to_owned();
        Ok(ConnInfo { raw: raw.to_owned(), parsed, database })
    }

    pub fn database(&self) -> &str {
        &self.database
    }

    /// The same servers and credentials, connected to database `name`.
    pub fn with_database(&self, name: &str) -> String {
        if !is_url(&self.raw) {
            // In key=value form the last `dbname` wins.
            return format!("{} dbname='{}'", self.raw, name.replace('\\', "\\\\").replace('\'', "\\'"));
        }
        let (before_query, query) = match self.raw.split_once('?') {
            Some((head, query)) => (head, Some(query)),
            None => (self.raw.as_str(), None),
        };
        let after_scheme = before_query.find("://").map_or(0, |i| i + 3);
        let authority_end = before_query[after_scheme..].find('/').map_or(before_query.len(), |i| after_scheme + i);
        let mut out = format!("{}/{}", &before_query[..authority_end], percent_encode(name).replace('/', "%2F"));
        let kept: Vec<&str> = query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter(|p| !p.is_empty() && !p.starts_with("dbname="))
            .collect();
        if !kept.is_empty() {
            out.push('?');
            out.push_str(&kept.join("&"));
        }
        out
    }

    /// Hosts, user and database with any password masked, for logs and errors.
    pub fn redacted(&self) -> String {
        let ports = self.parsed.get_ports();
        let hosts: Vec<String> = self
            .parsed
            .get_hosts()
            .iter()
            .enumerate()
            .map(|(i, host)| {
                let port = ports.get(i).or(ports.first()).map(|p| format!(":{p}")).unwrap_or_default();
                match host {
                    Host::Tcp(name) => format!("{name}{port}"),
                    Host::Unix(dir) => format!("[{}]{port}", dir.display()),
                }
            })
            .collect();
        let password = if self.parsed.get_password().is_some() { ":***" } else { "" };
        let user = self.parsed.get_user().map(|u| format!("{u}{password}@")).unwrap_or_default();
        let attrs = match self.parsed.get_target_session_attrs() {
            tokio_postgres::config::TargetSessionAttrs::ReadWrite => "?target_session_attrs=read-write",
            _ => "",
        };
        format!("postgres://{user}{}/{}{attrs}", hosts.join(","), self.database)
    }

    /// The hosts this string names, in the order they are tried.
    pub fn hosts(&self) -> &[Host] {
        self.parsed.get_hosts()
    }
}

fn is_url(raw: &str) -> bool {
    raw.starts_with("postgres://") || raw.starts_with("postgresql://")
}

/// Percent-encodes what may not stand as is in a URL query value (a socket
/// directory keeps its slashes).
pub fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The URL with its password removed (or a placeholder when it does not parse).
pub fn redact(raw: &str) -> String {
    ConnInfo::parse(raw).map(|c| c.redacted()).unwrap_or_else(|_| "<unparseable DATABASE_URL>".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multi_host_url_keeps_its_hosts_and_options_for_another_database() {
        let info =
            ConnInfo::parse("postgres://app:pw@127.0.0.1:6001,127.0.0.1:6002/yeyak?target_session_attrs=read-write")
                .unwrap();
        assert_eq!(info.database(), "yeyak");
        assert_eq!(
            info.with_database("postgres"),
            "postgres://app:pw@127.0.0.1:6001,127.0.0.1:6002/postgres?target_session_attrs=read-write"
        );
        assert_eq!(
            info.redacted(),
            "postgres://app:***@127.0.0.1:6001,127.0.0.1:6002/yeyak?target_session_attrs=read-write"
        );
    }

    #[test]
    fn a_socket_directory_in_the_query_is_kept() {
        let info = ConnInfo::parse("postgres:///yeyak?host=/tmp/x%20y&user=postgres&dbname=other").unwrap();
        assert_eq!(info.database(), "other");
        assert_eq!(info.with_database("postgres"), "postgres:///postgres?host=/tmp/x%20y&user=postgres");
        assert_eq!(info.redacted(), "postgres://postgres@[/tmp/x y]/other");
    }

    #[test]
    fn key_value_strings_name_another_database_last() {
        let info = ConnInfo::parse("host=/run/pg user=postgres dbname=yeyak password=secret").unwrap();
        let other = ConnInfo::parse(&info.with_database("post'gres")).unwrap();
        assert_eq!(other.database(), "post'gres");
        assert!(!info.redacted().contains("secret"));
    }

    #[test]
    fn a_url_without_a_database_is_refused() {
        assert!(ConnInfo::parse("postgres://127.0.0.1:5432").is_err());
        assert!(ConnInfo::parse("mysql://x/y").is_err());
    }
}
