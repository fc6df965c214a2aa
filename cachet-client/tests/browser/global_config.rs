//! `window.CACHET_CONFIG`, as `cachet-sw-config.js` sets it, read by `ClientBuilder::config_from_global`:
//! as cachet wrote it (`Config::from_written_json`), a hand edit that breaks its shape refused naming
//! the key.

use cachet_client::{Client, Config};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

/// Sets `window.CACHET_CONFIG` to the object `json` is, runs `body`, and removes it again.
fn with_global<T>(json: &str, body: impl FnOnce() -> T) -> T {
    let window = web_sys::window().unwrap();
    let value = js_sys::JSON::parse(json).unwrap();
    js_sys::Reflect::set(&window, &"CACHET_CONFIG".into(), &value).unwrap();
    let result = body();
    js_sys::Reflect::delete_property(&window, &JsValue::from_str("CACHET_CONFIG")).unwrap();
    result
}

#[wasm_bindgen_test]
fn the_generated_config_is_read_as_written() {
    let generated = Config::from_json_str(
        r#"{"features": {"auth": {"enabled": true, "type": "bearer"}, "graphql": {"enabled": true,
            "endpoints": ["/graphql", "/admin/graphql"]}}, "cache": {"maxEntries": 7}}"#,
    )
    .unwrap();
    let client = with_global(&generated.to_json_pretty(), || {
        Client::builder().config_from_global().unwrap().build().unwrap()
    });
    assert_eq!(*client.config(), generated);
    // An older cachet's file, without the keys added since: their defaults.
    let client = with_global(r#"{"features": {"graphql": {"enabled": true}}}"#, || {
        Client::builder().config_from_global().unwrap().build().unwrap()
    });
    assert_eq!(
        *client.config(),
        Config::from_json_str(r#"{"features": {"graphql": {"enabled": true}}}"#).unwrap()
    );
}

#[wasm_bindgen_test]
fn a_hand_edit_that_breaks_the_shape_is_refused_naming_the_key() {
    for (json, path) in [
        (r#"{"cache": {"maxEntires": 5}}"#, "cache.maxEntires"),
        (r#"{"strategy": {"default": "fastest"}}"#, "strategy.default"),
        (r#"{"features": {"auth": {"enabled": "yes"}}}"#, "features.auth.enabled"),
    ] {
        let error = with_global(json, || Client::builder().config_from_global().err()).expect(json);
        let message = error.to_string();
        assert!(message.contains(path) && message.contains("cachet generate"), "{json}: {message}");
    }
}
