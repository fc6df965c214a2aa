//! [`AuthType`]: `features.auth.type`, and what each type means for fetches and refreshes.

use std::str::FromStr;

use serde::Serialize;

/// `features.auth.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthType {
    /// An httpOnly session cookie the browser sends; fetches use `credentials: 'include'`.
    Cookie,
    /// `Authorization: Bearer <token>`, the token held in page memory only.
    Bearer,
    /// The app's own adapter. Fetches include credentials, and the Service Worker asks the page to
    /// refresh on an auth failure, as in bearer mode.
    Custom,
}

impl AuthType {
    /// The name `features.auth.type` gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthType::Cookie => "cookie",
            AuthType::Bearer => "bearer",
            AuthType::Custom => "custom",
        }
    }

    /// `AUTH_WITH_CREDENTIALS`: whether fetches send credentials (`true` for cookie and custom).
    pub fn with_credentials(self) -> bool {
        !matches!(self, AuthType::Bearer)
    }

    /// Whether an auth failure triggers a silent refresh and retry (bearer and custom; SPEC §5.6).
    pub fn refreshes(self) -> bool {
        !matches!(self, AuthType::Cookie)
    }
}

impl FromStr for AuthType {
    type Err = ();
    fn from_str(text: &str) -> Result<Self, ()> {
        match text {
            "cookie" => Ok(AuthType::Cookie),
            "bearer" => Ok(AuthType::Bearer),
            "custom" => Ok(AuthType::Custom),
            _ => Err(()),
        }
    }
}
