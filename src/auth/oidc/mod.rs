//! Company sign-in by OpenID Connect (SPEC §16): the authorization code flow
//! with PKCE `S256` on the `openidconnect` crate. Discovery runs in the
//! background from start-up, so a provider that is down never stops yeyak
//! (password sign-in goes on; the start answers "unavailable" until
//! discovery succeeds, retried every 30–60 s). The ID token is verified by
//! the crate against the provider's JWKS — RS/PS/ES/EdDSA only, never
//! `none` or HMAC — with `iss`, `aud`, `exp`, `iat` (at most 60 s ahead)
//! and `nonce`; a key id the cached JWKS lacks fetches the keys once more,
//! so the provider may rotate them. No token, code or secret is ever put
//! into an error or a log line: failures carry only what went wrong.

pub mod claims;
pub mod pending;

use std::ops::RangeInclusive;
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreGenderClaim, CoreIdTokenVerifier, CoreJsonWebKeySet,
    CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm,
};
use openidconnect::{
    AccessTokenHash, AuthType, AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken,
    EndSessionUrl, EndpointMaybeSet, EndpointNotSet, EndpointSet, IdToken, IdTokenClaims, IssuerUrl, JsonWebKeySet,
    JsonWebKeySetUrl, Nonce, OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, ProviderMetadataWithLogout,
    RedirectUrl, RequestTokenError, Scope, SignatureVerificationError, TokenResponse as _, UserInfoClaims,
};
use rand::Rng;

pub use claims::{GroupRules, Identity};
pub use pending::Pending;

use crate::clock::Clock;
use claims::Extra;

pub use crate::config::DISCOVERY_RETRY;

/// How far ahead of our clock an ID token's `iat` may be.
const IAT_LEEWAY: chrono::Duration = chrono::Duration::seconds(60);

/// Signature algorithms accepted on an ID token: public-key ones only. `none`
/// is refused by the crate whatever this says; HMAC is left out so that a
/// token "signed" with the provider's public key as a shared secret fails.
const SIGNING_ALGS: [CoreJwsSigningAlgorithm; 10] = [
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
    CoreJwsSigningAlgorithm::RsaSsaPssSha256,
    CoreJwsSigningAlgorithm::RsaSsaPssSha384,
    CoreJwsSigningAlgorithm::RsaSsaPssSha512,
    CoreJwsSigningAlgorithm::EcdsaP256Sha256,
    CoreJwsSigningAlgorithm::EcdsaP384Sha384,
    CoreJwsSigningAlgorithm::EcdsaP521Sha512,
    CoreJwsSigningAlgorithm::EdDsa,
];

type Client =
    CoreClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointMaybeSet, EndpointMaybeSet>;
type GroupsIdToken = IdToken<Extra, CoreGenderClaim, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm>;

/// The settings of §16 (`YEYAK_OIDC_*`) with the addresses yeyak is reached at.
#[derive(Debug, Clone)]
pub struct Settings {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub scopes: Vec<String>,
    pub groups_claim: String,
    pub groups: GroupRules,
    /// `{base}/auth/oidc/callback`.
    pub redirect_uri: String,
    /// `{base}/login`, where the provider's sign-out sends the browser back.
    pub post_logout_uri: String,
    pub retry: RangeInclusive<Duration>,
}

/// Why a sign-in at the provider did not end in a person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// Discovery has not succeeded yet, or the provider did not answer: 503.
    #[error("provider unavailable: {0}")]
    Unavailable(&'static str),
    /// The callback itself is wrong (no or another `state`, no code, the
    /// provider's own error): 400.
    #[error("bad callback: {0}")]
    BadRequest(String),
    /// The code or the ID token did not check out: 401.
    #[error("bad token: {0}")]
    BadToken(String),
}

/// What the provider said at discovery, and its keys as last fetched.
struct Discovered {
    client: Client,
    issuer: IssuerUrl,
    jwks_uri: JsonWebKeySetUrl,
    keys: RwLock<CoreJsonWebKeySet>,
    end_session: Option<EndSessionUrl>,
}

