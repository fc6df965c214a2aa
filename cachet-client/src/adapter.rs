//! The auth adapter (SPEC §2): how the app gets, sends, refreshes and fetches its auth.
//!
//! | Member | [`CookieAdapter`] | [`BearerAdapter`] |
//! |---|---|---|
//! | [`AuthAdapter::auth_type`] | `cookie` (`AUTH_WITH_CREDENTIALS` true) | `bearer` (false) |
//! | [`AuthAdapter::get_auth`] | `None` (the browser sends the cookie) | `None` (the token lives in memory) |
//! | [`AuthAdapter::get_headers`] | none | `Authorization: Bearer <token>` when a token is present |
//! | [`AuthAdapter::refresh`] | `None` (the server manages the session) | `POST /api/refresh` with the current token (if any) and the same-origin cookies; the answer's `{ token, expiresAt }` |
//! | [`AuthAdapter::fetch_user`] | `GET /api/me` with credentials | `GET /api/me` with the Bearer header |
//!
//! `custom` auth is any other implementation of [`AuthAdapter`]; every member but
//! [`AuthAdapter::auth_type`] has the default of the table's column for the type it reports (cookie for
//! `custom`'s credentials and user route, bearer for its headers and refresh).
//!
//! The default adapters' own requests carry `X-SW-Strategy: network-only`, so that no Service Worker
//! ever stores an auth answer, even one whose config does not list the auth routes.
//!
//! Refresh outcomes: `Ok(Some(auth))` is fresh auth; `Ok(None)` means the session is over (the client
//! then purges everything and signals `logout`); `Err` means the refresh could not be carried out
//! (offline, server error): the failed request is rejected and the user stays logged in.
//!
//! `refresh` is also how a session is restored on start (`cachet_core::machines::auth`, "Restoring a
//! session on start"): a page whose persisted record says someone was signed in, with no token in
//! memory and no other tab to lend one, calls it with the record's auth (user and expiry, no token).
//! [`bearer_refresh`] then sends the cookies alone; an app's own `refresh` may use whatever it keeps.

use cachet_core::config::AuthType;
use cachet_core::strategy::STRATEGY_HEADER;
use futures::future::LocalBoxFuture;

use crate::http::{Credentials, Http, HttpRequest};
use crate::{AuthData, Error};

/// The default refresh route.
pub const DEFAULT_REFRESH_PATH: &str = "/api/refresh";
/// The default user route.
pub const DEFAULT_ME_PATH: &str = "/api/me";

/// What the client needs from the app's auth. Implement it for `custom` auth; [`CookieAdapter`] and
/// [`BearerAdapter`] are the SPEC's defaults.
pub trait AuthAdapter {
    /// `cookie`, `bearer` or `custom`: decides `AUTH_WITH_CREDENTIALS` and whether an auth failure
    /// triggers a refresh (bearer and custom).
    fn auth_type(&self) -> AuthType;

    /// The current auth from an identity provider, first lookup of `get_auth()`.
    fn get_auth(&self) -> LocalBoxFuture<'_, Result<Option<AuthData>, Error>> {
        Box::pin(async { Ok(None) })
    }

    /// Headers for requests made with `auth: true`: none for cookie auth, the bearer header otherwise.
    fn get_headers(&self, auth: Option<&AuthData>) -> Vec<(String, String)> {
        match self.auth_type() {
            AuthType::Cookie => Vec::new(),
            AuthType::Bearer | AuthType::Custom => bearer_headers(auth),
        }
    }

    /// Renews the session after an auth failure (or when it is about to expire).
    fn refresh<'a>(
        &'a self,
        http: &'a Http,
        auth: &'a AuthData,
    ) -> LocalBoxFuture<'a, Result<Option<AuthData>, Error>> {
        let auth_type = self.auth_type();
        Box::pin(async move {
            match auth_type {
                AuthType::Cookie => Ok(None),
                AuthType::Bearer | AuthType::Custom => bearer_refresh(http, DEFAULT_REFRESH_PATH, auth).await,
            }
        })
    }

    /// Asks the server who is logged in: the last resort of `get_auth()`. `auth` is the current auth, if
    /// any (bearer needs its token).
    fn fetch_user<'a>(
        &'a self,
        http: &'a Http,
        auth: Option<&'a AuthData>,
    ) -> LocalBoxFuture<'a, Result<Option<AuthData>, Error>> {
        let auth_type = self.auth_type();
        Box::pin(async move { fetch_user(http, DEFAULT_ME_PATH, auth_type, auth).await })
    }
}

/// Cookie auth: an httpOnly session cookie the browser sends by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookieAdapter {
    /// The user route (default `/api/me`).
    pub me_path: String,
}

/// Bearer auth: `Authorization: Bearer <token>`, the token in page memory only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BearerAdapter {
    /// The refresh route (default `/api/refresh`).
    pub refresh_path: String,
    /// The user route (default `/api/me`).
    pub me_path: String,
}

impl Default for CookieAdapter {
    fn default() -> Self {
        CookieAdapter { me_path: DEFAULT_ME_PATH.to_owned() }
    }
}

impl Default for BearerAdapter {
    fn default() -> Self {
        BearerAdapter { refresh_path: DEFAULT_REFRESH_PATH.to_owned(), me_path: DEFAULT_ME_PATH.to_owned() }
    }
}

