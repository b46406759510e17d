//! Company sign-in against an LDAP directory (OpenLDAP, Active Directory;
//! SPEC §16) on the `ldap3` crate, over TLS only: `ldaps://` or StartTLS
//! (`YEYAK_LDAP_CA_FILE` adds the directory's CA to the system's roots).
//! The usual form: the search account finds exactly one entry by the typed
//! username (escaped as RFC 4515 says, so `*` or `)(` match nothing), then
//! yeyak binds as that entry with the typed password. An empty password is
//! refused before any bind: many directories take a DN without a password
//! as an anonymous bind that "succeeds".

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ldap3::{ldap_escape, Ldap, LdapConnAsync, LdapConnSettings, LdapError, Scope, SearchEntry};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

/// Connect and per-operation limit: a directory that hangs is unavailable.
const TIMEOUT: Duration = Duration::from_secs(5);

/// LDAP result code of a wrong password (RFC 4511 `invalidCredentials`).
const INVALID_CREDENTIALS: u32 = 49;

/// `YEYAK_LDAP_*`.
#[derive(Debug, Clone)]
pub struct Settings {
    pub url: String,
    pub starttls: bool,
    pub ca_file: Option<PathBuf>,
    pub bind_dn: String,
    pub bind_password: String,
    pub user_base: String,
    /// With `{username}` where the escaped username goes.
    pub user_filter: String,
    pub name_attr: String,
    pub email_attr: String,
    pub admin_group: Option<String>,
}

/// Why a directory sign-in did not end in a person.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Not this person, or not this password (the form's 401).
    #[error("refused: {0}")]
    Refused(&'static str),
    /// The directory could not be asked (a 503; local accounts still sign in).
    #[error("directory unavailable: {0}")]
    Unavailable(String),
}

/// A person the directory vouched for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// What the account is linked to: `entryUUID:…`, `objectGUID:…`, else `dn:…`.
    pub subject: String,
    pub dn: String,
    pub name: Option<String>,
    pub email: Option<String>,
    /// The directory's own spelling of the username (the attribute the
    /// user filter matches, e.g. `uid` or `sAMAccountName`), which the
    /// account is created under whatever was typed (SPEC §22).
    pub username: Option<String>,
    pub is_admin: bool,
}

/// The issuer column of a directory link (OpenID issuers are URLs, so it
/// cannot collide with one).
pub const ISSUER: &str = "ldap";

/// The attribute the user filter compares the username with: the name
/// before `={username}` (`uid` in `(&(objectClass=person)(uid={username}))`).
pub fn username_attr(template: &str) -> Option<&str> {
    let before = &template[..template.find("={username}")?];
    let name = before.rsplit(['(', '&', '|', '!']).next()?.trim();
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b';')).then_some(name)
}

/// The user filter with the username escaped (RFC 4515).
pub fn user_filter(template: &str, username: &str) -> String {
    template.replace("{username}", &ldap_escape(username))
}

/// The directory as configured, with its TLS settings built once.
pub struct Directory {
    settings: Settings,
    tls: Arc<rustls::ClientConfig>,
}

impl Directory {
    /// Refuses settings that would send passwords in the clear or cannot work.
    pub fn new(settings: Settings) -> Result<Directory, String> {
        let url = url::Url::parse(&settings.url).map_err(|e| format!("YEYAK_LDAP_URL is not a URL: {e}"))?;
        match (url.scheme(), settings.starttls) {
            ("ldaps", _) | ("ldap", true) => {}
            ("ldap", false) => {
                return Err("YEYAK_LDAP_URL is ldap:// without YEYAK_LDAP_STARTTLS=true: passwords would cross the network in the clear; use ldaps:// or StartTLS".into())
            }
            (other, _) => return Err(format!("YEYAK_LDAP_URL has the scheme {other}: use ldaps:// or ldap:// with StartTLS")),
        }
        if settings.user_base.is_empty() || !settings.user_filter.contains("{username}") {
            return Err("YEYAK_LDAP_USER_BASE must be set and YEYAK_LDAP_USER_FILTER must contain {username}".into());
        }
        let tls = tls_config(settings.ca_file.as_deref())?;
        Ok(Directory { settings, tls: Arc::new(tls) })
    }

