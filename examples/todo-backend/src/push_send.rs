//! Sending one Web Push message: RFC 8030 (a POST to the subscription's endpoint), the payload
//! encrypted with RFC 8291 (`aes128gcm`, to the browser's `p256dh` key and `auth` secret) and signed with
//! VAPID (RFC 8292, the server's ES256 key), by `web-push-native`; sent over hyper with rustls.
//!
//! Push services are HTTPS. Plain HTTP is accepted only for a loopback endpoint (`http://127.0.0.1`,
//! `http://localhost`, `http://[::1]`): the fake push service of the tests, since no real one is
//! reachable from where they run. A send never panics: an unreachable service, a timeout or a refusal
//! is a [`SendError`] the caller logs.

use std::time::Duration;

use base64ct::{Base64UrlUnpadded, Encoding as _};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use web_push_native::jwt_simple::algorithms::{ECDSAP256KeyPairLike as _, ES256KeyPair};
use web_push_native::p256::PublicKey;
use web_push_native::{Auth, WebPushBuilder};

/// How long one send may take, connection included.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a push service keeps an undelivered message (the `TTL` header): one day.
pub const PUSH_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// The HTTP(S) client pushes are sent with.
pub type PushClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

/// A browser's push subscription, as `PushSubscription.toJSON()` gives it, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscription {
    /// The push service URL.
    pub endpoint: String,
    /// The browser's P-256 public key, base64url (65 bytes).
    pub p256dh: String,
    /// The browser's auth secret, base64url (16 bytes).
    pub auth: String,
}

/// How a push service answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Accepted (201, or another 2xx).
    Accepted,
    /// The subscription is gone (404 or 410): forget it.
    Gone,
}

/// Why a push was not delivered.
#[derive(Debug)]
pub enum SendError {
    /// The subscription cannot be used (bad endpoint or keys).
    Subscription(String),
    /// Encrypting or signing failed.
    Build(String),
    /// No answer: connection refused, DNS, TLS, or [`SEND_TIMEOUT`].
    Unreachable(String),
    /// The push service refused the message.
    Refused {
        /// Its status.
        status: u16,
        /// Its answer (at most 200 bytes).
        body: String,
    },
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Subscription(message) => write!(f, "unusable push subscription: {message}"),
            SendError::Build(message) => write!(f, "building the push message: {message}"),
            SendError::Unreachable(message) => write!(f, "push service unreachable: {message}"),
            SendError::Refused { status, body } => write!(f, "push service answered {status}: {body}"),
        }
    }
}

impl std::error::Error for SendError {}

impl Subscription {
    /// Reads `PushSubscription.toJSON()`: `{endpoint, keys: {p256dh, auth}}`, every part checked (a
    /// 16-byte auth secret, a valid P-256 point, an HTTPS endpoint or a loopback HTTP one).
    pub fn from_json(value: &serde_json::Value) -> Result<Subscription, String> {
        let text = |pointer: &str| {
            value.pointer(pointer).and_then(serde_json::Value::as_str).map(str::to_owned).ok_or_else(|| {
                format!(
                    "field {} is missing or not a string",
                    pointer.trim_start_matches('/').replace('/', ".")
                )
            })
        };
        let subscription = Subscription {
            endpoint: text("/endpoint")?,
            p256dh: text("/keys/p256dh")?,
            auth: text("/keys/auth")?,
        };
        subscription.builder()?;
        Ok(subscription)
    }

    fn builder(&self) -> Result<WebPushBuilder, String> {
        let endpoint: hyper::Uri = self.endpoint.parse().map_err(|error| format!("endpoint: {error}"))?;
        let loopback = matches!(endpoint.host(), Some("127.0.0.1" | "localhost" | "[::1]"));
        match endpoint.scheme_str() {
            Some("https") => {}
            Some("http") if loopback => {}
            _ => return Err("endpoint must be an https:// URL (http:// only on loopback)".to_owned()),
        }
        let decode = |name: &str, text: &str| {
            Base64UrlUnpadded::decode_vec(text.trim_end_matches('='))
                .map_err(|_| format!("keys.{name} is not base64url"))
        };
        let auth = decode("auth", &self.auth)?;
        if auth.len() != 16 {
            return Err(format!("keys.auth must be 16 bytes, got {}", auth.len()));
        }
        let public = PublicKey::from_sec1_bytes(&decode("p256dh", &self.p256dh)?)
            .map_err(|_| "keys.p256dh is not a P-256 public key".to_owned())?;
        Ok(WebPushBuilder::new(endpoint, public, Auth::clone_from_slice(&auth)).with_valid_duration(PUSH_TTL))
    }
}

/// A client for HTTPS push services (the system's root certificates) and loopback HTTP. Without root
/// certificates (an `Err`, to log) the client still sends to loopback HTTP, and every HTTPS send fails
/// with an error naming the certificate.
pub fn client() -> (PushClient, Result<(), String>) {
    let builder = hyper_rustls::HttpsConnectorBuilder::new();
    let (builder, roots) = match builder.with_native_roots() {
        Ok(builder) => (builder, Ok(())),
        Err(error) => {
            let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map(|config| {
                    config.with_root_certificates(rustls::RootCertStore::empty()).with_no_client_auth()
                });
            let Ok(config) = config else {
                unreachable!("ring's default provider supports the default protocol versions")
            };
            let why = format!("no root certificates ({error}): HTTPS push services cannot be reached");
            (hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(config), Err(why))
        }
    };
    let https = builder.https_or_http().enable_http1().build();
    (Client::builder(TokioExecutor::new()).build(https), roots)
}

/// The public half of `key`, base64url: what a page passes to `PushManager.subscribe`.
pub fn public_key_base64url(key: &ES256KeyPair) -> String {
    Base64UrlUnpadded::encode_string(&key.key_pair().public_key().to_bytes_uncompressed())
}

/// Encrypts `payload` for `subscription`, signs it with `vapid` (`subject`: a `mailto:` or `https:`
/// contact) and POSTs it, within [`SEND_TIMEOUT`].
pub async fn send(
    client: &PushClient,
    vapid: &ES256KeyPair,
    subject: &str,
    subscription: &Subscription,
    payload: &str,
) -> Result<Delivery, SendError> {
    let builder = subscription.builder().map_err(SendError::Subscription)?;
    let request = builder
        .with_vapid(vapid, subject)
        .build(payload.as_bytes().to_vec())
        .map_err(|error| SendError::Build(error.to_string()))?
        .map(|body| Full::new(Bytes::from(body)));
    let answer = tokio::time::timeout(SEND_TIMEOUT, async {
        let response =
            client.request(request).await.map_err(|error| SendError::Unreachable(chain(&error)))?;
        let status = response.status();
        let body = response.into_body().collect().await.map(|body| body.to_bytes()).unwrap_or_default();
        Ok::<_, SendError>((status, body))
    })
    .await
    .map_err(|_| SendError::Unreachable(format!("no answer within {SEND_TIMEOUT:?}")))??;
    let (status, body) = answer;
    match status.as_u16() {
        200..=299 => Ok(Delivery::Accepted),
        404 | 410 => Ok(Delivery::Gone),
        status => {
            let text = String::from_utf8_lossy(&body);
            Err(SendError::Refused { status, body: text.chars().take(200).collect() })
        }
    }
}

/// An error and its causes, joined: hyper's top-level message alone ("client error (Connect)") hides
/// the reason.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
