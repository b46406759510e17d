//! Settings' values read from their text: the public URL, who signs in with
//! a password, and `YEYAK_API_KEYS`.

use std::str::FromStr;

use crate::identity::ConfiguredKey;

pub(super) fn parse_public_url(raw: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(raw).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err("must be http:// or https:// with a host".into());
    }
    Ok(url)
}

pub(super) fn parse_password_login(raw: &str) -> Result<crate::identity::PasswordLogin, String> {
    raw.parse()
}

/// Parsed `YEYAK_API_KEYS`.
#[derive(Debug, Clone, Default)]
pub struct ApiKeyList(pub Vec<ConfiguredKey>);

pub fn parse_api_keys(raw: &str) -> Result<ApiKeyList, String> {
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(ConfiguredKey::from_str)
        .collect::<Result<Vec<_>, _>>()
        .map(ApiKeyList)
}
