//! The first visit's hand-over (issue 19): what the worker admits of a page's entries (the live path's
//! decisions, refusals typed), the wire form of the message, and the storing step over the engine's
//! fakes (an entry held fresh is never replaced; the planner and the plugins decide as for a network
//! answer).

use std::rc::Rc;

use cachet_core::cache_key::auth_fingerprint;
use cachet_core::config::Config;
use cachet_core::engine::plan::{NotStored, Storing};
use cachet_core::engine::{adopt, EntryKey, Fetched, Message, Runner};
use cachet_core::handover::{
    admit, check_count, HandedEntry, HandedRequest, HandedResponse, Place, Refused, MAX_ENTRIES,
};
use cachet_core::partition::{Identity, AUTH_HEADER};
use cachet_core::protocol::{decode_message, encode_message, PageToSw, ProtocolError};

use crate::engine_table::{get_job, Fake, Resp, NOW};

const ORIGIN: &str = "https://app.test";

fn config() -> Config {
    Config::from_json_str(
        r#"{"features": {"auth": {"enabled": true}, "graphql": {"enabled": true, "endpoints": ["/graphql"]}},
            "cache": {"maxBodyBytes": 1000, "maxAgeSeconds": 60}}"#,
    )
    .unwrap()
}

fn get(url: &str) -> HandedEntry {
    HandedEntry {
        request: HandedRequest {
            method: "GET".into(),
            url: url.into(),
            headers: vec![("x-sw-strategy".into(), "cache-first".into())],
            body: None,
            authorization: None,
        },
        response: HandedResponse { status: 200, headers: Vec::new(), body: "{\"notes\":[]}".into() },
        stored_at: NOW - 1_000,
    }
}

fn query(text: &str) -> HandedEntry {
    let mut entry = get(&format!("{ORIGIN}/graphql"));
    entry.request.method = "POST".into();
    entry.request.headers.clear();
    entry.request.body = Some(serde_json::json!({ "query": text }).to_string());
    entry.response.body = "{\"data\":{\"greeting\":\"hi\"}}".into();
    entry
}

/// `entry` as the worker at [`ORIGIN`] admits it with `identity`: the entry's cache URL, or the refusal.
fn admitted(entry: &HandedEntry, identity: Option<&Identity>) -> Result<String, Refused> {
    let (origin, rest) = match entry.request.url.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.split('/').next().unwrap_or_default();
            (format!("{scheme}://{host}"), rest[host.len()..].to_owned())
        }
        None => (String::new(), String::new()),
    };
    let path = rest.split('?').next().unwrap_or_default().to_owned();
    let place = Place { worker_origin: ORIGIN, origin: &origin, path: &path };
    admit(entry, place, identity, &config(), NOW)
        .map(|job| job.entry.map(|entry| entry.url).unwrap_or_default())
}

