//! The panel's markup: sections for the entries, the tags, the queue and dead letters, auth, the log.
//! Stable ids and classes (`#cachet-devtools`, `tr.entry[data-url][data-stored-at]`,
//! `button.invalidate-tag[data-tag]`, `li.dead-letter[data-id]`, `#cachet-devtools-log`) for tests.

use std::rc::Rc;

use cachet_core::machines::queue::DeadLetterReason;
use cachet_core::protocol::{EntryView, SnapshotQuery, StateSnapshot};
use web_sys::HtmlInputElement;
use yew::prelude::*;

use super::model::{Action, LogLine};

const STYLE: &str = "#cachet-devtools-toggle{position:fixed;right:1rem;bottom:1rem;z-index:9999;border-radius:999px;\
border:none;background:#1d2330;color:#fff;padding:.5rem .9rem;font:600 .85rem system-ui;cursor:pointer}\
#cachet-devtools{position:fixed;left:0;right:0;bottom:0;max-height:55vh;overflow:auto;z-index:9998;background:#fff;\
border-top:2px solid #1d2330;font:12px/1.4 ui-monospace,monospace;color:#1d2330;padding:.5rem 1rem 3rem}\
#cachet-devtools h3{font:600 13px system-ui;margin:.6rem 0 .3rem}#cachet-devtools table{border-collapse:collapse;width:100%}\
#cachet-devtools td,#cachet-devtools th{border-bottom:1px solid #eee;padding:2px 6px;text-align:left;vertical-align:top}\
#cachet-devtools button{font:11px system-ui;margin:0 2px;cursor:pointer}#cachet-devtools .muted{color:#6b7280}\
#cachet-devtools .chip{background:#e0f2fe;border:none;border-radius:4px}#cachet-devtools input{font:12px system-ui;width:9rem}";

/// What the view shows.
pub(super) struct ViewProps {
    pub(super) open: bool,
    pub(super) query: SnapshotQuery,
    pub(super) snapshot: Option<Result<StateSnapshot, cachet_client::Error>>,
    pub(super) lines: Rc<Vec<LogLine>>,
    pub(super) authenticated: bool,
    pub(super) online: bool,
    pub(super) on_action: Callback<Action>,
}

fn time(ms: u64) -> String {
    if ms == 0 {
        return "-".to_owned();
    }
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
    String::from(date.to_iso_string()).get(11..19).unwrap_or_default().to_owned()
}

fn button(
    label: &str,
    class: &'static str,
    on_action: &Callback<Action>,
    action: impl Fn() -> Action + 'static,
) -> Html {
    let onclick = on_action.reform(move |_: MouseEvent| action());
    html! { <button {class} {onclick}>{ label }</button> }
}

pub(super) fn render(props: &ViewProps) -> Html {
    let toggle = props.on_action.reform(|_: MouseEvent| Action::Toggle);
    let label = if props.open { "close cachet" } else { "cachet" };
    html! {
        <>
            <style>{ STYLE }</style>
            <button id="cachet-devtools-toggle" onclick={toggle}>{ label }</button>
            if props.open { { panel(props) } }
        </>
    }
}

fn panel(props: &ViewProps) -> Html {
    let on = &props.on_action;
    let body = match &props.snapshot {
        None => html! { <p class="muted">{ "reading the Service Worker…" }</p> },
        Some(Err(error)) => html! { <p id="cachet-devtools-error">{ error.to_string() }</p> },
        Some(Ok(snapshot)) => html! {
            <>
                { state(snapshot, props) }
                { entries(snapshot, &props.query, on) }
                { tags(snapshot, on) }
                { queue(snapshot, on) }
            </>
        },
    };
    html! {
        <section id="cachet-devtools">
            { button("refresh", "refresh", on, || Action::Refresh) }
            { button("replay queue", "replay-queue", on, || Action::ReplayQueue) }
            { button("clear all", "clear-all", on, || Action::ClearAll) }
            { body }
            <h3>{ "events" }</h3>
            <ul id="cachet-devtools-log">
                { for props.lines.iter().map(|line| html! { <li><span class="muted">{ &line.at }</span>{ " " }{ &line.text }</li> }) }
            </ul>
        </section>
    }
}

fn state(snapshot: &StateSnapshot, props: &ViewProps) -> Html {
    let who = match &snapshot.identity {
        Some(identity) => format!("partition {} ({} token(s) vouched)", identity.partition, identity.vouched),
        None => "nobody signed in".to_owned(),
    };
    html! {
        <>
            <p id="cachet-devtools-state">
                { if props.authenticated { "signed in" } else { "signed out" } }{ " · page " }
                { if props.online { "online" } else { "offline" } }{ " · worker " }
                { if snapshot.online { "online" } else { "offline" } }{ " · " }{ who }
                <span class="muted">{ format!(" · build {}", snapshot.build) }</span>
            </p>
            <details><summary>{ "config in force" }</summary><pre>{ &snapshot.config }</pre></details>
            { for snapshot.problems.iter().map(|problem| html! { <p class="problem">{ problem }</p> }) }
        </>
    }
}

