//! Query status × fetch status, last data kept.

use cachet_core::machines::query::{FetchStatus, QueryEffect, QueryEvent, QueryState, QueryStatus};

type State = QueryState<&'static str, &'static str>;
type Event = QueryEvent<&'static str, &'static str>;

fn run(state: State, events: Vec<Event>) -> (State, Vec<QueryEffect>) {
    let mut all = Vec::new();
    let mut state = state;
    for event in events {
        let (next, effects) = state.reduce(event);
        state = next;
        all.extend(effects);
    }
    (state, all)
}

fn resolved(seq: u64, data: &'static str) -> Event {
    QueryEvent::Resolved { seq, data, from_cache: false, stale: false, now: 10 }
}

#[test]
fn fetch_succeed_refetch_fail_keeps_the_last_data() {
    let (state, effects) = State::new(true).reduce(QueryEvent::Fetch);
    assert_eq!((state.status, state.fetch_status), (QueryStatus::Pending, FetchStatus::Fetching));
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 1, fresh: false }]);
    let (state, effects) = state.reduce(QueryEvent::Fetch);
    assert_eq!(effects, [], "a running fetch is not duplicated");
    let (state, _) =
        state.reduce(QueryEvent::Resolved { seq: 1, data: "v1", from_cache: true, stale: false, now: 5 });
    assert_eq!(
        (state.status, state.fetch_status, state.data, state.from_cache),
        (QueryStatus::Success, FetchStatus::Idle, Some("v1"), true)
    );
    assert_eq!(state.data_updated_at, Some(5));
    let (state, effects) = state.reduce(QueryEvent::Fetch);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 2, fresh: false }]);
    assert_eq!(
        (state.status, state.fetch_status, state.data),
        (QueryStatus::Success, FetchStatus::Fetching, Some("v1"))
    );
    let (state, _) = state.reduce(QueryEvent::Failed { seq: 2, error: "500" });
    assert_eq!(
        (state.status, state.fetch_status, state.data, state.error),
        (QueryStatus::Error, FetchStatus::Idle, Some("v1"), Some("500"))
    );
    let (state, effects) = run(state, vec![QueryEvent::Fetch, resolved(3, "v2")]);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 3, fresh: false }]);
    assert_eq!((state.status, state.data, state.error), (QueryStatus::Success, Some("v2"), None));
}

#[test]
fn offline_pauses_and_reconnecting_fetches() {
    let (state, effects) = State::new(false).reduce(QueryEvent::Fetch);
    assert_eq!((state.fetch_status, effects.len()), (FetchStatus::Paused, 0));
    let (state, effects) = state.reduce(QueryEvent::Online);
    assert_eq!(
        (state.fetch_status, effects),
        (FetchStatus::Fetching, vec![QueryEffect::StartFetch { seq: 1, fresh: false }])
    );
    // Going offline mid-fetch: the fetch may still be answered from the SW cache.
    let (state, _) = state.reduce(QueryEvent::Offline);
    assert_eq!(state.fetch_status, FetchStatus::Fetching);
    // A failure while offline pauses instead of erroring.
    let (state, _) = state.reduce(QueryEvent::Failed { seq: 1, error: "network" });
    assert_eq!(
        (state.status, state.fetch_status, state.error),
        (QueryStatus::Pending, FetchStatus::Paused, None)
    );
    let (state, effects) = run(state, vec![QueryEvent::Online, resolved(2, "v")]);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 2, fresh: false }]);
    assert_eq!((state.status, state.fetch_status), (QueryStatus::Success, FetchStatus::Idle));
}

