//! A fake Web Push service on 127.0.0.1, for tests: no real push service is reachable from where the
//! tests run. It plays both the push service (it takes the RFC 8030 POST and checks its headers) and the
//! browser (it holds the subscription's private key and auth secret, and decrypts the RFC 8291 body), so
//! a test sees exactly the payload a browser's Service Worker would get, and can hand it to one
//! (`ServiceWorker.deliverPushMessage` in the end-to-end tests).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use base64ct::{Base64UrlUnpadded, Encoding as _};
use rand::RngCore as _;
use web_push_native::p256::elliptic_curve::sec1::ToEncodedPoint as _;
use web_push_native::p256::SecretKey;
use web_push_native::Auth;

/// One message the fake service took.
#[derive(Clone, Debug)]
pub struct Received {
    /// The `TTL` header.
    pub ttl: Option<String>,
    /// The `Content-Encoding` header (`aes128gcm`).
    pub content_encoding: Option<String>,
    /// The `Authorization` header (`vapid t=<JWT>, k=<public key>`).
    pub authorization: Option<String>,
    /// The decrypted payload, or why it did not decrypt.
    pub payload: Result<String, String>,
}

#[derive(Clone)]
struct Shared {
    secret: SecretKey,
    auth: [u8; 16],
    status: Arc<Mutex<StatusCode>>,
    received: Arc<Mutex<Vec<Received>>>,
}

/// A running fake push service with one subscription; it stops when dropped.
pub struct FakePushService {
    addr: SocketAddr,
    shared: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl FakePushService {
    /// Binds 127.0.0.1 on a free port; the service answers 201 until told otherwise.
    pub async fn start() -> anyhow::Result<FakePushService> {
        let mut bytes = [0_u8; 32];
        let secret = loop {
            rand::rng().fill_bytes(&mut bytes);
            if let Ok(secret) = SecretKey::from_slice(&bytes) {
                break secret;
            }
        };
        let mut auth = [0_u8; 16];
        rand::rng().fill_bytes(&mut auth);
        let shared = Shared {
            secret,
            auth,
            status: Arc::new(Mutex::new(StatusCode::CREATED)),
            received: Arc::default(),
        };
        let app = Router::new().route("/push/{id}", post(take)).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakePushService { addr, shared, task })
    }

    /// The subscription as `PushSubscription.toJSON()` gives it, its endpoint on this service.
    pub fn subscription_json(&self) -> serde_json::Value {
        let public = self.shared.secret.public_key().to_encoded_point(false);
        serde_json::json!({
            "endpoint": format!("http://{}/push/1", self.addr),
            "expirationTime": null,
            "keys": {
                "p256dh": Base64UrlUnpadded::encode_string(public.as_bytes()),
                "auth": Base64UrlUnpadded::encode_string(&self.shared.auth),
            },
        })
    }

    /// Answers every later message with `status` (410 says the subscription is gone).
    pub fn answer_with(&self, status: StatusCode) {
        if let Ok(mut slot) = self.shared.status.lock() {
            *slot = status;
        }
    }

    /// Every message taken so far, oldest first.
    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().map(|received| received.clone()).unwrap_or_default()
    }

    /// Waits (at most `limit`) until at least `count` messages were taken; returns them all.
    pub async fn wait_for(&self, count: usize, limit: std::time::Duration) -> Vec<Received> {
        let started = std::time::Instant::now();
        while self.received().len() < count && started.elapsed() < limit {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        self.received()
    }
}

impl Drop for FakePushService {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn take(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).map(str::to_owned);
    let payload =
        web_push_native::decrypt(body.to_vec(), &shared.secret, &Auth::clone_from_slice(&shared.auth))
            .map_err(|error| error.to_string())
            .and_then(|bytes| String::from_utf8(bytes).map_err(|error| error.to_string()));
    let received = Received {
        ttl: header("ttl"),
        content_encoding: header("content-encoding"),
        authorization: header("authorization"),
        payload,
    };
    if let Ok(mut all) = shared.received.lock() {
        all.push(received);
    }
    shared.status.lock().map(|status| *status).unwrap_or(StatusCode::CREATED)
}