    async fn connect(&self) -> Result<Ldap, Failure> {
        let conn = LdapConnSettings::new()
            .set_conn_timeout(TIMEOUT)
            .set_starttls(self.settings.starttls)
            .set_config(self.tls.clone());
        let (conn, mut ldap) = LdapConnAsync::with_settings(conn, &self.settings.url)
            .await
            .map_err(|e| Failure::Unavailable(format!("cannot connect: {e}")))?;
        ldap3::drive!(conn);
        ldap.with_timeout(TIMEOUT);
        Ok(ldap)
    }

    /// Checks `username` and `password` against the directory.
    pub async fn authenticate(&self, username: &str, password: &str) -> Result<Entry, Failure> {
        if password.is_empty() {
            // Before any connection: an unauthenticated bind would "succeed".
            return Err(Failure::Refused("empty password"));
        }
        let mut ldap = self.connect().await?;
        let result = self.check(&mut ldap, username, password).await;
        let _ = ldap.unbind().await;
        result
    }

    async fn check(&self, ldap: &mut Ldap, username: &str, password: &str) -> Result<Entry, Failure> {
        let s = &self.settings;
        ldap.simple_bind(&s.bind_dn, &s.bind_password)
            .await
            .and_then(|r| r.success())
            .map_err(|e| Failure::Unavailable(format!("the search account cannot bind: {e}")))?;
        let username_attr = username_attr(&s.user_filter).unwrap_or("uid");
        let attrs = [s.name_attr.as_str(), s.email_attr.as_str(), username_attr, "entryUUID", "objectGUID", "memberOf"];
        let (entries, _) = ldap
            .search(&s.user_base, Scope::Subtree, &user_filter(&s.user_filter, username), attrs.to_vec())
            .await
            .and_then(|r| r.success())
            .map_err(|e| Failure::Unavailable(format!("search failed: {e}")))?;
        let mut entries = entries.into_iter().map(SearchEntry::construct);
        let (Some(entry), None) = (entries.next(), entries.next()) else {
            return Err(Failure::Refused("not exactly one entry"));
        };
        // Group membership is read with the search account, before the
        // connection becomes the person's.
        let is_admin = match &s.admin_group {
            Some(group) => self.is_member(ldap, group, &entry).await?,
            None => false,
        };
        match ldap.simple_bind(&entry.dn, password).await.and_then(|r| r.success()) {
            Ok(_) => {}
            Err(LdapError::LdapResult { result }) if result.rc == INVALID_CREDENTIALS => {
                return Err(Failure::Refused("wrong password"))
            }
            Err(LdapError::LdapResult { .. }) => return Err(Failure::Refused("the directory refused the bind")),
            Err(e) => return Err(Failure::Unavailable(format!("bind failed: {e}"))),
        }
        Ok(Entry {
            subject: subject_of(&entry),
            name: first(&entry, &s.name_attr),
            email: first(&entry, &s.email_attr),
            username: first(&entry, username_attr),
            dn: entry.dn,
            is_admin,
        })
    }

    /// `memberOf` on the entry names the group, or the group lists the
    /// entry as `member` / `uniqueMember`.
    async fn is_member(&self, ldap: &mut Ldap, group: &str, entry: &SearchEntry) -> Result<bool, Failure> {
        if values(entry, "memberOf").iter().any(|g| same_dn(g, group)) {
            return Ok(true);
        }
        let dn = ldap_escape(&entry.dn);
        let filter = format!("(|(member={dn})(uniqueMember={dn}))");
        match ldap.search(group, Scope::Base, &filter, vec!["1.1"]).await.and_then(|r| r.success()) {
            Ok((found, _)) => Ok(!found.is_empty()),
            // 32 noSuchObject: the configured group does not exist.
            Err(LdapError::LdapResult { result }) if result.rc == 32 => {
                tracing::warn!("YEYAK_LDAP_ADMIN_GROUP does not exist in the directory");
                Ok(false)
            }
            Err(e) => Err(Failure::Unavailable(format!("group lookup failed: {e}"))),
        }
    }
}

/// The system's roots plus the configured CA.
fn tls_config(ca_file: Option<&std::path::Path>) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    if let Some(path) = ca_file {
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("YEYAK_LDAP_CA_FILE {}: {e}", path.display()))?;
        if certs.is_empty() {
            return Err(format!("YEYAK_LDAP_CA_FILE {} holds no certificate", path.display()));
        }
        for cert in certs {
            roots.add(cert).map_err(|e| format!("YEYAK_LDAP_CA_FILE {}: {e}", path.display()))?;
        }
    }
    // One crypto provider named here: the process links more than one.
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map(|b| b.with_root_certificates(roots).with_no_client_auth())
        .map_err(|e| format!("TLS settings: {e}"))
}