#[test]
fn invalidation_supersedes_a_running_fetch() {
    let (state, _) = run(State::new(true), vec![QueryEvent::Fetch, resolved(1, "v1"), QueryEvent::Fetch]);
    let (state, effects) = state.reduce(QueryEvent::Invalidated);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 3, fresh: false }]);
    // The answer of the superseded fetch (seq 2) predates the mutation: ignored.
    let (state, _) = state.reduce(resolved(2, "stale"));
    assert_eq!((state.data, state.fetch_status), (Some("v1"), FetchStatus::Fetching));
    let (state, _) = state.reduce(QueryEvent::Failed { seq: 2, error: "late" });
    assert_eq!(state.status, QueryStatus::Success);
    let (state, _) = state.reduce(resolved(3, "fresh"));
    assert_eq!(state.data, Some("fresh"));
    // Invalidated while offline: paused, refetched on reconnect.
    let (state, _) = run(state, vec![QueryEvent::Offline, QueryEvent::Invalidated]);
    assert_eq!(state.fetch_status, FetchStatus::Paused);
    let (_, effects) = state.reduce(QueryEvent::Online);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 4, fresh: false }]);
}

#[test]
fn a_disabled_query_fetches_nothing_until_enabled_then_what_was_wanted() {
    let disabled = State::new(true).reduce(QueryEvent::Enabled(false)).0;
    let (state, effects) = run(disabled, vec![QueryEvent::Fetch, QueryEvent::Invalidated, QueryEvent::Tick]);
    assert_eq!(effects, [], "a dependent query waits for its value");
    assert_eq!(
        (state.status, state.fetch_status, state.wanted),
        (QueryStatus::Pending, FetchStatus::Idle, true)
    );
    let (state, effects) = state.reduce(QueryEvent::Enabled(true));
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 1, fresh: true }], "the tick wanted fresh data");
    let (state, effects) = run(state, vec![resolved(1, "v1"), QueryEvent::Enabled(true)]);
    assert_eq!(effects, [], "enabled again while enabled: nothing");
    // Disabled with data: nothing wanted, nothing fetched when enabled again.
    let (state, effects) = run(state, vec![QueryEvent::Enabled(false), QueryEvent::Enabled(true)]);
    assert_eq!((effects, state.data), (vec![], Some("v1")));
    // An invalidation while disabled is fetched on enabling.
    let (_, effects) =
        run(state, vec![QueryEvent::Enabled(false), QueryEvent::Invalidated, QueryEvent::Enabled(true)]);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 2, fresh: false }]);
    // Disabled from the start with no data: enabling fetches even with nothing asked meanwhile.
    let (_, effects) = run(State::new(true), vec![QueryEvent::Enabled(false), QueryEvent::Enabled(true)]);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 1, fresh: false }]);
}

#[test]
fn polling_ticks_fetch_only_when_visible_online_and_idle() {
    let (state, _) = run(State::new(true), vec![QueryEvent::Fetch, resolved(1, "v1")]);
    let (state, effects) = state.reduce(QueryEvent::Tick);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 2, fresh: true }], "polling wants the server's data");
    let (state, effects) = state.reduce(QueryEvent::Tick);
    assert_eq!(effects, [], "a fetch is running: the tick is skipped, not queued");
    let (state, effects) = run(state, vec![resolved(2, "v2"), QueryEvent::Visible(false), QueryEvent::Tick]);
    assert_eq!(effects, [], "a hidden tab does not poll");
    let (state, effects) = run(state, vec![QueryEvent::Visible(true), QueryEvent::Offline, QueryEvent::Tick]);
    assert_eq!(effects, [], "an offline browser does not poll");
    assert_eq!(state.fetch_status, FetchStatus::Idle, "a skipped tick leaves nothing paused");
    let (_, effects) = run(state, vec![QueryEvent::Online, QueryEvent::Tick]);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 3, fresh: true }]);
}

#[test]
fn new_variables_show_the_previous_data_as_a_placeholder_until_their_own() {
    let state = State::keeping(true, Some("page 1"));
    assert_eq!((state.data, state.placeholder, state.status), (Some("page 1"), true, QueryStatus::Pending));
    let (state, _) = run(state, vec![QueryEvent::Fetch, QueryEvent::Failed { seq: 1, error: "500" }]);
    assert_eq!(
        (state.data, state.placeholder),
        (Some("page 1"), true),
        "still the placeholder after an error"
    );
    let (state, _) = run(state, vec![QueryEvent::Fetch, resolved(2, "page 2")]);
    assert_eq!((state.data, state.placeholder), (Some("page 2"), false));
    assert!(!State::keeping(true, None).placeholder);
}

