//! The agent's registry: exactly the subscribers whose tags were hit hear of an invalidation.

use cachet_core::machines::registry::{Delivery, Registry, RegistryInput};
use cachet_core::protocol::{AgentRequest, AgentResponse, AuthChangeKind, SwEvent};

fn feed(registry: Registry, inputs: Vec<RegistryInput>) -> (Registry, Vec<Delivery>) {
    let mut all = Vec::new();
    let mut registry = registry;
    for input in inputs {
        let (next, deliveries) = registry.reduce(input);
        registry = next;
        all.extend(deliveries);
    }
    (registry, all)
}

fn subscribe(bridge: u64, subscription: u64, tags: &[&str]) -> RegistryInput {
    let tags = tags.iter().map(|tag| (*tag).to_owned()).collect();
    RegistryInput::Request(bridge, AgentRequest::Subscribe { subscription, tags })
}

fn invalidated(tags: &[&str]) -> RegistryInput {
    RegistryInput::Sw(SwEvent::CacheInvalidated { tags: tags.iter().map(|tag| (*tag).to_owned()).collect() })
}

fn delivery(bridge: u64, response: AgentResponse) -> Delivery {
    Delivery { bridge, response }
}

/// Three bridges, four subscriptions: (bridge, subscription, tags).
fn three_bridges() -> Registry {
    let (registry, deliveries) = feed(
        Registry::new(true),
        vec![
            RegistryInput::Connected(1),
            RegistryInput::Connected(2),
            RegistryInput::Connected(3),
            subscribe(1, 10, &["getnotes", "notes"]),
            subscribe(1, 11, &["dashboard"]),
            subscribe(2, 20, &["notes"]),
            subscribe(3, 30, &["users"]),
        ],
    );
    assert_eq!(
        deliveries,
        [
            delivery(1, AgentResponse::Subscribed { subscription: 10 }),
            delivery(1, AgentResponse::Subscribed { subscription: 11 }),
            delivery(2, AgentResponse::Subscribed { subscription: 20 }),
            delivery(3, AgentResponse::Subscribed { subscription: 30 }),
        ],
        "each subscription is acknowledged to its own bridge"
    );
    registry
}

/// Invalidated tags, and for each bridge that hears of it, the subscriptions it is told about.
type InvalidationCase<'a> = (&'a [&'a str], &'a [(u64, &'a [u64])]);

#[test]
fn an_invalidation_reaches_exactly_the_subscriptions_it_hits() {
    let table: &[InvalidationCase<'_>] = &[
        (&["note", "notes"], &[(1, &[10]), (2, &[20])]),
        (&["dashboard"], &[(1, &[11])]),
        (&["notes", "dashboard"], &[(1, &[10, 11]), (2, &[20])]),
        (&["user"], &[]),
        (&["todos"], &[]),
        (&[], &[]),
    ];
    for (tags, expected) in table {
        let (_, deliveries) = three_bridges().reduce(invalidated(tags));
        let expected: Vec<Delivery> = expected
            .iter()
            .map(|(bridge, subscriptions)| {
                delivery(
                    *bridge,
                    AgentResponse::Invalidated {
                        subscriptions: subscriptions.to_vec(),
                        tags: tags.iter().map(|tag| (*tag).to_owned()).collect(),
                    },
                )
            })
            .collect();
        assert_eq!(deliveries, expected, "invalidating {tags:?}");
    }
}

#[test]
fn unsubscribing_and_disconnecting_forget_the_subscriptions() {
    let (registry, deliveries) = feed(
        three_bridges(),
        vec![
            RegistryInput::Request(1, AgentRequest::Unsubscribe { subscription: 10 }),
            RegistryInput::Disconnected(2),
            invalidated(&["notes"]),
        ],
    );
    assert_eq!(deliveries, []);
    assert_eq!(registry.subscription_count(), 2);
    // Subscribing again under the same id replaces the tags.
    let (_, deliveries) = feed(
        registry,
        vec![subscribe(1, 11, &["notes"]), invalidated(&["dashboard"]), invalidated(&["notes"])],
    );
    assert_eq!(
        deliveries,
        [
            delivery(1, AgentResponse::Subscribed { subscription: 11 }),
            delivery(1, AgentResponse::Invalidated { subscriptions: vec![11], tags: vec!["notes".into()] }),
        ]
    );
}

#[test]
fn auth_and_connectivity_are_mirrored_and_told_to_every_bridge() {
    let all = |response: AgentResponse| {
        (1..=3).map(|bridge| delivery(bridge, response.clone())).collect::<Vec<_>>()
    };
    let state = |online, authenticated| AgentResponse::AuthState { online, authenticated };

    let (registry, deliveries) =
        three_bridges().reduce(RegistryInput::Request(2, AgentRequest::AuthStateRequest));
    assert_eq!(deliveries, [delivery(2, state(true, false))]);

    let (registry, deliveries) =
        registry.reduce(RegistryInput::Request(1, AgentRequest::ReportAuth { authenticated: true }));
    assert_eq!(deliveries, all(state(true, true)), "a report is told to everyone, even the reporter");

    let (registry, deliveries) = registry.reduce(RegistryInput::Online(true));
    assert_eq!(deliveries, [], "no change, no news");
    let (registry, deliveries) = registry.reduce(RegistryInput::Online(false));
    assert_eq!(deliveries, all(AgentResponse::OnlineChanged { online: false }));

    let logout = RegistryInput::Sw(SwEvent::AuthStateChange { kind: AuthChangeKind::Logout });
    let (registry, deliveries) = registry.reduce(logout.clone());
    assert_eq!(deliveries, all(state(false, false)));
    let (registry, deliveries) = registry.reduce(logout);
    assert_eq!(deliveries, [], "a second logout changes nothing");
    assert!(!registry.authenticated && !registry.online);
}

#[test]
fn watchers_get_every_sw_event_and_everyone_gets_cache_updates() {
    let updated = SwEvent::CacheUpdated { url: "/api/hello".into() };
    let (_, deliveries) = feed(
        three_bridges(),
        vec![RegistryInput::Request(3, AgentRequest::WatchSwEvents), RegistryInput::Sw(updated.clone())],
    );
    let mut expected = vec![delivery(3, AgentResponse::SwEvent { event: updated })];
    expected.extend(
        (1..=3).map(|bridge| delivery(bridge, AgentResponse::CacheUpdated { url: "/api/hello".into() })),
    );
    assert_eq!(deliveries, expected);
}