fn values<'a>(entry: &'a SearchEntry, attr: &str) -> &'a [String] {
    entry.attrs.iter().find(|(k, _)| k.eq_ignore_ascii_case(attr)).map_or(&[], |(_, v)| v.as_slice())
}

fn first(entry: &SearchEntry, attr: &str) -> Option<String> {
    values(entry, attr).first().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

/// The entry's stable id: `entryUUID` (OpenLDAP), `objectGUID` (Active
/// Directory, binary), else its DN (which a rename changes).
fn subject_of(entry: &SearchEntry) -> String {
    if let Some(uuid) = first(entry, "entryUUID") {
        return format!("entryUUID:{}", uuid.to_ascii_lowercase());
    }
    let guid = entry.bin_attrs.iter().find(|(k, _)| k.eq_ignore_ascii_case("objectGUID")).and_then(|(_, v)| v.first());
    match guid {
        Some(bytes) => format!("objectGUID:{}", hex::encode(bytes)),
        None => format!("dn:{}", entry.dn.to_ascii_lowercase()),
    }
}

/// DNs compared as directories do for the usual spelling differences
/// (case, spaces after commas).
fn same_dn(a: &str, b: &str) -> bool {
    let norm = |dn: &str| dn.split(',').map(|rdn| rdn.trim().to_lowercase()).collect::<Vec<_>>();
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn the_username_attribute_is_read_from_the_filter() {
        assert_eq!(username_attr("(uid={username})"), Some("uid"));
        assert_eq!(username_attr("(&(objectClass=person)(sAMAccountName={username}))"), Some("sAMAccountName"));
        assert_eq!(username_attr("(|(mail={username})(uid=x))"), Some("mail"));
        assert_eq!(username_attr("(cn=*{username})"), None);
    }

    #[test]
    fn the_username_is_escaped_in_the_filter() {
        assert_eq!(user_filter("(uid={username})", "kim"), "(uid=kim)");
        assert_eq!(user_filter("(uid={username})", "*"), "(uid=\\2a)");
        assert_eq!(
            user_filter("(&(objectClass=person)(uid={username}))", "a)(uid=*"),
            "(&(objectClass=person)(uid=a\\29\\28uid=\\2a))"
        );
        assert_eq!(user_filter("(sAMAccountName={username})", "x\\00"), "(sAMAccountName=x\\5c00)");
    }

    #[test]
    fn entries_are_linked_by_their_stable_id() {
        let mut entry =
            SearchEntry { dn: "uid=Kim,ou=People,dc=x".into(), attrs: HashMap::new(), bin_attrs: HashMap::new() };
        assert_eq!(subject_of(&entry), "dn:uid=kim,ou=people,dc=x");
        entry.bin_attrs.insert("objectGUID".into(), vec![vec![0xde, 0xad]]);
        assert_eq!(subject_of(&entry), "objectGUID:dead");
        entry.attrs.insert("entryUUID".into(), vec!["B07DEE14-83D2-1041-9696-3FAE2EB41B24".into()]);
        assert_eq!(subject_of(&entry), "entryUUID:b07dee14-83d2-1041-9696-3fae2eb41b24");
    }

    #[test]
    fn member_of_names_the_group_whatever_its_spelling() {
        assert!(same_dn("CN=Yeyak Admins, OU=Groups,DC=corp", "cn=yeyak admins,ou=groups,dc=corp"));
        assert!(!same_dn("cn=yeyak admins,dc=corp", "cn=yeyak users,dc=corp"));
    }

    #[test]
    fn passwords_never_cross_in_the_clear() {
        let settings = |url: &str, starttls| Settings {
            url: url.into(),
            starttls,
            ca_file: None,
            bind_dn: String::new(),
            bind_password: String::new(),
            user_base: "dc=x".into(),
            user_filter: "(uid={username})".into(),
            name_attr: "cn".into(),
            email_attr: "mail".into(),
            admin_group: None,
        };
        assert!(Directory::new(settings("ldap://dc.example.com", false)).is_err());
        assert!(Directory::new(settings("ldap://dc.example.com", true)).is_ok());
        assert!(Directory::new(settings("ldaps://dc.example.com", false)).is_ok());
        assert!(Directory::new(settings("http://dc.example.com", false)).is_err());
    }
}
