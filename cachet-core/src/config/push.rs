//! `features.push`: server push (SPEC §5.8), and the notification the Service Worker shows for a push.
//!
//! | Key | Type | Default | Rule |
//! |---|---|---|---|
//! | `features.push.enabled` | bool | `false` | needs cookie auth or no auth (see [`PushRefusal`]) |
//! | `features.push.notification.title` | string | `"Updated"` | 1–120 characters |
//! | `features.push.notification.body` | string | `"New data is available."` | at most 500 characters |
//! | `features.push.notification.icon` | URL path | none | starts with `/`, no whitespace |
//! | `features.push.notification.tag` | string | `"cachet-push"` | 1–64 characters: a new push replaces the last notification instead of piling up |
//! | `features.push.notification.silentWhenVisible` | bool | `false` | skip the notification while a tab of the app is visible |
//!
//! Browsers accept only `userVisibleOnly` push subscriptions: every push must show a notification, or the
//! browser shows a generic one of its own (Chrome: "This site has been updated in the background") and may
//! end the subscription (Safari, after a few). Chrome and Firefox let a push pass silently while a tab of
//! the origin is visible; Safari does not, which is why `silentWhenVisible` is off unless asked for.

use super::read::{check_path, show, Object};
use super::{AuthConfig, AuthType};
use crate::json::Value;
use serde::Serialize;

/// `features.push`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct PushConfig {
    /// Whether this app accepts server pushes (the worker acts on them, the page may subscribe).
    pub enabled: bool,
    /// What the Service Worker shows for each push.
    pub notification: PushNotification,
}

/// `features.push.notification`: the notification shown for a push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PushNotification {
    /// Its title.
    pub title: String,
    /// Its text.
    pub body: String,
    /// An icon URL path, when the app has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// The notification tag: a new push replaces the notification of the last one.
    pub tag: String,
    /// Show nothing while a window of the app is visible (what Chrome and Firefox accept, Safari not).
    pub silent_when_visible: bool,
}

impl Default for PushNotification {
    fn default() -> Self {
        PushNotification {
            title: "Updated".to_owned(),
            body: "New data is available.".to_owned(),
            icon: None,
            tag: "cachet-push".to_owned(),
            silent_when_visible: false,
        }
    }
}

/// Why this app's config does not accept server push: the page's subscribe call fails with it, and the
/// Service Worker ignores a push with it on the console.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PushRefusal {
    /// `features.push.enabled` is off.
    #[error(
        "server push is off: set features.push.enabled to true in cachet.config.json, then cachet generate"
    )]
    Off,
    /// Auth is bearer or custom: SPEC §5.8 allows push with cookie auth only.
    #[error(
        "server push needs cookie auth (SPEC §5.8): a push is handled by the Service Worker with no page \
         open, and with {} auth the token lives only in the pages, so the worker could not fetch as the \
         user; features.auth.type is {}",
        .0.as_str(),
        .0.as_str()
    )]
    NeedsCookieAuth(AuthType),
}

impl PushConfig {
    /// Whether pushes are accepted under `auth`: push on, and cookie auth or no auth at all.
    pub fn allowed(&self, auth: &AuthConfig) -> Result<(), PushRefusal> {
        if !self.enabled {
            return Err(PushRefusal::Off);
        }
        match (auth.enabled, auth.kind) {
            (true, kind @ (AuthType::Bearer | AuthType::Custom)) => Err(PushRefusal::NeedsCookieAuth(kind)),
            _ => Ok(()),
        }
    }

    /// Reads `features.push` into `config` (the default), noting the first error.
    pub(super) fn read(push: &Object<'_>, config: &mut PushConfig) {
        let notification = push.child("notification", &["title", "body", "icon", "tag", "silentWhenVisible"]);
        push.bool("enabled", &mut config.enabled);
        let shown = &mut config.notification;
        text(&notification, "title", &mut shown.title, 1, 120);
        text(&notification, "body", &mut shown.body, 0, 500);
        if let Some(value) = notification.get("icon") {
            match icon_path(value) {
                Ok(icon) => shown.icon = Some(icon),
                Err(message) => notification.wrong("icon", message),
            }
        }
        text(&notification, "tag", &mut shown.tag, 1, 64);
        notification.bool("silentWhenVisible", &mut shown.silent_when_visible);
    }
}

/// A string of `min..=max` characters, into `slot` when present.
fn text(object: &Object<'_>, key: &str, slot: &mut String, min: usize, max: usize) {
    match object.get(key) {
        None => {}
        Some(Value::String(text)) if (min..=max).contains(&text.chars().count()) => slot.clone_from(text),
        Some(other) => {
            object.wrong(key, format!("expected a string of {min} to {max} characters, got {}", show(other)))
        }
    }
}

/// A URL path, or what was wrong with `value`.
fn icon_path(value: &Value) -> Result<String, String> {
    let text = value.as_str().ok_or_else(|| format!("expected a URL path, got {}", show(value)))?;
    check_path(text).map_err(|expected| format!("expected {expected}, got {}", show(value)))?;
    Ok(text.to_owned())
}
