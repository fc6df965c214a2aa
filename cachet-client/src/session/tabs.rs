//! `TabMessage`: what one tab tells the others of its origin over the `cachet-auth` BroadcastChannel.
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

use cachet_core::json::ObjectWriter;
use cachet_core::protocol::{AuthChangeKind, PROTOCOL_VERSION};
#[cfg(test)]
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::AuthData;

pub use crate::settings::AUTH_CHANNEL;

/// A message between tabs. Encoded and decoded by hand ([`TabMessage::to_wire`],
/// [`TabMessage::from_wire`]: no serde in the client's wasm, `crate::json`), with the derive kept as the
/// tests' oracle.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(test, derive(Serialize, Deserialize))]
#[cfg_attr(test, serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase"))]
pub(crate) enum TabMessage {
    /// The sender's auth changed.
    #[cfg_attr(test, serde(rename = "auth-changed"))]
    Changed {
        /// The `sw-auth-state-change` type.
        kind: AuthChangeKind,
        /// The new auth for `login` / `refresh`; `null` for `logout` / `clear`.
        auth: Option<AuthData>,
    },
    /// Who holds auth?
    #[cfg_attr(test, serde(rename = "auth-query"))]
    Query,
    /// The answer to [`TabMessage::Query`].
    #[cfg_attr(test, serde(rename = "auth-answer"))]
    Answer {
        /// The sender's auth.
        auth: AuthData,
    },
}

impl TabMessage {
    /// The wire text: `v`, `type`, then the fields in their declaration order, as the derive wrote it.
    pub(crate) fn to_wire(&self) -> String {
        let mut text = String::new();
        let mut object = ObjectWriter::start(&mut text);
        object.number("v", u64::from(PROTOCOL_VERSION));
        let auth = |object: &mut ObjectWriter<'_>, auth: Option<&AuthData>| {
            crate::json::write(object.member("auth"), &auth.map_or(Value::Null, AuthData::to_value));
        };
        match self {
            TabMessage::Changed { kind, auth: given } => {
                object.string("type", "auth-changed").string("kind", kind.as_str());
                auth(&mut object, given.as_ref());
            }
            TabMessage::Query => {
                object.string("type", "auth-query");
            }
            TabMessage::Answer { auth: given } => {
                object.string("type", "auth-answer");
                auth(&mut object, Some(given));
            }
        }
        object.end();
        text
    }

    /// Reads wire text; `None` for another version or anything unreadable (a tab of another build).
    ///
    /// Why by hand: serde's derive decodes an internally tagged enum by buffering the object in its
    /// private `Content` tree, which (with the float formatting its errors link) was about 15 KB of the
    /// page's wasm, for this one enum; and since session 37 no serde decoder is in the client's wasm at
    /// all. The test runs the derive as the oracle over accepted and refused messages. (An `auth` given
    /// as an array, which the derive would take for AuthData's fields in order, is refused.)
    pub(crate) fn from_wire(text: &str) -> Option<TabMessage> {
        let value: Value = crate::json::read(text.as_bytes()).ok()?;
        if value.get("v").and_then(Value::as_u64) != Some(u64::from(PROTOCOL_VERSION)) {
            return None;
        }
        let auth = |value: &Value| AuthData::read(value.as_object()?).ok();
        match value.get("type")?.as_str()? {
            "auth-changed" => Some(TabMessage::Changed {
                kind: match value.get("kind")?.as_str()? {
                    "login" => AuthChangeKind::Login,
                    "logout" => AuthChangeKind::Logout,
                    "refresh" => AuthChangeKind::Refresh,
                    "clear" => AuthChangeKind::Clear,
                    _ => return None,
                },
                // A missing `auth` is none, as the derive reads an `Option` field.
                auth: match value.get("auth") {
                    None | Some(Value::Null) => None,
                    Some(given) => Some(auth(given)?),
                },
            }),
            "auth-query" => Some(TabMessage::Query),
            "auth-answer" => Some(TabMessage::Answer { auth: auth(value.get("auth")?)? }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::*;

    use super::*;

    wasm_bindgen_test_configure!(run_in_browser);

    /// What the derive makes of `text` (the oracle).
    fn by_derive(text: &str) -> Option<TabMessage> {
        let value: Value = serde_json::from_slice(text.as_bytes()).ok()?;
        if value.get("v").and_then(Value::as_u64) != Some(u64::from(PROTOCOL_VERSION)) {
            return None;
        }
        serde_json::from_value(value).ok()
    }

    #[wasm_bindgen_test]
    fn the_hand_decoder_reads_what_the_derive_reads_and_refuses_what_it_refuses() {
        let auth = AuthData {
            token: Some("t".into()),
            user: Some(serde_json::json!({ "id": 7 })),
            expires_at: Some(1_700_000_000_000),
        };
        let sent = [
            TabMessage::Changed { kind: AuthChangeKind::Login, auth: Some(auth.clone()) },
            TabMessage::Changed { kind: AuthChangeKind::Clear, auth: None },
            TabMessage::Query,
            TabMessage::Answer { auth: auth.clone() },
            TabMessage::Answer { auth: AuthData::default() },
        ];
        for message in &sent {
            let wire = message.to_wire();
            let derived = serde_json::to_value(message).unwrap_or_default();
            let mut written: Value = serde_json::from_str(&wire).unwrap_or_default();
            assert_eq!(
                written.as_object_mut().and_then(|object| object.remove("v")),
                Some(1.into()),
                "{wire}"
            );
            assert_eq!(written, derived, "{wire}");
            assert_eq!(TabMessage::from_wire(&wire).as_ref(), Some(message), "{wire}");
            assert_eq!(by_derive(&wire).as_ref(), Some(message), "{wire}");
        }
        let texts = [
            r#"{"v":1,"type":"auth-changed","kind":"refresh"}"#,
            r#"{"v":1,"type":"auth-changed","kind":"logout","auth":null,"extra":[1,2]}"#,
            r#"{"v":1,"type":"auth-changed","kind":"login","auth":{"expiresAt":1.5e12}}"#,
            r#"{"v":1,"type":"auth-changed","kind":"login","auth":{"token":7}}"#,
            r#"{"v":1,"type":"auth-changed","kind":"nonsense","auth":null}"#,
            r#"{"v":1,"type":"auth-changed","auth":null}"#,
            r#"{"v":1,"type":"auth-changed","kind":"login","auth":"me"}"#,
            r#"{"v":1,"type":"auth-query","auth":5}"#,
            r#"{"v":1,"type":"auth-answer"}"#,
            r#"{"v":1,"type":"auth-answer","auth":{}}"#,
            r#"{"v":1,"type":"auth-answer","auth":null}"#,
            r#"{"v":1,"type":"auth-other"}"#,
            r#"{"v":1,"type":7}"#,
            r#"{"v":1}"#,
            r#"{"v":2,"type":"auth-query"}"#,
            r#"{"type":"auth-query"}"#,
            r#"[1,2]"#,
            "not json",
        ];
        for text in texts {
            assert_eq!(TabMessage::from_wire(text), by_derive(text), "{text}");
        }
    }
}
