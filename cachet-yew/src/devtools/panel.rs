//! The panel's state and actions: the open flag, the filters, the last snapshot, the event log.

use std::rc::Rc;

use cachet_client::{Client, ClientEvent};
use cachet_core::protocol::{encode_sw_event, SnapshotQuery, StateSnapshot};
use yew::prelude::*;

use super::model::{Action, LogLine};
use super::view;
use crate::{use_cachet_auth, use_cachet_client};

/// The most log lines kept (newest first).
const LOG_LINES: usize = 50;

/// The log, and a version bumped by every event and action: the snapshot is read again on each.
#[derive(Clone, Default, PartialEq)]
pub(super) struct Journal {
    pub(super) lines: Rc<Vec<LogLine>>,
    pub(super) version: u32,
}

pub(super) enum Note {
    /// An event to log (then the snapshot is read again).
    Line(String),
    /// Read the snapshot again.
    Refresh,
}

impl Reducible for Journal {
    type Action = Note;

    fn reduce(self: Rc<Self>, action: Note) -> Rc<Self> {
        let mut lines = self.lines.clone();
        if let Note::Line(text) = action {
            let at = String::from(js_sys::Date::new_0().to_iso_string())
                .get(11..23)
                .unwrap_or_default()
                .to_owned();
            let lines = Rc::make_mut(&mut lines);
            lines.insert(0, LogLine { at, text });
            lines.truncate(LOG_LINES);
        }
        Rc::new(Journal { lines, version: self.version.wrapping_add(1) })
    }
}

fn describe(event: &ClientEvent) -> String {
    match event {
        ClientEvent::AuthStateChange { kind } => format!("sw-auth-state-change: {}", kind_name(*kind)),
        ClientEvent::CacheInvalidated { tags } => format!("cache-invalidated: {}", tags.join(", ")),
        ClientEvent::CacheUpdated { url } => format!("cache-updated: {url}"),
        ClientEvent::StateChanged(state) => format!(
            "auth state: {}, {}",
            if state.authenticated { "signed in" } else { "signed out" },
            if state.online { "online" } else { "offline" }
        ),
        ClientEvent::Sw(event) => encode_sw_event(event),
        _ => "another event".to_owned(),
    }
}

fn kind_name(kind: cachet_client::AuthChangeKind) -> &'static str {
    use cachet_client::AuthChangeKind::*;
    match kind {
        Login => "login",
        Logout => "logout",
        Refresh => "refresh",
        Clear => "clear",
    }
}

/// Runs a client call, logs its failure, and reads the snapshot again.
fn act<F>(client: &Client, journal: &UseReducerHandle<Journal>, what: String, call: impl FnOnce(Client) -> F)
where
    F: std::future::Future<Output = Result<(), cachet_client::Error>> + 'static,
{
    let (future, journal) = (call(client.clone()), journal.clone());
    wasm_bindgen_futures::spawn_local(async move {
        match future.await {
            Ok(()) => journal.dispatch(Note::Line(format!("devtools: {what}"))),
            Err(error) => journal.dispatch(Note::Line(format!("devtools: {what} failed: {error}"))),
        }
    });
}

#[function_component]
pub(super) fn Panel() -> Html {
    let client = use_cachet_client();
    let auth = use_cachet_auth();
    let open = use_state(|| false);
    let query = use_state(SnapshotQuery::default);
    let snapshot = use_state(|| None::<Result<StateSnapshot, cachet_client::Error>>);
    let journal = use_reducer(Journal::default);
    {
        let (client, journal) = (client.clone(), journal.clone());
        use_effect_with((), move |_| {
            let subscription = client.subscribe(move |event| journal.dispatch(Note::Line(describe(event))));
            move || drop(subscription)
        });
    }
    {
        let (client, snapshot) = (client.clone(), snapshot.clone());
        use_effect_with((*open, (*query).clone(), journal.version), move |(open, query, _)| {
            if *open {
                let query = query.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let taken = client.devtools_snapshot(query).await;
                    snapshot.set(Some(taken));
                });
            }
        });
    }
    let on_action =
        {
            let (open, query, journal) = (open.clone(), query.clone(), journal.clone());
            Callback::from(move |action: Action| match action {
                Action::Toggle => open.set(!*open),
                Action::Filter(next) => query.set(next),
                Action::Refresh => journal.dispatch(Note::Refresh),
                Action::InvalidateTag(tag) => {
                    act(&client, &journal, format!("invalidate tag {tag}"), move |client| async move {
                        client.invalidate_by_tag(&[tag.as_str()]).await
                    })
                }
                Action::DropEntry(url) => {
                    act(&client, &journal, format!("drop {url}"), move |client| async move {
                        client.drop_entries(&[url]).await
                    })
                }
                Action::ReplayQueue => {
                    client.replay_queue();
                    journal.dispatch(Note::Line("devtools: replay-queue sent".to_owned()));
                }
                Action::Retry(id) => {
                    act(&client, &journal, format!("retry dead letter {id}"), move |client| async move {
                        client.retry_dead_letters(&[id]).await
                    })
                }
                Action::Discard(id) => {
                    act(&client, &journal, format!("discard dead letter {id}"), move |client| async move {
                        client.discard_dead_letters(&[id]).await
                    })
                }
                Action::ClearAll => act(&client, &journal, "clear all".to_owned(), |client| async move {
                    client.clear_caches().await
                }),
            })
        };
    let props = view::ViewProps {
        open: *open,
        query: (*query).clone(),
        snapshot: (*snapshot).clone(),
        lines: journal.lines.clone(),
        authenticated: auth.authenticated,
        online: auth.online,
        on_action,
    };
    view::render(&props)
}
