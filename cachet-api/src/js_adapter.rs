//! The adapter passed to `configure({ auth: { type, getAuth, getHeaders, refresh, fetchUser } })`:
//! JavaScript functions behind [`AuthAdapter`]. A function left out falls back to the SPEC's default for
//! `type` (`custom` takes the bearer defaults for headers and refresh, the cookie default for the user).
//!
//! | Member | Called as | May return |
//! |---|---|---|
//! | `getAuth` | `getAuth()` | AuthData, `null`, or a promise of either |
//! | `getHeaders` | `getHeaders(auth)` | an object of header names to values |
//! | `refresh` | `refresh(auth)` | a promise of AuthData or `null` (the session is over) |
//! | `fetchUser` | `fetchUser(auth)` | a promise of AuthData (or the user) or `null` |
//!
//! A function that throws or rejects is an error of the call that needed it (for `refresh`: the requests
//! waiting for it fail and the user stays logged in).

use cachet_client::{AuthAdapter, AuthData, AuthType, BearerAdapter, CookieAdapter, Error, Http};
use futures::future::LocalBoxFuture;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::convert::{auth_to_js, from_js_error, text_of, to_json};

/// JavaScript functions as an [`AuthAdapter`].
pub struct JsAdapter {
    kind: AuthType,
    get_auth: Option<js_sys::Function>,
    get_headers: Option<js_sys::Function>,
    refresh: Option<js_sys::Function>,
    fetch_user: Option<js_sys::Function>,
    fallback: Box<dyn AuthAdapter>,
}

/// `custom` auth without functions: the trait's defaults.
struct CustomDefaults;

impl AuthAdapter for CustomDefaults {
    fn auth_type(&self) -> AuthType {
        AuthType::Custom
    }
}

impl JsAdapter {
    /// Reads `{ type, getAuth, getHeaders, refresh, fetchUser }`.
    pub fn from_js(auth: &JsValue) -> Result<JsAdapter, Error> {
        let member =
            |name: &str| js_sys::Reflect::get(auth, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED);
        let function = |name: &'static str| -> Result<Option<js_sys::Function>, Error> {
            let value = member(name);
            if value.is_undefined() || value.is_null() {
                return Ok(None);
            }
            value.dyn_into().map(Some).map_err(|value: JsValue| Error::InvalidArgument {
                what: format!("configure: auth.{name}"),
                expected: "a function",
                got: value.js_typeof().as_string().unwrap_or_default(),
            })
        };
        let kind_name = member("type").as_string().unwrap_or_else(|| "cookie".to_owned());
        let kind: AuthType = kind_name.parse().map_err(|()| Error::InvalidArgument {
            what: "configure: auth.type".to_owned(),
            expected: "cookie, bearer or custom",
            got: cachet_core::json::quoted(&kind_name),
        })?;
        let fallback: Box<dyn AuthAdapter> = match kind {
            AuthType::Cookie => Box::new(CookieAdapter::default()),
            AuthType::Bearer => Box::new(BearerAdapter::default()),
            AuthType::Custom => Box::new(CustomDefaults),
        };
        Ok(JsAdapter {
            kind,
            get_auth: function("getAuth")?,
            get_headers: function("getHeaders")?,
            refresh: function("refresh")?,
            fetch_user: function("fetchUser")?,
            fallback,
        })
    }
}

/// Calls `function(argument)` and awaits the result when it is a promise.
async fn call(name: &'static str, function: &js_sys::Function, argument: &JsValue) -> Result<Value, Error> {
    let returned = function.call1(&JsValue::NULL, argument).map_err(|error| from_js_error(name, error))?;
    let settled = match returned.dyn_into::<js_sys::Promise>() {
        Ok(promise) => JsFuture::from(promise).await.map_err(|error| from_js_error(name, error))?,
        Err(value) => value,
    };
    Ok(to_json(&settled))
}

fn auth_argument(auth: Option<&AuthData>) -> JsValue {
    auth_to_js(auth)
}

impl AuthAdapter for JsAdapter {
    fn auth_type(&self) -> AuthType {
        self.kind
    }

    fn get_auth(&self) -> LocalBoxFuture<'_, Result<Option<AuthData>, Error>> {
        match &self.get_auth {
            Some(function) => Box::pin(async move {
                Ok(AuthData::from_json(call("auth.getAuth", function, &JsValue::NULL).await?))
            }),
            None => self.fallback.get_auth(),
        }
    }

    fn get_headers(&self, auth: Option<&AuthData>) -> Vec<(String, String)> {
        let Some(function) = &self.get_headers else {
            return self.fallback.get_headers(auth);
        };
        match function.call1(&JsValue::NULL, &auth_argument(auth)) {
            Ok(headers) => match to_json(&headers) {
                Value::Object(headers) => headers
                    .into_iter()
                    .filter_map(|(name, value)| match value {
                        Value::String(value) => Some((name, value)),
                        Value::Null => None,
                        other => Some((name, text_of(&other))),
                    })
                    .collect(),
                _ => Vec::new(),
            },
            Err(error) => {
                web_sys::console::error_1(&from_js_error("auth.getHeaders", error).to_string().into());
                Vec::new()
            }
        }
    }

    fn refresh<'a>(
        &'a self,
        http: &'a Http,
        auth: &'a AuthData,
    ) -> LocalBoxFuture<'a, Result<Option<AuthData>, Error>> {
        match &self.refresh {
            Some(function) => Box::pin(async move {
                Ok(AuthData::from_json(call("auth.refresh", function, &auth_argument(Some(auth))).await?))
            }),
            None => self.fallback.refresh(http, auth),
        }
    }

    fn fetch_user<'a>(
        &'a self,
        http: &'a Http,
        auth: Option<&'a AuthData>,
    ) -> LocalBoxFuture<'a, Result<Option<AuthData>, Error>> {
        match &self.fetch_user {
            Some(function) => Box::pin(async move {
                Ok(AuthData::from_json(call("auth.fetchUser", function, &auth_argument(auth)).await?))
            }),
            None => self.fallback.fetch_user(http, auth),
        }
    }
}
