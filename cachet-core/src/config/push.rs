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

use super::read::{check_path, invalid, show, Object};
use super::{AuthConfig, AuthType, ConfigError};
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

    pub(super) fn read(push: &Object<'_>) -> Result<PushConfig, ConfigError> {
        let notification =
            push.child("notification", &["title", "body", "icon", "tag", "silentWhenVisible"])?;
        let defaults = PushNotification::default();
        Ok(PushConfig {
            enabled: push.bool("enabled", false)?,
            notification: PushNotification {
                title: text(&notification, "title", &defaults.title, 1, 120)?,
                body: text(&notification, "body", &defaults.body, 0, 500)?,
                icon: match notification.get("icon") {
                    None => None,
                    Some(value) => Some(icon_path(&format!("{}.icon", notification.path), value)?),
                },
                tag: text(&notification, "tag", &defaults.tag, 1, 64)?,
                silent_when_visible: notification.bool("silentWhenVisible", false)?,
            },
        })
    }
}

/// A string of `min..=max` characters, `default` when absent.
fn text(
    object: &Object<'_>,
    key: &str,
    default: &str,
    min: usize,
    max: usize,
) -> Result<String, ConfigError> {
    let path = format!("{}.{key}", object.path);
    match object.get(key) {
        None => Ok(default.to_owned()),
        Some(Value::String(text)) if (min..=max).contains(&text.chars().count()) => Ok(text.clone()),
        Some(other) => Err(invalid(
            &path,
            format!("expected a string of {min} to {max} characters, got {}", show(other)),
        )),
    }
}

fn icon_path(path: &str, value: &Value) -> Result<String, ConfigError> {
    let text =
        value.as_str().ok_or_else(|| invalid(path, format!("expected a URL path, got {}", show(value))))?;
    check_path(text)
        .map_err(|expected| invalid(path, format!("expected {expected}, got {}", show(value))))?;
    Ok(text.to_owned())
}
