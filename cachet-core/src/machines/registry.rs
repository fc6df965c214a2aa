//! The yew-agent worker's registry: which bridge holds which subscription with which tags, and the
//! mirrored auth and online state. Every input yields the [`Delivery`]s the worker must send.
//!
//! | Input | State | Deliveries |
//! |---|---|---|
//! | [`RegistryInput::Connected`] | the bridge is known | none |
//! | `Subscribe { subscription, tags }` | the subscription holds `tags` (replacing earlier ones) | [`AgentResponse::Subscribed`] to that bridge |
//! | `Unsubscribe { subscription }` | forgotten | none |
//! | `AuthStateRequest` | unchanged | [`AgentResponse::AuthState`] to that bridge |
//! | `ReportAuth { authenticated }` | mirrored | [`AgentResponse::AuthState`] to every bridge |
//! | `WatchSwEvents` | the bridge watches | none |
//! | [`RegistryInput::Disconnected`] | its subscriptions are forgotten | none |
//! | [`SwEvent::CacheInvalidated`] | unchanged | [`AgentResponse::Invalidated`] to each bridge holding a hit subscription ([`is_hit`]), naming exactly those |
//! | [`SwEvent::CacheUpdated`] | unchanged | [`AgentResponse::CacheUpdated`] to every bridge |
//! | [`SwEvent::AuthStateChange`] | `login`/`refresh`: authenticated; `logout`/`clear`: not | [`AgentResponse::AuthState`] to every bridge when it changed |
//! | [`RegistryInput::Online`] | mirrored | [`AgentResponse::OnlineChanged`] to every bridge when it changed |
//!
//! Every Service Worker event is also delivered as [`AgentResponse::SwEvent`] to the watching bridges.

use std::collections::BTreeMap;

use crate::protocol::{AgentRequest, AgentResponse, AuthChangeKind, SwEvent};
use crate::tags::is_hit;

/// The worker's own number for one bridge (one connected hook).
pub type BridgeId = u64;

/// An input of the registry.
#[derive(Debug, Clone, PartialEq)]
pub enum RegistryInput {
    /// A bridge connected.
    Connected(BridgeId),
    /// A bridge sent a request.
    Request(BridgeId, AgentRequest),
    /// A bridge went away.
    Disconnected(BridgeId),
    /// The Service Worker (or a page acting for it) broadcast an event.
    Sw(SwEvent),
    /// Connectivity as the worker sees it.
    Online(bool),
}

/// One response for one bridge.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// To whom.
    pub bridge: BridgeId,
    /// What.
    pub response: AgentResponse,
}

/// The registry's state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Registry {
    /// Connected bridges, and whether each watches the raw Service Worker events.
    bridges: BTreeMap<BridgeId, bool>,
    /// `(bridge, subscription)` → tags.
    subscriptions: BTreeMap<(BridgeId, u64), Vec<String>>,
    /// Mirrored connectivity.
    pub online: bool,
    /// Mirrored auth presence.
    pub authenticated: bool,
}

impl Registry {
    /// No bridges, the given connectivity, not authenticated (until the page reports).
    pub fn new(online: bool) -> Self {
        Registry { online, ..Registry::default() }
    }

    /// Number of live subscriptions.
    pub fn subscription_count(&self) -> usize {
        self.subscriptions.len()
    }

    /// Applies one input.
    pub fn reduce(mut self, input: RegistryInput) -> (Self, Vec<Delivery>) {
        let mut out = Vec::new();
        match input {
            RegistryInput::Connected(bridge) => {
                self.bridges.entry(bridge).or_insert(false);
            }
            RegistryInput::Disconnected(bridge) => {
                self.bridges.remove(&bridge);
                self.subscriptions.retain(|(owner, _), _| *owner != bridge);
            }
            RegistryInput::Request(bridge, request) => self.request(bridge, request, &mut out),
            RegistryInput::Online(online) => {
                if online != self.online {
                    self.online = online;
                    self.to_all(AgentResponse::OnlineChanged { online }, &mut out);
                }
            }
            RegistryInput::Sw(event) => self.sw_event(event, &mut out),
        }
        (self, out)
    }

    fn request(&mut self, bridge: BridgeId, request: AgentRequest, out: &mut Vec<Delivery>) {
        self.bridges.entry(bridge).or_insert(false);
        match request {
            AgentRequest::Subscribe { subscription, tags } => {
                self.subscriptions.insert((bridge, subscription), tags);
                out.push(Delivery { bridge, response: AgentResponse::Subscribed { subscription } });
            }
            AgentRequest::Unsubscribe { subscription } => {
                self.subscriptions.remove(&(bridge, subscription));
            }
            AgentRequest::AuthStateRequest => out.push(Delivery { bridge, response: self.auth_state() }),
            AgentRequest::ReportAuth { authenticated } => {
                self.authenticated = authenticated;
                let state = self.auth_state();
                self.to_all(state, out);
            }
            AgentRequest::WatchSwEvents => {
                self.bridges.insert(bridge, true);
            }
        }
    }

    fn sw_event(&mut self, event: SwEvent, out: &mut Vec<Delivery>) {
        for (&bridge, _) in self.bridges.iter().filter(|(_, watches)| **watches) {
            out.push(Delivery { bridge, response: AgentResponse::SwEvent { event: event.clone() } });
        }
        match event {
            SwEvent::CacheInvalidated { tags } => {
                let mut hit: BTreeMap<BridgeId, Vec<u64>> = BTreeMap::new();
                for ((bridge, subscription), held) in &self.subscriptions {
                    if is_hit(held, &tags) {
                        hit.entry(*bridge).or_default().push(*subscription);
                    }
                }
                for (bridge, subscriptions) in hit {
                    let response = AgentResponse::Invalidated { subscriptions, tags: tags.clone() };
                    out.push(Delivery { bridge, response });
                }
            }
            SwEvent::CacheUpdated { url } => self.to_all(AgentResponse::CacheUpdated { url }, out),
            SwEvent::AuthStateChange { kind } => {
                let authenticated = matches!(kind, AuthChangeKind::Login | AuthChangeKind::Refresh);
                if authenticated != self.authenticated {
                    self.authenticated = authenticated;
                    let state = self.auth_state();
                    self.to_all(state, out);
                }
            }
            _ => {}
        }
    }

    fn auth_state(&self) -> AgentResponse {
        AgentResponse::AuthState { online: self.online, authenticated: self.authenticated }
    }

    fn to_all(&self, response: AgentResponse, out: &mut Vec<Delivery>) {
        out.extend(self.bridges.keys().map(|&bridge| Delivery { bridge, response: response.clone() }));
    }
}
