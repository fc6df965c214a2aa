//! [`TabMessage`]: what one tab tells the others of its origin over the `cachet-auth` BroadcastChannel.
//!
//! Tabs share the auth held in memory: a login, a refresh or a clear in one tab reaches every other tab,
//! which adopts it and fires `sw-auth-state-change` with the same `type`. A bearer token crosses between
//! pages of one origin this way, in memory only; it is never written anywhere, and the Service Worker and
//! the yew-agent worker never listen on this channel.
//!
//! These messages live here rather than in `cachet_core::protocol` because they carry the client's
//! [`AuthData`] (the token included) and are read by no other context than this crate in another tab.
//! They use the same envelope: `{"v":1,"type":"<kebab-case>",...}`.
//!
//! | Message | Sent when | A receiving tab |
//! |---|---|---|
//! | `auth-changed {kind, auth}` | `setAuth` (`login`/`refresh`), a silent refresh (`refresh`, with the new token), `clearAuth` (`clear`), a refused refresh (`logout`) | adopts `auth` (login/refresh) or drops its memory auth (logout/clear), fires the event |
//! | `auth-query` | a tab starts with a persisted record but no token in memory (bearer, after a reload) | answers with `auth-answer` when it holds auth |
//! | `auth-answer {auth}` | in answer to `auth-query` | the asking tab adopts it when it still has none |

use cachet_core::protocol::{AuthChangeKind, PROTOCOL_VERSION};
use serde::{Deserialize, Serialize};

use crate::AuthData;

/// The name of the page-only channel.
pub const AUTH_CHANNEL: &str = "cachet-auth";

/// A message between tabs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
pub(crate) enum TabMessage {
    /// The sender's auth changed.
    #[serde(rename = "auth-changed")]
    Changed {
        /// The `sw-auth-state-change` type.
        kind: AuthChangeKind,
        /// The new auth for `login` / `refresh`; `null` for `logout` / `clear`.
        auth: Option<AuthData>,
    },
    /// Who holds auth?
    #[serde(rename = "auth-query")]
    Query,
    /// The answer to [`TabMessage::Query`].
    #[serde(rename = "auth-answer")]
    Answer {
        /// The sender's auth.
        auth: AuthData,
    },
}

#[derive(Serialize)]
struct Envelope<'a> {
    v: u32,
    #[serde(flatten)]
    message: &'a TabMessage,
}

impl TabMessage {
    /// The wire text.
    pub(crate) fn to_wire(&self) -> String {
        serde_json::to_string(&Envelope { v: PROTOCOL_VERSION, message: self }).unwrap_or_default()
    }

    /// Reads wire text; `None` for another version or anything unreadable (a tab of another build).
    pub(crate) fn from_wire(text: &str) -> Option<TabMessage> {
        let value: serde_json::Value = serde_json::from_str(text).ok()?;
        if value.get("v").and_then(serde_json::Value::as_u64) != Some(u64::from(PROTOCOL_VERSION)) {
            return None;
        }
        serde_json::from_value(value).ok()
    }
}
