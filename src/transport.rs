//! How browsers reach this installation (SPEC §13, §20). The scheme comes from
//! `YEYAK_PUBLIC_URL`, never from a client's `X-Forwarded-Proto`; the client
//! address, host and scheme from forwarded headers only with
//! `YEYAK_TRUST_PROXY=true`.

use std::net::IpAddr;

use actix_web::cookie::{Cookie, SameSite};
use actix_web::HttpRequest;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Transport {
    /// `YEYAK_PUBLIC_URL` is https: cookies are `Secure` and `__Host-`, HSTS is sent.
    pub https: bool,
    pub trust_proxy: bool,
}

/// Whether `path` is a browser page's: not the JSON API, the CalDAV door,
/// the probes, `/metrics` or static files. Decides the format of answers
/// made outside a handler (a 404, a panic's 500) and which answers the
/// pages' middleware writes in the page's language.
pub fn is_page(path: &str) -> bool {
    let under = |prefix: &str| path == prefix || path.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('/'));
    !(under("/api")
        || under("/dav")
        || under("/static")
        || under("/.well-known")
        || matches!(path, "/metrics" | "/healthz" | "/readyz"))
}

/// `Strict-Transport-Security` for an https installation: a year.
pub const HSTS: &str = "max-age=31536000";

impl Transport {
    pub fn new(public_url: Option<&url::Url>, trust_proxy: bool) -> Self {
        Transport { https: public_url.is_some_and(|u| u.scheme() == "https"), trust_proxy }
    }

    /// The session cookie's name (`__Host-` over https: no subdomain can set it).
    pub fn session_cookie(&self) -> &'static str {
        if self.https {
            "__Host-yeyak_session"
        } else {
            "yeyak_session"
        }
    }

    /// The CSRF nonce cookie's name.
    pub fn csrf_cookie(&self) -> &'static str {
        if self.https {
            "__Host-yeyak_csrf"
        } else {
            "yeyak_csrf"
        }
    }

    /// The device mark's name: a browser that signed in as a person within
    /// 30 days is not held by that username's lock (SPEC §20).
    pub fn device_cookie(&self) -> &'static str {
        if self.https {
            "__Host-yeyak_device"
        } else {
            "yeyak_device"
        }
    }

    /// The remembered language of `?lang=` (SPEC §19).
    pub fn lang_cookie(&self) -> &'static str {
        if self.https {
            "__Host-yeyak_lang"
        } else {
            "yeyak_lang"
        }
    }

    /// The pending OpenID sign-in of this browser (`state`, `nonce`, PKCE
    /// verifier; signed, 10 minutes; SPEC §16).
    pub fn oidc_cookie(&self) -> &'static str {
        if self.https {
            "__Host-yeyak_oidc"
        } else {
            "yeyak_oidc"
        }
    }

    /// A cookie with SPEC §5's flags: HttpOnly, SameSite=Lax, path `/`, and
    /// `Secure` over https (which `__Host-` requires).
    pub fn cookie(&self, name: &'static str, value: String) -> Cookie<'static> {
        Cookie::build(name, value).path("/").http_only(true).same_site(SameSite::Lax).secure(self.https).finish()
    }

    /// The client's address: the peer, or the proxy's record of it when the
    /// proxy is trusted.
    pub fn client_ip(&self, req: &HttpRequest) -> Option<IpAddr> {
        if self.trust_proxy {
            let info = req.connection_info();
            if let Some(ip) = info.realip_remote_addr().and_then(parse_ip) {
                return Some(ip);
            }
        }
        req.peer_addr().map(|a| a.ip())
    }
}

impl Transport {
    /// The origin this request was made to, for addresses people copy (a
    /// feed) when `YEYAK_PUBLIC_URL` is unset. `Forwarded` and
    /// `X-Forwarded-Host`/`-Proto` count only from a trusted proxy (SPEC
    /// §20); otherwise it is the request's own `Host`, over http.
    pub fn request_origin(&self, req: &HttpRequest) -> String {
        if self.trust_proxy {
            let info = req.connection_info();
            return format!("{}://{}", info.scheme(), info.host());
        }
        let host = req
            .headers()
            .get(actix_web::http::header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_owned)
            .or_else(|| req.uri().authority().map(|a| a.to_string()))
            .unwrap_or_else(|| req.app_config().host().to_owned());
        format!("http://{host}")
    }
}

/// The session token the browser sent, if any.
pub fn session_token(req: &HttpRequest, transport: &Transport) -> Option<String> {
    req.cookie(transport.session_cookie()).map(|c| c.value().to_owned())
}

/// An address as proxies write it: `1.2.3.4`, `1.2.3.4:5678`, `[::1]:80` or `::1`.
fn parse_ip(raw: &str) -> Option<IpAddr> {
    let raw = raw.trim();
    raw.parse()
        .ok()
        .or_else(|| raw.parse::<std::net::SocketAddr>().ok().map(|a| a.ip()))
        .or_else(|| raw.trim_start_matches('[').trim_end_matches(']').parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_installations_get_secure_host_cookies() {
        let url = url::Url::parse("https://rooms.example.com").unwrap();
        let t = Transport::new(Some(&url), false);
        assert_eq!(t.session_cookie(), "__Host-yeyak_session");
        let c = t.cookie(t.session_cookie(), "x".into());
        assert_eq!(c.secure(), Some(true));
        let plain = Transport::new(None, false);
        assert_eq!(plain.cookie(plain.session_cookie(), "x".into()).secure(), Some(false));
    }

    #[test]
    fn forwarded_addresses_parse() {
        assert_eq!(parse_ip("10.0.0.1"), "10.0.0.1".parse().ok());
        assert_eq!(parse_ip("10.0.0.1:443"), "10.0.0.1".parse().ok());
        assert_eq!(parse_ip("[::1]:80"), "::1".parse().ok());
        assert_eq!(parse_ip("nonsense"), None);
    }
}
