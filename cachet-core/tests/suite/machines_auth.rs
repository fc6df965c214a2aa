//! The auth reducer over the four states of SPEC §3, as a table.

use cachet_core::machines::auth::{AuthEffect, AuthEvent, AuthState};
use cachet_core::protocol::AuthChangeKind::{Clear, Login, Logout, Refresh};
use AuthEffect::{Broadcast, DropMemoryAuth, ForgetSession, Publish, PurgeAll, ReloadAuth, RestoreSession};

const ON_IN: AuthState = AuthState { online: true, authenticated: true, restore_pending: false };
const ON_OUT: AuthState = AuthState { online: true, authenticated: false, restore_pending: false };
const OFF_IN: AuthState = AuthState { online: false, authenticated: true, restore_pending: false };
const OFF_OUT: AuthState = AuthState { online: false, authenticated: false, restore_pending: false };
/// Signed in from the persisted record, the server not yet asked.
const ON_PENDING: AuthState = AuthState { online: true, authenticated: true, restore_pending: true };
const OFF_PENDING: AuthState = AuthState { online: false, authenticated: true, restore_pending: true };

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

/// A page starting with the persisted record (issue 36): signed in from it at once; the server is asked
/// to confirm when the record cannot vouch alone, now when online, else on the next `Online`; the
/// restore's outcome is an ordinary event.
#[test]
fn restoring_a_session_on_start() {
    let restored = |needs_server| AuthEvent::RecordRestored { needs_server };
    let table: Vec<(AuthState, AuthEvent, AuthState, Vec<AuthEffect>)> = vec![
        // A cookie record still valid: signed in, nobody asked.
        (ON_OUT, restored(false), ON_IN, vec![Publish(ON_IN)]),
        (OFF_OUT, restored(false), OFF_IN, vec![Publish(OFF_IN)]),
        // A bearer record (no token survives a reload): signed in from it, and the server asked online.
        (ON_OUT, restored(true), ON_PENDING, vec![Publish(ON_PENDING), RestoreSession]),
        (OFF_OUT, restored(true), OFF_PENDING, vec![Publish(OFF_PENDING)]),
        (OFF_PENDING, AuthEvent::Online, ON_PENDING, vec![Publish(ON_PENDING), RestoreSession]),
        (ON_PENDING, AuthEvent::Offline, OFF_PENDING, vec![Publish(OFF_PENDING)]),
        // Restored: the session is confirmed, and the other tabs hear the new token.
        (ON_PENDING, AuthEvent::TokenRefreshed, ON_IN, vec![Broadcast(Refresh), Publish(ON_IN)]),
        // Refused: the session ended while no page held it. Not a purge: the worker forgets the user,
        // whose entries and queue wait for their next login.
        (
            ON_PENDING,
            AuthEvent::RefreshRefused,
            ON_OUT,
            vec![ForgetSession, Broadcast(Logout), Publish(ON_OUT)],
        ),
        // Another tab's login or token ends the wait; a login or a clear here too.
        (ON_PENDING, AuthEvent::Remote(Refresh), ON_IN, vec![ReloadAuth, Publish(ON_IN)]),
        (ON_PENDING, AuthEvent::SetAuth, ON_IN, vec![Broadcast(Refresh), Publish(ON_IN)]),
        (ON_PENDING, AuthEvent::ClearAuth, ON_OUT, vec![PurgeAll, Broadcast(Clear), Publish(ON_OUT)]),
        (ON_PENDING, AuthEvent::ClearMemoryAuth, ON_OUT, vec![DropMemoryAuth, Publish(ON_OUT)]),
        // Nothing pending: going online asks nobody.
        (OFF_IN, AuthEvent::Online, ON_IN, vec![Publish(ON_IN)]),
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
