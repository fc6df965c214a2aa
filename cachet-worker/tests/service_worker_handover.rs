//! A page's hand-over (issue 19), kept by a real Service Worker in headless Chromium: what it keeps is
//! then answered from its cache by the live path; what it refuses (another origin, a token nobody
//! vouched for, an answer it cannot rebuild, an entry it holds, a message over the cap) is named and
//! changes nothing it stored.
#![allow(clippy::unwrap_used)]

// The allocator cachet's worker binaries run on (`cachet generate` writes it): the tests run on it too.
#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();

use std::rc::Rc;

use cachet_core::cache_key::auth_fingerprint;
use cachet_core::config::Config;
use cachet_core::handover::{HandedEntry, HandedRequest, HandedResponse, Refused, MAX_ENTRIES};
use cachet_worker::sw::{answer, handover, identity, SOURCE_HEADER};
use cachet_worker::Error;
use js_sys::Promise;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use web_sys::{Request, RequestInit, Response};

wasm_bindgen_test_configure!(run_in_service_worker);

fn origin() -> String {
    js_sys::Reflect::get(&js_sys::global(), &"origin".into()).unwrap().as_string().unwrap()
}

fn config() -> Config {
    Config::from_json_str(r#"{"features": {"graphql": {"enabled": true, "endpoints": ["/graphql"]}}}"#)
        .unwrap()
}

/// The page's answer to `query`, sent to `url`, stored a second ago.
fn entry(url: &str, query: &str, answer: &str) -> HandedEntry {
    HandedEntry {
        request: HandedRequest {
            method: "POST".into(),
            url: url.into(),
            headers: vec![("content-type".into(), "application/json".into())],
            body: Some(serde_json::json!({ "query": query }).to_string()),
            authorization: None,
        },
        response: HandedResponse {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: answer.into(),
        },
        stored_at: js_sys::Date::now() as u64 - 1_000,
    }
}

/// `query` asked of the worker as a page's `fetch` would: the answer's source and body.
async fn ask(query: &str) -> (String, String) {
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_body(&serde_json::json!({ "query": query }).to_string().into());
    let request = Request::new_with_str_and_init(&format!("{}/graphql", origin()), &init).unwrap();
    let background: Rc<dyn Fn(Promise)> = Rc::new(drop);
    let response: Response = answer(request, String::new(), &config(), background).await.unwrap();
    let source = response.headers().get(SOURCE_HEADER).unwrap().unwrap_or_default();
    let body = JsFuture::from(response.text().unwrap()).await.unwrap().as_string().unwrap();
    (source, body)
}

#[wasm_bindgen_test]
async fn a_handed_answer_is_kept_as_the_live_path_would_and_the_refused_change_nothing() {
    let graphql = format!("{}/graphql", origin());
    let greeting = "query Greeting { greeting }";
    let first = r#"{"data":{"greeting":"from the page"}}"#;
    let kept = handover::adopt(&[entry(&graphql, greeting, first)], &config()).await.unwrap();
    assert_eq!(kept, [Ok(())]);
    assert_eq!(ask(greeting).await, ("cache".to_owned(), first.to_owned()), "the live path hits it");

    // Held: never replaced. Another origin, an answer the browser cannot rebuild: refused.
    let mut unreadable = entry(&graphql, "query Other { other }", r#"{"data":{}}"#);
    unreadable.response.status = 99;
    let outcomes = handover::adopt(
        &[
            entry(&graphql, greeting, r#"{"data":{"greeting":"replaced"}}"#),
            entry("https://evil.test/graphql", "query Evil { evil }", r#"{"data":{}}"#),
            unreadable,
        ],
        &config(),
    )
    .await
    .unwrap();
    assert_eq!(outcomes[0], Err(Refused::Held));
    assert_eq!(outcomes[1], Err(Refused::CrossOrigin("https://evil.test/graphql".into())));
    assert!(
        matches!(&outcomes[2], Err(Refused::Unreadable(message)) if message.contains("Response")),
        "{outcomes:?}"
    );

    // A token nobody vouched for is in no partition; the signed-in user's own is kept in theirs.
    identity::set(Some("a1".into()), Some(auth_fingerprint("Bearer A"))).await.unwrap();
    let mine = "query Mine { mine }";
    let with_token = |token: &str| {
        let mut entry = entry(&graphql, mine, r#"{"data":{"mine":1}}"#);
        entry.request.authorization = Some(auth_fingerprint(token));
        entry
    };
    let outcomes =
        handover::adopt(&[with_token("Bearer B"), with_token("Bearer A")], &config()).await.unwrap();
    identity::forget().await.unwrap();
    assert_eq!(outcomes, [Err(Refused::NoPartition), Ok(())]);

    // Over the cap: the whole message is refused, typed, and what was stored stays.
    let many = vec![entry(&graphql, "query Many { many }", r#"{"data":{}}"#); MAX_ENTRIES + 1];
    match handover::adopt(&many, &config()).await {
        Err(error @ Error::HandoverTooLarge { count: 33 }) => {
            assert!(error.to_string().contains("33 entries"), "{error}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(ask(greeting).await, ("cache".to_owned(), first.to_owned()));
}
