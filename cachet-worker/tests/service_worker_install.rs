//! `sw::install_with`: the failure check an app gives its worker is the one the worker runs. In its own
//! binary (its own worker and globals): installing changes the worker's check and engine for whatever
//! runs after it, so no other test may see it.
#![allow(clippy::unwrap_used)]

// The allocator cachet's worker binaries run on (`cachet generate` writes it): the tests run on it too.
#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use wasm_bindgen_test::*;
use web_sys::{Response, ResponseInit};

wasm_bindgen_test_configure!(run_in_service_worker);

/// An app's own failure check (its `src/cachet/auth/check.rs`): the rule, or a 403 whose body says the
/// session expired.
fn app_check(
    rule: &cachet_core::config::AuthFailureRule,
    response: &cachet_core::config::FailureResponse<'_>,
) -> bool {
    rule.check(response)
        || (response.status == 403 && response.json().is_some_and(|body| body["reason"] == "expired"))
}

#[wasm_bindgen_test]
fn the_failure_check_given_to_install_with_is_the_one_the_sw_runs() {
    use cachet_worker::sw::is_auth_failure;
    let rule = cachet_core::config::AuthFailureRule::default();
    let answer = |status: u16| {
        let init = ResponseInit::new();
        init.set_status(status);
        Response::new_with_opt_str_and_init(None, &init).unwrap()
    };
    let expired: &[u8] = br#"{"reason":"expired"}"#;
    assert!(!is_auth_failure(&rule, &answer(403), expired), "before install_with: the rule alone");
    assert!(is_auth_failure(&rule, &answer(401), b""));
    cachet_worker::sw::install_with(app_check);
    assert!(is_auth_failure(&rule, &answer(403), expired), "the app's check");
    assert!(is_auth_failure(&rule, &answer(401), b""), "which keeps the rule");
    assert!(!is_auth_failure(&rule, &answer(403), br#"{"reason":"forbidden"}"#));
}

/// A plugin of the app's that says nothing about answers: it may change them (the default).
struct Shaper;
impl cachet_core::engine::Plugin<Response> for Shaper {}

/// What the engine tells the shim when it keeps the build's wasm (`handsOver()`).
fn hands_over() -> bool {
    use wasm_bindgen::JsCast;
    let engine = js_sys::Reflect::get(&js_sys::global(), &"__cachet_engine".into()).unwrap();
    let hands_over: js_sys::Function =
        js_sys::Reflect::get(&engine, &"handsOver".into()).unwrap().unchecked_into();
    hands_over.call0(&engine).unwrap().as_bool().unwrap()
}

#[wasm_bindgen_test]
fn navigations_are_handed_over_unless_a_plugin_of_the_apps_may_change_network_answers() {
    use cachet_worker::sw::Options;
    Options::new().install();
    assert!(hands_over(), "no plugin of the app's");
    // A plugin that only keeps answers out of the store changes no answer.
    Options::new().plugin(cachet_core::engine::CacheControl::strict()).install();
    assert!(hands_over(), "CacheControl::strict()");
    // One that may change them keeps every navigation to the engine (and the console says why).
    Options::new().plugin(cachet_core::engine::CacheControl::strict()).plugin(Shaper).install();
    assert!(!hands_over(), "a plugin that may change answers");
    // As the other tests of this binary expect it.
    Options::new().install();
}