impl AuthAdapter for CookieAdapter {
    fn auth_type(&self) -> AuthType {
        AuthType::Cookie
    }

    fn fetch_user<'a>(
        &'a self,
        http: &'a Http,
        auth: Option<&'a AuthData>,
    ) -> LocalBoxFuture<'a, Result<Option<AuthData>, Error>> {
        Box::pin(fetch_user(http, &self.me_path, AuthType::Cookie, auth))
    }
}

impl AuthAdapter for BearerAdapter {
    fn auth_type(&self) -> AuthType {
        AuthType::Bearer
    }

    fn refresh<'a>(
        &'a self,
        http: &'a Http,
        auth: &'a AuthData,
    ) -> LocalBoxFuture<'a, Result<Option<AuthData>, Error>> {
        Box::pin(bearer_refresh(http, &self.refresh_path, auth))
    }

    fn fetch_user<'a>(
        &'a self,
        http: &'a Http,
        auth: Option<&'a AuthData>,
    ) -> LocalBoxFuture<'a, Result<Option<AuthData>, Error>> {
        Box::pin(fetch_user(http, &self.me_path, AuthType::Bearer, auth))
    }
}

/// The adapter of the SPEC's table for `auth_type`; `None` for `custom`, which the app must supply.
pub fn default_adapter(auth_type: AuthType) -> Option<Box<dyn AuthAdapter>> {
    match auth_type {
        AuthType::Cookie => Some(Box::new(CookieAdapter::default())),
        AuthType::Bearer => Some(Box::new(BearerAdapter::default())),
        AuthType::Custom => None,
    }
}

/// `Authorization: Bearer <token>` when `auth` holds a token, else nothing.
pub fn bearer_headers(auth: Option<&AuthData>) -> Vec<(String, String)> {
    auth.and_then(AuthData::authorization)
        .map(|value| vec![("Authorization".to_owned(), value)])
        .unwrap_or_default()
}

/// `POST path`, the refresh contract of the bearer adapter (docs/auth.md, "The refresh contract"):
///
/// - the request carries `Authorization: Bearer <old token>` when this page holds one, and the browser's
///   same-origin cookies (never `omit`): a server may keep its refresh token in an httpOnly cookie. With
///   no token in memory (a lone tab after a reload) the cookie alone is sent: that is how a session is
///   restored on start;
/// - a 2xx answer `{token, expiresAt, user?}` is the new auth (the old user kept when the answer has none);
/// - a 4xx (but 408 and 429) means the session is over (`None`): the server understood and said no;
/// - any other answer (a 5xx, 408, 429) is an [`Error::Http`]: the refresh could not be carried out and
///   the session goes on, as when the network is down. A server outage never signs anyone out.
pub async fn bearer_refresh(http: &Http, path: &str, auth: &AuthData) -> Result<Option<AuthData>, Error> {
    let mut request =
        HttpRequest { method: "POST".to_owned(), url: path.to_owned(), ..HttpRequest::default() };
    if let Some(authorization) = auth.authorization() {
        request.set_header("Authorization", &authorization);
    }
    request.set_header(STRATEGY_HEADER, "network-only");
    let response = http.send(&request).await?;
    if !response.ok() {
        return match response.status {
            408 | 429 => Err(refresh_failed(path, &response)),
            400..=499 => Ok(None),
            _ => Err(refresh_failed(path, &response)),
        };
    }
    let value = response.json_value()?;
    let read = value.as_object().ok_or_else(|| "expected an object".to_owned()).and_then(AuthData::read);
    let mut fresh =
        read.map_err(|message| Error::Decode { what: format!("the answer of {path}"), message })?;
    if fresh.token.is_none() {
        return Err(Error::Decode {
            what: format!("the answer of {path}"),
            message: "no `token`".to_owned(),
        });
    }
    if fresh.user.is_none() {
        fresh.user = auth.user.clone();
    }
    Ok(Some(fresh))
}

/// A refresh answer that neither renews nor ends the session.
fn refresh_failed(path: &str, response: &crate::http::HttpResponse) -> Error {
    Error::Http {
        url: path.to_owned(),
        status: response.status,
        body: crate::error::truncate(&response.text(), 2048),
    }
}

/// `GET path`: cookie with credentials, bearer with the token. A 2xx answer is read with
/// [`AuthData::from_json`] (an AuthData-shaped object, or the user itself); bearer keeps its token.
/// Any other status means nobody is logged in (`None`).
pub async fn fetch_user(
    http: &Http,
    path: &str,
    auth_type: AuthType,
    auth: Option<&AuthData>,
) -> Result<Option<AuthData>, Error> {
    let mut request = HttpRequest::get(path);
    request.set_header(STRATEGY_HEADER, "network-only");
    let token = auth.and_then(|auth| auth.token.clone());
    match auth_type {
        AuthType::Bearer => {
            let Some(authorization) = auth.and_then(AuthData::authorization) else {
                return Ok(None);
            };
            request.set_header("Authorization", &authorization);
        }
        AuthType::Cookie | AuthType::Custom => request.credentials = Credentials::Include,
    }
    let response = http.send(&request).await?;
    if !response.ok() {
        return Ok(None);
    }
    let value = response.json_value()?;
    Ok(AuthData::from_json(value).map(|mut found| {
        if found.token.is_none() {
            found.token = token;
        }
        found
    }))
}
