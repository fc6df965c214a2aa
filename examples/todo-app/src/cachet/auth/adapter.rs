// Created by `cachet add auth`, and yours from now on: cachet never overwrites this file.
//! The app's auth adapter (SPEC §2): how the page client gets, sends, refreshes and fetches the
//! auth. It starts as cachet's default for `features.auth.type` = `cookie`; edit [`adapter()`] to
//! change it (routes, headers, refresh, where the user comes from).

/// The auth of the current user: `token`, `user` (the backend's user object, as JSON) and
/// `expires_at`. Read the user as your own type with `cachet_kit::serde_json::from_value`.
pub type AuthData = cachet_kit::client::AuthData;

/// The adapter the page client uses: an httpOnly session cookie the browser sends by itself, and the
/// user from `GET /api/me` (change `me_path` for another route). For anything else, implement
/// `cachet_kit::client::AuthAdapter` on a type of your own and return it here.
pub fn adapter() -> impl cachet_kit::client::AuthAdapter + 'static {
    cachet_kit::client::CookieAdapter::default()
}
