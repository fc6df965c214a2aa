//! Server push (issue 21): when a session changes a user's todos, every *other* browser of that user
//! that subscribed is sent a push naming the tags of the change, and its cachet Service Worker drops
//! those cached answers (its open tabs re-run their queries).
//!
//! | Route | Auth | What it does |
//! |---|---|---|
//! | `GET /api/push/key` | none | the server's VAPID public key, base64url text (what `subscribePush` takes) |
//! | `POST /api/push/subscription` | the session | stores `PushSubscription.toJSON()` for the user and this session (replacing the endpoint's last owner) |
//! | `DELETE /api/push/subscription` | the session | forgets `{endpoint}` |
//!
//! The VAPID key pair is made on first run and kept in SQLite (table `vapid_key`), so subscriptions
//! survive restarts. A logout forgets the subscriptions of its session. Each successful GraphQL
//! mutation pushes `{"v":1,"type":"invalidate","tags":[...]}` (cachet-core's [`PushMessage`]): the tags
//! its name derives (`CreateTodo`: `todo`, `todos`) plus `summary`, the app's explicit tag of its
//! summary query, to the user's subscriptions made by other sessions: the session that made the change
//! already invalidated through its own worker. Sends run in the background, never delaying the
//! GraphQL answer; a failure is logged on stderr (`push to <endpoint>: ...`) and never crashes the
//! server; a subscription the push service calls gone (404, 410) is forgotten.
//!
//! Push works with cookie sessions only, as cachet's Service Worker accepts pushes only with cookie auth
//! (SPEC §5.8): in bearer mode the routes answer 409.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use cachet_core::graphql::OperationKind;
use cachet_core::protocol::encode_message;
use cachet_core::protocol::push::PushMessage;
use rusqlite::{params, OptionalExtension};
use web_push_native::jwt_simple::algorithms::ES256KeyPair;

use crate::app::AppState;
use crate::auth::authenticate;
use crate::config::AuthMode;
use crate::db::Db;
use crate::error::{now_ms, parse_json, ApiError};
use crate::push_send::{self, Delivery, PushClient, Subscription};

/// The VAPID contact (RFC 8292 `sub`): push services write here about abuse.
pub const VAPID_SUBJECT: &str = "mailto:todo-backend@example.invalid";

/// The explicit tag of the example app's summary query, which every todo change affects.
pub const SUMMARY_TAG: &str = "summary";

/// The tables, created with the schema.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS push_subscriptions (
    endpoint TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    session TEXT NOT NULL,
    p256dh TEXT NOT NULL,
    auth TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS push_subscriptions_user ON push_subscriptions(user_id);
CREATE TABLE IF NOT EXISTS vapid_key (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    private_key BLOB NOT NULL
);
";

/// What sending pushes needs: the VAPID key pair and the HTTP client.
#[derive(Clone)]
pub struct Pusher {
    vapid: Arc<ES256KeyPair>,
    public_key: Arc<str>,
    client: PushClient,
}

impl Pusher {
    /// Loads the VAPID key pair from `db` (making and storing one on first run) and builds the client.
    /// Missing root certificates are logged; HTTPS sends then fail one by one, each logged.
    pub fn new(db: &Db) -> anyhow::Result<Pusher> {
        let vapid = vapid_key(db)?;
        let (client, roots) = push_send::client();
        if let Err(error) = roots {
            eprintln!("todo-backend: server push: {error}");
        }
        Ok(Pusher {
            public_key: push_send::public_key_base64url(&vapid).into(),
            vapid: Arc::new(vapid),
            client,
        })
    }

    /// The VAPID public key, base64url.
    pub fn public_key(&self) -> &str {
        &self.public_key
    }

    /// Sends `payload` to `subscription`; `Ok(Gone)` when the push service no longer knows it.
    pub async fn send(
        &self,
        subscription: &Subscription,
        payload: &str,
    ) -> Result<Delivery, push_send::SendError> {
        push_send::send(&self.client, &self.vapid, VAPID_SUBJECT, subscription, payload).await
    }
}

fn vapid_key(db: &Db) -> anyhow::Result<ES256KeyPair> {
    let conn = db.conn()?;
    let stored: Option<Vec<u8>> =
        conn.query_row("SELECT private_key FROM vapid_key WHERE id = 1", [], |row| row.get(0)).optional()?;
    if let Some(bytes) = stored {
        return ES256KeyPair::from_bytes(&bytes)
            .map_err(|error| anyhow::anyhow!("the stored VAPID key: {error}"));
    }
    let key = ES256KeyPair::generate();
    conn.execute("INSERT INTO vapid_key (id, private_key) VALUES (1, ?1)", params![key.to_bytes()])?;
    Ok(key)
}