#[test]
fn the_worker_admits_only_what_its_live_path_would_store_in_the_partition_it_derives() {
    let alice = Identity { partition: "a1".into(), credentials: vec![auth_fingerprint("Bearer A")] };
    let notes = format!("{ORIGIN}/api/notes");
    let user_notes = format!("{ORIGIN}/__cachet/get/a1/https%3A%2F%2Fapp.test%2Fapi%2Fnotes");
    let with = |change: &dyn Fn(&mut HandedEntry)| {
        let mut entry = get(&notes);
        change(&mut entry);
        entry
    };
    // Admitted: a shared GET, a GraphQL query, a vouched token in the user's partition, a cookie user.
    assert_eq!(admitted(&get(&notes), None), Ok(notes.clone()));
    let document = admitted(&query("query Greeting { greeting }"), None).unwrap();
    assert!(document.starts_with(&format!("{ORIGIN}/__cachet/gql/anonymous/")), "{document}");
    // The same query sent as a GET (GraphQL over HTTP) is the same entry, as on the live path.
    let as_get = get(&format!("{ORIGIN}/graphql?query=query%20Greeting%20%7B%20greeting%20%7D"));
    assert_eq!(admitted(&as_get, None), Ok(document.clone()));
    let vouched = with(&|entry| entry.request.authorization = Some(auth_fingerprint("Bearer A")));
    assert_eq!(admitted(&vouched, Some(&alice)), Ok(user_notes.clone()));
    let cookie = with(&|entry| entry.request.headers.push((AUTH_HEADER.into(), "1".into())));
    assert_eq!(admitted(&cookie, Some(&alice)), Ok(user_notes.clone()));

    let refusals: Vec<(&str, HandedEntry, Option<&Identity>, Refused)> = vec![
        ("PUT", with(&|entry| entry.request.method = "PUT".into()), None, Refused::Method("PUT".into())),
        (
            "another origin",
            get("https://evil.test/api/notes"),
            None,
            Refused::CrossOrigin("https://evil.test/api/notes".into()),
        ),
        (
            "a pass-through path",
            get(&format!("{ORIGIN}/api/login")),
            None,
            Refused::NotRouted(format!("{ORIGIN}/api/login")),
        ),
        (
            "a POST elsewhere than an endpoint",
            with(&|entry| entry.request.method = "POST".into()),
            None,
            Refused::NotRouted(notes.clone()),
        ),
        (
            "a token in the headers",
            with(&|entry| entry.request.headers.push(("Authorization".into(), "Bearer A".into()))),
            Some(&alice),
            Refused::Credentials("an Authorization header: hand over its fingerprint only"),
        ),
        (
            "a fingerprint that is none",
            with(&|entry| entry.request.authorization = Some("../../x".into())),
            Some(&alice),
            Refused::Credentials("the fingerprint is not 16 hex digits"),
        ),
        (
            "a token nobody vouched for",
            with(&|entry| entry.request.authorization = Some(auth_fingerprint("Bearer B"))),
            Some(&alice),
            Refused::NoPartition,
        ),
        (
            "a token with nobody signed in",
            with(&|entry| entry.request.authorization = Some(auth_fingerprint("Bearer A"))),
            None,
            Refused::NoPartition,
        ),
        ("marked, nobody signed in", cookie.clone(), None, Refused::NoPartition),
        ("a mutation", query("mutation AddNote { addNote { id } }"), None, Refused::NoJob),
        (
            "an unknown strategy",
            with(&|entry| entry.request.headers[0].1 = "sometimes".into()),
            None,
            Refused::Unclassified("unknown strategy \"sometimes\"".into()),
        ),
        (
            "network-only",
            with(&|entry| entry.request.headers[0].1 = "network-only".into()),
            None,
            Refused::NotStored(NotStored::Strategy),
        ),
        (
            "stored before maxAgeSeconds",
            with(&|entry| entry.stored_at = NOW - 60_001),
            None,
            Refused::Expired,
        ),
        (
            "an answer over maxBodyBytes",
            with(&|entry| entry.response.body = "x".repeat(1_001)),
            None,
            Refused::TooLarge { what: "response", size: 1_001, max: 1_000 },
        ),
    ];
    for (case, entry, identity, refused) in refusals {
        match admitted(&entry, identity) {
            Err(Refused::Unclassified(message)) if matches!(&refused, Refused::Unclassified(_)) => {
                assert!(message.contains("sometimes"), "{case}: {message}")
            }
            other => assert_eq!(other, Err(refused), "{case}"),
        }
    }
    // A URL nobody could parse has no origin: never the worker's, even one that could not read its own.
    let nowhere = Place { worker_origin: "", origin: "", path: "/api/notes" };
    let unparsed = get("not a URL");
    assert_eq!(
        admit(&unparsed, nowhere, None, &config(), NOW),
        Err(Refused::CrossOrigin("not a URL".into()))
    );
    let too_many = vec![get(&notes); MAX_ENTRIES + 1];
    assert_eq!(check_count(&too_many), Err(Refused::TooMany { count: MAX_ENTRIES + 1 }));
    assert_eq!(check_count(&too_many[..MAX_ENTRIES]), Ok(()));
}