/// yeyak's relying party at one provider.
pub struct OidcProvider {
    settings: Settings,
    http: reqwest::Client,
    clock: Arc<dyn Clock>,
    discovered: RwLock<Option<Arc<Discovered>>>,
}

/// The callback's query (`code`, `state`, and `iss` where the provider sends it, RFC 9207).
#[derive(Debug, Default, serde::Deserialize)]
pub struct Callback {
    pub code: Option<String>,
    pub state: Option<String>,
    pub iss: Option<String>,
    pub error: Option<String>,
}

/// A verified sign-in: the person, and the raw ID token for the provider's sign-out.
pub struct SignedIn {
    pub identity: Identity,
    pub id_token: String,
}

impl OidcProvider {
    /// The provider handle; discovery starts in the background at once and
    /// is retried until it succeeds (the task ends with the handle).
    pub fn start(settings: Settings, clock: Arc<dyn Clock>) -> Arc<OidcProvider> {
        let http = reqwest::Client::builder()
            // Following redirects would let a provider's answer send us anywhere (SSRF).
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .build()
            .expect("an HTTP client with fixed settings builds");
        let provider = Arc::new(OidcProvider { settings, http, clock, discovered: RwLock::new(None) });
        tokio::spawn(discover_until_done(Arc::downgrade(&provider)));
        provider
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn current(&self) -> Option<Arc<Discovered>> {
        self.discovered.read().expect("discovery lock").clone()
    }

    /// Whether discovery has succeeded (the start can redirect).
    pub fn is_ready(&self) -> bool {
        self.current().is_some()
    }

    async fn discover(&self) -> Result<Discovered, String> {
        let issuer = IssuerUrl::new(self.settings.issuer.clone()).map_err(|e| format!("issuer is not a URL: {e}"))?;
        // Also checks that the document names this very issuer.
        let metadata = ProviderMetadataWithLogout::discover_async(issuer.clone(), &self.http)
            .await
            .map_err(|e| format!("discovery failed: {e}"))?;
        let end_session = metadata.additional_metadata().end_session_endpoint.clone();
        let jwks_uri = metadata.jwks_uri().clone();
        let keys = metadata.jwks().clone();
        // `client_secret_basic` unless the provider offers only `client_secret_post`.
        let auth_type = match metadata.token_endpoint_auth_methods_supported() {
            Some(methods)
                if !methods.iter().any(|m| m.as_ref() == "client_secret_basic")
                    && methods.iter().any(|m| m.as_ref() == "client_secret_post") =>
            {
                AuthType::RequestBody
            }
            _ => AuthType::BasicAuth,
        };
        let redirect =
            RedirectUrl::new(self.settings.redirect_uri.clone()).map_err(|e| format!("redirect URI: {e}"))?;
        let client = CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(self.settings.client_id.clone()),
            self.settings.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(redirect)
        .set_auth_type(auth_type);
        Ok(Discovered { client, issuer, jwks_uri, keys: RwLock::new(keys), end_session })
    }

    /// Where to send the browser, and the pending sign-in to keep in its cookie.
    pub fn begin(&self, next: String, now: chrono::DateTime<chrono::Utc>) -> Result<(url::Url, Pending), Failure> {
        let d = self.current().ok_or(Failure::Unavailable("discovery has not succeeded yet"))?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request =
            d.client.authorize_url(CoreAuthenticationFlow::AuthorizationCode, CsrfToken::new_random, Nonce::new_random);
        // The crate asks for `openid` itself.
        for scope in self.settings.scopes.iter().filter(|s| s.as_str() != "openid") {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        let pending = Pending::new(state.into_secret(), nonce.secret().clone(), verifier.into_secret(), next, now);
        Ok((url, pending))
    }

    /// The callback: the state is this browser's, the code is exchanged
    /// (with the PKCE verifier) and the ID token verified.
    pub async fn finish(&self, pending: &Pending, callback: &Callback) -> Result<SignedIn, Failure> {
        let d = self.current().ok_or(Failure::Unavailable("discovery has not succeeded yet"))?;
        let state = callback.state.as_deref().ok_or_else(|| Failure::BadRequest("no state".into()))?;
        if !pending.state_matches(state) {
            return Err(Failure::BadRequest("state does not match this browser's sign-in".into()));
        }
        if let Some(error) = &callback.error {
            return Err(Failure::BadRequest(format!("the provider answered `{}`", printable(error))));
        }
        // RFC 9207: a provider that names itself must be ours (mix-up attacks).
        if callback.iss.as_deref().is_some_and(|iss| iss != d.issuer.as_str()) {
            return Err(Failure::BadRequest("the callback names another issuer".into()));
        }
        let code = callback.code.clone().ok_or_else(|| Failure::BadRequest("no code".into()))?;
        let token = d
            .client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|_| Failure::Unavailable("the provider has no token endpoint"))?
            .set_pkce_verifier(PkceCodeVerifier::new(pending.verifier.clone()))
            .request_async(&self.http)
            .await
            .map_err(token_failure)?;
        let raw = token.id_token().ok_or_else(|| Failure::BadToken("the token response has no ID token".into()))?;
        let raw = raw.to_string();
        let id_token: GroupsIdToken = raw.parse().map_err(|_| Failure::BadToken("unreadable ID token".into()))?;
        let (claims, verifier) = self.verify(&d, &id_token, &Nonce::new(pending.nonce.clone())).await?;
        if let Some(expected) = claims.access_token_hash() {
            let alg = id_token.signing_alg().map_err(|e| Failure::BadToken(e.to_string()))?;
            let key = id_token.signing_key(&verifier).map_err(|e| Failure::BadToken(e.to_string()))?;
            let actual = AccessTokenHash::from_token(token.access_token(), alg, key)
                .map_err(|e| Failure::BadToken(format!("at_hash: {e}")))?;
            if actual != *expected {
                return Err(Failure::BadToken("at_hash does not match the access token".into()));
            }
        }
        let userinfo = self.userinfo(&d, &claims, token.access_token()).await?;
        let identity = Identity::from_claims(&claims, userinfo.as_ref(), &self.settings.groups_claim);
        Ok(SignedIn { identity, id_token: raw })
    }

    fn verifier(&self, d: &Discovered, keys: CoreJsonWebKeySet) -> CoreIdTokenVerifier<'static> {
        let (now, iat_now) = (self.clock.clone(), self.clock.clone());
        CoreIdTokenVerifier::new_public_client(ClientId::new(self.settings.client_id.clone()), d.issuer.clone(), keys)
            .set_allowed_algs(SIGNING_ALGS)
            .set_time_fn(move || now.now())
            .set_issue_time_verifier_fn(move |iat| {
                if iat > iat_now.now() + IAT_LEEWAY {
                    Err(format!("issued at {iat}, more than 60 s ahead"))
                } else {
                    Ok(())
                }
            })
    }