/// The push routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/push/key", get(key))
        .route("/api/push/subscription", axum::routing::post(subscribe).delete(unsubscribe))
}

async fn key(State(state): State<AppState>) -> Response {
    ([(header::CONTENT_TYPE, "text/plain")], state.pusher.public_key().to_owned()).into_response()
}

fn cookie_only(state: &AppState) -> Result<(), ApiError> {
    match state.auth_mode {
        AuthMode::Cookie => Ok(()),
        AuthMode::Bearer => Err(ApiError::new(
            StatusCode::CONFLICT,
            "server push needs cookie auth (SPEC §5.8): this server runs in bearer mode",
        )),
    }
}

async fn subscribe(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    cookie_only(&state)?;
    let authed = authenticate(&state, &headers)?;
    let value: serde_json::Value = parse_json(&body)?;
    let subscription = Subscription::from_json(&value).map_err(ApiError::bad_request)?;
    let conn = state.db.conn()?;
    conn.execute(
        "INSERT OR REPLACE INTO push_subscriptions (endpoint, user_id, session, p256dh, auth, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            subscription.endpoint,
            authed.user.id,
            authed.token,
            subscription.p256dh,
            subscription.auth,
            now_ms()
        ],
    )
    .map_err(anyhow::Error::from)?;
    Ok(StatusCode::CREATED)
}

#[derive(serde::Deserialize)]
struct EndpointBody {
    endpoint: String,
}

async fn unsubscribe(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    cookie_only(&state)?;
    let authed = authenticate(&state, &headers)?;
    let EndpointBody { endpoint } = parse_json(&body)?;
    state
        .db
        .conn()?
        .execute(
            "DELETE FROM push_subscriptions WHERE endpoint = ?1 AND user_id = ?2",
            params![endpoint, authed.user.id],
        )
        .map_err(anyhow::Error::from)?;
    Ok(StatusCode::NO_CONTENT)
}

/// Forgets the subscriptions made by `session` (at logout).
pub fn forget_session(db: &Db, session: &str) -> anyhow::Result<()> {
    db.conn()?.execute("DELETE FROM push_subscriptions WHERE session = ?1", params![session])?;
    Ok(())
}

/// The subscriptions of `user_id` made by sessions other than `except_session`.
pub fn subscriptions_of(db: &Db, user_id: i64, except_session: &str) -> anyhow::Result<Vec<Subscription>> {
    let conn = db.conn()?;
    let mut statement = conn.prepare(
        "SELECT endpoint, p256dh, auth FROM push_subscriptions WHERE user_id = ?1 AND session != ?2 ORDER BY created_at",
    )?;
    let rows = statement.query_map(params![user_id, except_session], |row| {
        Ok(Subscription { endpoint: row.get(0)?, p256dh: row.get(1)?, auth: row.get(2)? })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The tags a successful mutation named `operation` changed: those its name derives, and the summary.
pub fn tags_of_mutation(operation: Option<&str>) -> Vec<String> {
    let mut tags = cachet_core::tags::invalidation_tags(OperationKind::Mutation, operation);
    tags.push(SUMMARY_TAG.to_owned());
    tags
}

/// After a change by `session` of `user_id`: pushes `tags` to the user's other subscriptions, in the
/// background. Returns at once.
pub fn announce_change(state: &AppState, user_id: i64, session: &str, tags: Vec<String>) {
    if state.auth_mode != AuthMode::Cookie {
        return;
    }
    let subscriptions = match subscriptions_of(&state.db, user_id, session) {
        Ok(subscriptions) if subscriptions.is_empty() => return,
        Ok(subscriptions) => subscriptions,
        Err(error) => return eprintln!("todo-backend: reading push subscriptions: {error:#}"),
    };
    let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
    let payload = encode_message(&PushMessage::invalidate(&tags));
    let (pusher, db, counters) = (state.pusher.clone(), state.db.clone(), state.counters.clone());
    tokio::spawn(async move {
        for subscription in subscriptions {
            match pusher.send(&subscription, &payload).await {
                Ok(Delivery::Accepted) => {
                    counters.incr("push sent");
                }
                Ok(Delivery::Gone) => {
                    counters.incr("push gone");
                    let forget = db.conn().and_then(|conn| {
                        conn.execute(
                            "DELETE FROM push_subscriptions WHERE endpoint = ?1",
                            params![subscription.endpoint],
                        )
                        .map_err(Into::into)
                    });
                    if let Err(error) = forget {
                        eprintln!(
                            "todo-backend: forgetting the push subscription {}: {error:#}",
                            subscription.endpoint
                        );
                    }
                }
                Err(error) => {
                    counters.incr("push failed");
                    eprintln!("todo-backend: push to {}: {error}", subscription.endpoint);
                }
            }
        }
    });
}