fn filter_input(
    name: &'static str,
    value: Option<&str>,
    query: &SnapshotQuery,
    on: &Callback<Action>,
) -> Html {
    let query = query.clone();
    let onchange = on.reform(move |event: Event| {
        let text = event.target_unchecked_into::<HtmlInputElement>().value();
        let text = Some(text.trim().to_owned()).filter(|text| !text.is_empty());
        let mut next = SnapshotQuery { after: None, ..query.clone() };
        match name {
            "tag" => next.tag = text,
            "operation" => next.operation = text,
            _ => next.partition = text,
        }
        Action::Filter(next)
    });
    let id = format!("cachet-devtools-filter-{name}");
    html! { <label>{ format!(" {name} ") }<input {id} value={value.unwrap_or_default().to_owned()} {onchange} /></label> }
}

fn entries(snapshot: &StateSnapshot, query: &SnapshotQuery, on: &Callback<Action>) -> Html {
    let page = &snapshot.entries;
    let next = page.next.clone().map(|after| {
        let next = SnapshotQuery { after: Some(after), ..query.clone() };
        button("next page", "next-page", on, move || Action::Filter(next.clone()))
    });
    let first = query.after.is_some().then(|| {
        let first = SnapshotQuery { after: None, ..query.clone() };
        button("first page", "first-page", on, move || Action::Filter(first.clone()))
    });
    html! {
        <>
            <h3>{ format!("entries ({} shown, {} read)", page.items.len(), page.scanned) }</h3>
            <div>
                { filter_input("tag", query.tag.as_deref(), query, on) }
                { filter_input("operation", query.operation.as_deref(), query, on) }
                { filter_input("partition", query.partition.as_deref(), query, on) }
                { for first }{ for next }
            </div>
            <table>
                <tr><th>{ "request" }</th><th>{ "partition" }</th><th>{ "tags" }</th><th>{ "size" }</th>
                    <th>{ "stored" }</th><th>{ "used" }</th><th>{ "strategy" }</th><th></th></tr>
                { for page.items.iter().map(|entry| entry_row(entry, query, on)) }
            </table>
        </>
    }
}

fn entry_row(entry: &EntryView, query: &SnapshotQuery, on: &Callback<Action>) -> Html {
    let chips = entry.tags.iter().map(|tag| {
        let next = SnapshotQuery { after: None, tag: Some(tag.clone()), ..query.clone() };
        button(tag, "chip", on, move || Action::Filter(next.clone()))
    });
    let url = entry.url.clone();
    html! {
        <tr class="entry" data-url={entry.url.clone()} data-stored-at={entry.stored_at.to_string()}>
            <td class="request" title={entry.url.clone()}>{ &entry.request }
                <span class="muted">{ format!(" {}", entry.variables.as_deref().unwrap_or_default()) }</span></td>
            <td>{ &entry.partition }</td>
            <td class="tags">{ for chips }</td>
            <td>{ format!("{} B", entry.size) }</td>
            <td>{ time(entry.stored_at) }</td>
            <td>{ time(entry.used_at) }</td>
            <td>{ entry.strategy.as_deref().unwrap_or("-") }</td>
            <td>{ button("drop", "drop-entry", on, move || Action::DropEntry(url.clone())) }</td>
        </tr>
    }
}

fn tags(snapshot: &StateSnapshot, on: &Callback<Action>) -> Html {
    html! {
        <>
            <h3>{ "tags" }</h3>
            <ul id="cachet-devtools-tags">
                { for snapshot.tags.iter().map(|count| {
                    let tag = count.tag.clone();
                    let onclick = on.reform(move |_: MouseEvent| Action::InvalidateTag(tag.clone()));
                    html! { <li>{ format!("{} ({}) ", count.tag, count.entries) }
                        <button class="invalidate-tag" data-tag={count.tag.clone()} {onclick}>{ "invalidate" }</button></li> }
                }) }
            </ul>
        </>
    }
}

fn reason(reason: DeadLetterReason) -> String {
    match reason {
        DeadLetterReason::Rejected { status } => format!("rejected ({status})"),
        DeadLetterReason::TooManyAttempts => "too many attempts".to_owned(),
        DeadLetterReason::Unauthorized => "unauthorized".to_owned(),
    }
}

fn queue(snapshot: &StateSnapshot, on: &Callback<Action>) -> Html {
    let queue = &snapshot.queue;
    html! {
        <>
            <h3>{ format!("queue ({} pending, {})", queue.pending.len(), if queue.online { "online" } else { "offline" }) }</h3>
            <ul id="cachet-devtools-queue">
                { for queue.pending.iter().map(|item| html! {
                    <li class="queued" data-id={item.id.to_string()}>{ format!(
                        "#{} {} {} · {} attempt(s) · next {}{}", item.id, item.operation,
                        item.variables.as_deref().unwrap_or_default(), item.attempts, time(item.next_attempt_at),
                        if queue.in_flight == Some(item.id) { " · in flight" } else { "" }) }</li>
                }) }
            </ul>
            <h3>{ format!("dead letters ({})", queue.dead_letters.len()) }</h3>
            <ul id="cachet-devtools-dead-letters">
                { for queue.dead_letters.iter().map(|letter| {
                    let id = letter.id;
                    html! { <li class="dead-letter" data-id={id.to_string()}>
                        { format!("#{} {} {} · {} · {} attempt(s) · at {} ", id, letter.operation,
                            letter.variables.as_deref().unwrap_or_default(), reason(letter.reason), letter.attempts, time(letter.at)) }
                        { button("retry", "retry", on, move || Action::Retry(id)) }
                        { button("discard", "discard", on, move || Action::Discard(id)) }
                    </li> }
                }) }
            </ul>
        </>
    }
}