    /// Verifies with the cached keys; a key id they lack fetches the JWKS
    /// once more (rotation) and verifies again.
    async fn verify(
        &self,
        d: &Discovered,
        id_token: &GroupsIdToken,
        nonce: &Nonce,
    ) -> Result<(IdTokenClaims<Extra, CoreGenderClaim>, CoreIdTokenVerifier<'static>), Failure> {
        let keys = d.keys.read().expect("keys lock").clone();
        let verifier = self.verifier(d, keys);
        match id_token.claims(&verifier, nonce) {
            Ok(claims) => return Ok((claims.clone(), verifier)),
            Err(ClaimsVerificationError::SignatureVerification(SignatureVerificationError::NoMatchingKey)) => {}
            Err(e) => return Err(Failure::BadToken(e.to_string())),
        }
        let fresh: CoreJsonWebKeySet = JsonWebKeySet::fetch_async(&d.jwks_uri, &self.http)
            .await
            .map_err(|_| Failure::Unavailable("the provider's keys could not be fetched"))?;
        tracing::info!(keys = fresh.keys().len(), "OpenID provider keys fetched again for an unknown key id");
        *d.keys.write().expect("keys lock") = fresh.clone();
        let verifier = self.verifier(d, fresh);
        let claims = id_token.claims(&verifier, nonce).map_err(|e| Failure::BadToken(e.to_string()))?.clone();
        Ok((claims, verifier))
    }