#[test]
fn a_hand_over_travels_as_versioned_json_and_a_malformed_one_is_a_typed_error() {
    let message = PageToSw::HandOver { request_id: 7, entries: vec![get(&format!("{ORIGIN}/api/notes"))] };
    let wire = encode_message(&message);
    assert!(
        wire.starts_with(r#"{"v":1,"type":"hand-over","requestId":7,"entries":[{"request":{"method":"GET""#),
        "{wire}"
    );
    assert!(!wire.contains("authorization"), "no credential field when none was sent: {wire}");
    assert_eq!(decode_message::<PageToSw>(&wire), Ok(message));
    for malformed in [
        r#"{"v":1,"type":"hand-over","requestId":7}"#,
        r#"{"v":1,"type":"hand-over","requestId":7,"entries":[{"request":{"method":"GET"}}]}"#,
        r#"{"v":1,"type":"hand-over","requestId":7,"entries":[{"request":{"method":"GET","url":"/"},"response":{"status":"ok","body":""},"storedAt":1}]}"#,
    ] {
        assert!(
            matches!(decode_message::<PageToSw>(malformed), Err(ProtocolError::Malformed(_))),
            "{malformed}"
        );
    }
}

fn fetched(body: &str, status: u16, headers: Vec<(String, String)>, auth_failure: bool) -> Fetched<Resp> {
    let response = Resp { body: body.into(), headers, status: 200 };
    let cache_control = response.header("cache-control");
    Fetched {
        response,
        status,
        body: body.as_bytes().to_vec(),
        auth_failure,
        server_tags: Some("server".into()),
        cache_control,
    }
}

/// Adopts `fetched`, stored by the page at `stored_at`, into `fake`.
fn adopt_into(fake: &Rc<Fake>, fetched: &Fetched<Resp>, stored_at: u64) -> Option<Storing> {
    let job = get_job(cachet_core::strategy::Strategy::CacheFirst);
    let url = job.announce_url.clone();
    let runner = Runner {
        store: fake.clone(),
        network: (),
        host: fake.clone(),
        plugins: Vec::new(),
        method: "GET",
        url,
    };
    futures::executor::block_on(adopt(job, fetched, stored_at, &runner)).unwrap()
}

#[test]
fn an_adopted_answer_is_stored_as_a_network_answer_and_never_over_a_fresh_entry() {
    let key = get_job(cachet_core::strategy::Strategy::CacheFirst).entry.unwrap();
    let held = |fake: &Fake| {
        fake.entries.borrow().get(&key.url).map(|(resp, at, tags)| (resp.body.clone(), *at, tags.clone()))
    };

    // Absent: stored with the page's time and the request's and the server's tags.
    let fake = Rc::new(Fake::default());
    let stored = adopt_into(&fake, &fetched("page", 200, Vec::new(), false), NOW - 5_000);
    assert!(matches!(stored, Some(Storing::Store { .. })), "{stored:?}");
    assert_eq!(held(&fake), Some(("page".into(), Some(NOW - 5_000), vec!["notes".into(), "server".into()])));
    // A time from the future is the worker's now.
    let fake = Rc::new(Fake::default());
    adopt_into(&fake, &fetched("page", 200, Vec::new(), false), NOW + 5_000);
    assert_eq!(held(&fake).and_then(|(_, at, _)| at), Some(NOW));

    // Held fresh: kept; held expired: replaced.
    for (at, kept) in [(NOW - 1_000, true), (NOW - 60_001, false)] {
        let fake = Rc::new(Fake::default());
        fake.entries.borrow_mut().insert(key.url.clone(), (Resp::new("worker's"), Some(at), Vec::new()));
        let outcome = adopt_into(&fake, &fetched("page", 200, Vec::new(), false), NOW - 500);
        assert_eq!(outcome.is_none(), kept, "{at}");
        let body = held(&fake).unwrap().0;
        assert_eq!(body, if kept { "worker's" } else { "page" });
    }

    // The planner's and the plugins' refusals, as for a network answer: nothing stored.
    let no_store = vec![("cache-control".into(), "no-store".into())];
    let refusals = [
        (fetched("page", 500, Vec::new(), false), NotStored::Status(500)),
        (fetched("page", 200, Vec::new(), true), NotStored::AuthFailure),
        (fetched("page", 200, no_store, false), NotStored::ServerNoStore),
    ];
    for (answer, reason) in refusals {
        let fake = Rc::new(Fake::default());
        assert_eq!(adopt_into(&fake, &answer, NOW - 500), Some(Storing::Skip(reason.clone())), "{reason:?}");
        assert_eq!(held(&fake), None);
    }
    let _ = EntryKey { cache: key.cache, url: key.url.clone() };
}
