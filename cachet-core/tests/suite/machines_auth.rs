//! The auth reducer over the four states of SPEC §3, as a table.

use cachet_core::machines::auth::{AuthEffect, AuthEvent, AuthState};
use cachet_core::protocol::AuthChangeKind::{Clear, Login, Logout, Refresh};
use AuthEffect::{Broadcast, DropMemoryAuth, Publish, PurgeAll, ReloadAuth};

const ON_IN: AuthState = AuthState { online: true, authenticated: true };
const ON_OUT: AuthState = AuthState { online: true, authenticated: false };
const OFF_IN: AuthState = AuthState { online: false, authenticated: true };
const OFF_OUT: AuthState = AuthState { online: false, authenticated: false };

#[test]
fn transitions() {
    let table: Vec<(AuthState, AuthEvent, AuthState, Vec<AuthEffect>)> = vec![
        (ON_OUT, AuthEvent::SetAuth, ON_IN, vec![Broadcast(Login), Publish(ON_IN)]),
        (OFF_OUT, AuthEvent::SetAuth, OFF_IN, vec![Broadcast(Login), Publish(OFF_IN)]),
        (ON_IN, AuthEvent::SetAuth, ON_IN, vec![Broadcast(Refresh), Publish(ON_IN)]),
        (ON_IN, AuthEvent::TokenRefreshed, ON_IN, vec![Broadcast(Refresh), Publish(ON_IN)]),
        (ON_OUT, AuthEvent::TokenRefreshed, ON_OUT, vec![]),
        (ON_IN, AuthEvent::RefreshRefused, ON_OUT, vec![PurgeAll, Broadcast(Logout), Publish(ON_OUT)]),
        (ON_OUT, AuthEvent::RefreshRefused, ON_OUT, vec![]),
        (ON_IN, AuthEvent::LoggedOut, ON_OUT, vec![PurgeAll, Broadcast(Logout), Publish(ON_OUT)]),
        (ON_IN, AuthEvent::ClearAuth, ON_OUT, vec![PurgeAll, Broadcast(Clear), Publish(ON_OUT)]),
        (OFF_IN, AuthEvent::ClearAuth, OFF_OUT, vec![PurgeAll, Broadcast(Clear), Publish(OFF_OUT)]),
        (ON_OUT, AuthEvent::ClearAuth, ON_OUT, vec![PurgeAll, Broadcast(Clear)]),
        (ON_IN, AuthEvent::ClearMemoryAuth, ON_OUT, vec![DropMemoryAuth, Publish(ON_OUT)]),
        (ON_IN, AuthEvent::Offline, OFF_IN, vec![Publish(OFF_IN)]),
        (OFF_IN, AuthEvent::Online, ON_IN, vec![Publish(ON_IN)]),
        (OFF_OUT, AuthEvent::Online, ON_OUT, vec![Publish(ON_OUT)]),
        (ON_OUT, AuthEvent::Offline, OFF_OUT, vec![Publish(OFF_OUT)]),
        (ON_IN, AuthEvent::Online, ON_IN, vec![]),
        (ON_OUT, AuthEvent::Remote(Login), ON_IN, vec![ReloadAuth, Publish(ON_IN)]),
        (ON_IN, AuthEvent::Remote(Refresh), ON_IN, vec![ReloadAuth]),
        (ON_IN, AuthEvent::Remote(Logout), ON_OUT, vec![DropMemoryAuth, Publish(ON_OUT)]),
        (OFF_IN, AuthEvent::Remote(Clear), OFF_OUT, vec![DropMemoryAuth, Publish(OFF_OUT)]),
    ];
    for (from, event, to, effects) in table {
        assert_eq!(from.reduce(event), (to, effects), "{from:?} + {event:?}");
    }
}

#[test]
fn every_state_and_event_keeps_connectivity_unless_it_is_about_connectivity() {
    let events = [
        AuthEvent::SetAuth,
        AuthEvent::TokenRefreshed,
        AuthEvent::RefreshRefused,
        AuthEvent::LoggedOut,
        AuthEvent::ClearAuth,
        AuthEvent::ClearMemoryAuth,
        AuthEvent::Remote(Login),
        AuthEvent::Remote(Clear),
    ];
    for state in [ON_IN, ON_OUT, OFF_IN, OFF_OUT] {
        for event in events {
            let (next, effects) = state.reduce(event);
            assert_eq!(next.online, state.online);
            // A remote change is never echoed back.
            if matches!(event, AuthEvent::Remote(_)) {
                assert!(!effects.iter().any(|effect| matches!(effect, Broadcast(_) | PurgeAll)));
            }
        }
    }
}