    /// Userinfo, when the provider has it and the ID token left the groups
    /// or the profile out; its `sub` must be the token's.
    async fn userinfo(
        &self,
        d: &Discovered,
        claims: &IdTokenClaims<Extra, CoreGenderClaim>,
        access_token: &openidconnect::AccessToken,
    ) -> Result<Option<UserInfoClaims<Extra, CoreGenderClaim>>, Failure> {
        let complete = claims.additional_claims().claims.contains_key(&self.settings.groups_claim)
            && claims.preferred_username().is_some()
            && claims.email().is_some();
        if complete {
            return Ok(None);
        }
        let Ok(request) = d.client.user_info(access_token.clone(), Some(claims.subject().clone())) else {
            return Ok(None);
        };
        match request.request_async::<Extra, _, CoreGenderClaim>(&self.http).await {
            Ok(info) => Ok(Some(info)),
            Err(openidconnect::UserInfoError::ClaimsVerification(e)) => {
                Err(Failure::BadToken(format!("userinfo: {e}")))
            }
            Err(_) => Err(Failure::Unavailable("the provider's userinfo did not answer")),
        }
    }

    /// The origin of the provider's sign-out page (for `form-action`), once discovered.
    pub fn origin(&self) -> Option<String> {
        let end = self.current()?.end_session.clone()?;
        Some(end.url().origin().ascii_serialization())
    }

    /// The provider's sign-out address for a session's ID token, when it has one.
    pub fn sign_out_url(&self, id_token: &str) -> Option<url::Url> {
        let end = self.current()?.end_session.clone()?;
        let mut url = end.url().clone();
        url.query_pairs_mut()
            .append_pair("id_token_hint", id_token)
            .append_pair("post_logout_redirect_uri", &self.settings.post_logout_uri)
            .append_pair("client_id", &self.settings.client_id);
        Some(url)
    }
}

/// A failed code exchange as a reason fit for a log line: the provider's
/// error code, never the body it sent (which may carry tokens).
fn token_failure<E: std::error::Error>(
    e: RequestTokenError<E, openidconnect::StandardErrorResponse<openidconnect::core::CoreErrorResponseType>>,
) -> Failure {
    match e {
        RequestTokenError::ServerResponse(refusal) => {
            Failure::BadToken(format!("the token endpoint refused the code: {}", refusal.error()))
        }
        RequestTokenError::Request(_) => Failure::Unavailable("the token endpoint did not answer"),
        RequestTokenError::Parse(..) => Failure::BadToken("unreadable token response".into()),
        RequestTokenError::Other(_) => Failure::BadToken("unexpected token response".into()),
    }
}

/// A provider-sent word for a log line: short and printable.
fn printable(raw: &str) -> String {
    raw.chars().filter(|c| c.is_ascii_graphic()).take(64).collect()
}

/// A random wait in `window`.
pub fn retry_delay(window: &RangeInclusive<Duration>) -> Duration {
    let (lo, hi) = (window.start().as_millis() as u64, window.end().as_millis() as u64);
    Duration::from_millis(rand::thread_rng().gen_range(lo..=hi.max(lo)))
}

async fn discover_until_done(provider: Weak<OidcProvider>) {
    loop {
        let Some(p) = provider.upgrade() else { return };
        match p.discover().await {
            Ok(d) => {
                tracing::info!(issuer = %p.settings.issuer, "OpenID provider discovered");
                *p.discovered.write().expect("discovery lock") = Some(Arc::new(d));
                return;
            }
            Err(reason) => {
                let wait = retry_delay(&p.settings.retry);
                tracing::warn!(issuer = %p.settings.issuer, %reason, retry_in_s = wait.as_secs(), "OpenID provider unavailable");
                drop(p);
                tokio::time::sleep(wait).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_retries_stay_in_their_window() {
        for _ in 0..200 {
            let d = retry_delay(&DISCOVERY_RETRY);
            assert!((Duration::from_secs(30)..=Duration::from_secs(60)).contains(&d), "{d:?}");
        }
    }

    #[test]
    fn provider_words_are_cut_to_printable_ascii() {
        assert_eq!(printable("access_denied\n<script>"), "access_denied<script>");
        assert_eq!(printable(&"x".repeat(100)).len(), 64);
    }
}
