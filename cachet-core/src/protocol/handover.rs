//! What a page hands over to the Service Worker that takes control (`hand-over`, [`super::PageToSw`]):
//! the answers it stored before. What the worker keeps of them is decided in `crate::handover`.

use serde::{Deserialize, Serialize};

/// One answer the page stored before a worker controlled it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandedEntry {
    /// The request as the page built it.
    pub request: HandedRequest,
    /// The answer the network gave it.
    pub response: HandedResponse,
    /// When the page stored it (Unix ms): the entry expires when it would have in the page.
    pub stored_at: u64,
}

/// A request of a [`HandedEntry`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandedRequest {
    /// `GET` or `POST`.
    pub method: String,
    /// The absolute URL.
    pub url: String,
    /// `(name, value)`, cachet's headers included (`X-SW-Strategy`, `X-Cachet-Tags`, `X-Cachet-Auth`), never
    /// `Authorization`.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// A GraphQL POST's body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The [`auth_fingerprint`](crate::cache_key::auth_fingerprint) of the `Authorization` it was sent with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization: Option<String>,
}

/// An answer of a [`HandedEntry`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandedResponse {
    /// HTTP status.
    pub status: u16,
    /// `(name, value)` as the page read them.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// The body (an answer whose body is not UTF-8 text is not handed over).
    pub body: String,
}
