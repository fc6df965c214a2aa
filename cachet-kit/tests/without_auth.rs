//! An app whose config has auth off and whose `cachet-kit` leaves out the `auth` feature, as `cachet init`
//! writes it (`cargo xtask test` runs this crate's tests on their own, so that no other crate's tests turn
//! the feature on): a config with auth on, or a request with `auth: true`, is refused by name.
//!
//! Built with `auth` (`cargo test --workspace` unifies the features of every crate, and the example app
//! asks for `auth`), the story cannot be told: the file then holds one test that fails saying so, never
//! zero tests that pass.
#![allow(clippy::unwrap_used)]

#[cfg(not(feature = "auth"))]
use cachet_kit::client::{Client, Error, FetchOptions, GqlOptions};
#[cfg(not(feature = "auth"))]
use cachet_kit::core::config::Config;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[cfg(feature = "auth")]
#[wasm_bindgen_test]
fn this_story_needs_a_build_without_auth() {
    panic!(
        "cachet-kit was built with its `auth` feature (another crate of this build asks for it): run \
         `cargo test --target wasm32-unknown-unknown -p cachet-kit` alone to test an app without auth"
    );
}

#[cfg(not(feature = "auth"))]
fn names_the_feature(error: &Error) -> bool {
    // The cargo feature and the config key, each named as what it is.
    let text = error.to_string();
    matches!(error, Error::NotBuilt { feature: "auth", .. })
        && text.contains("cargo feature `auth`")
        && text.contains("config key features.auth.enabled")
}

#[cfg(not(feature = "auth"))]
#[wasm_bindgen_test]
async fn a_config_or_a_request_with_auth_is_refused_naming_the_cargo_feature() {
    let with_auth = r#"{"features": {"auth": {"enabled": true, "type": "bearer"}}}"#;
    let refused = Client::builder().config(Config::from_json_str(with_auth).unwrap()).build();
    let Err(error) = refused else { panic!("a config with auth on needs the auth feature") };
    assert!(names_the_feature(&error), "{error}");
    assert_eq!(error.kind(), "not-built");

    let without_auth = r#"{"features": {"graphql": {"enabled": true}}}"#;
    let client = Client::builder().config(Config::from_json_str(without_auth).unwrap()).build().unwrap();
    let state = client.get_auth_state().await;
    assert!(!state.authenticated && state.auth.is_none(), "{state:?}");
    let fetched =
        client.fetch_with_cache("/nothing-is-sent", FetchOptions { auth: true, ..FetchOptions::new() });
    let Err(error) = fetched.await else { panic!("an auth request needs the auth feature") };
    assert!(names_the_feature(&error), "{error}");
    let queried =
        client.query_gql::<serde_json::Value>("query Me { me { id } }", None, GqlOptions::with_auth(true));
    let Err(error) = queried.await else { panic!("an auth query needs the auth feature") };
    assert!(names_the_feature(&error), "{error}");
}