#[test]
fn a_guess_shows_until_the_server_answers_and_rolls_back_when_the_mutation_fails() {
    let (state, _) = run(State::new(true), vec![QueryEvent::Fetch, resolved(1, "one")]);
    let (state, effects) =
        run(state, vec![QueryEvent::Optimistic("one, two?"), QueryEvent::Optimistic("one, two?, three?")]);
    assert_eq!((effects, state.data), (vec![], Some("one, two?, three?")), "a guess fetches nothing");
    let (rolled_back, _) = state.clone().reduce(QueryEvent::RollBack);
    assert_eq!(rolled_back.data, Some("one"), "back to the data before the first guess");
    assert_eq!(rolled_back.before_guess, None);
    // The mutation succeeded: its invalidation re-runs the query, whose answer replaces the guess.
    let (state, effects) = state.reduce(QueryEvent::Invalidated);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 2, fresh: false }]);
    let (state, _) = state.reduce(resolved(2, "one, two, three"));
    assert_eq!((state.data, state.before_guess), (Some("one, two, three"), None));
    let (state, _) = state.reduce(QueryEvent::RollBack);
    assert_eq!(state.data, Some("one, two, three"), "nothing to roll back once the server answered");
}

#[test]
fn a_refresh_asks_for_fresh_data_now_or_when_it_can_start() {
    let (state, effects) = run(State::new(true), vec![QueryEvent::Fetch]);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 1, fresh: false }], "a mount may use the cache");
    let (state, effects) = run(state, vec![resolved(1, "v1"), QueryEvent::Refresh]);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 2, fresh: true }]);
    let (state, effects) = state.reduce(QueryEvent::Refresh);
    assert_eq!(effects, [], "deduplicated while a fetch runs");
    // Offline: paused, and fresh once back online; the fetch after it is not fresh again.
    let (state, effects) = run(state, vec![resolved(2, "v2"), QueryEvent::Offline, QueryEvent::Refresh]);
    assert_eq!((effects, state.fetch_status), (vec![], FetchStatus::Paused));
    let (state, effects) = state.reduce(QueryEvent::Online);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 3, fresh: true }]);
    let (_, effects) = run(state, vec![resolved(3, "v3"), QueryEvent::Invalidated]);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 4, fresh: false }]);
}

#[test]
fn a_cache_and_network_query_follows_a_cached_answer_with_a_fresh_fetch() {
    let resolved_from =
        |seq, data, from_cache| QueryEvent::Resolved { seq, data, from_cache, stale: false, now: 1 };
    let state = State { network_after_cache: true, ..State::new(true) };
    let (state, effects) = run(state, vec![QueryEvent::Fetch]);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 1, fresh: false }]);
    let (state, effects) = state.reduce(resolved_from(1, "stored", true));
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 2, fresh: true }], "the second answer is asked for");
    assert_eq!(
        (state.data, state.status, state.fetch_status),
        (Some("stored"), QueryStatus::Success, FetchStatus::Fetching)
    );
    let (state, effects) = state.reduce(resolved_from(2, "fresh", false));
    assert_eq!((effects, state.data), (vec![], Some("fresh")));
    // A fresh fetch answered by the cache (offline fallback) is not followed again; nor is a network answer.
    let (state, _) = run(state, vec![QueryEvent::Refresh]);
    let (state, effects) = state.reduce(resolved_from(3, "fallback", true));
    assert_eq!(effects, []);
    let (_, effects) = run(state, vec![QueryEvent::Invalidated, resolved_from(4, "network", false)]);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 4, fresh: false }], "only the invalidation's fetch");
    // Another strategy: a cached answer is final.
    let (_, effects) = run(State::new(true), vec![QueryEvent::Fetch, resolved_from(1, "stored", true)]);
    assert_eq!(effects, [QueryEffect::StartFetch { seq: 1, fresh: false }]);
}
