//! Devtools decisions: how a cached entry and a queued mutation are described, which entries a
//! [`SnapshotQuery`] lists, and the parts of a [`crate::protocol::StateSnapshot`] made from stored
//! state. The Service Worker reads its stores and calls these; it decides nothing itself.
//!
//! | What | Rule |
//! |---|---|
//! | an entry's request | the GraphQL operation name (`<anonymous>` without one), else the URL of the GET |
//! | variables, short | compact JSON of the `variables` object, cut at [`SHORT_VARIABLES`] characters with `…`; none when empty |
//! | an entry's partition | the segment after `/__cachet/gql/` or `/__cachet/get/` in its cache URL, else `shared` |
//! | a filter | every given filter must hold: tag carried, request containing the text (ignoring ASCII case), partition equal |
//! | a page | at most [`SnapshotQuery::page_size`] entries, in URL order, from after the cursor |
//! | identity | the partition and how many tokens were vouched for: never a fingerprint, never a token |

use crate::json::{Map, Value};

use crate::machines::queue::{QueueState, QueuedRequest};
use crate::partition::Identity;
use crate::protocol::snapshot::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};
use crate::protocol::{DeadLetterView, EntryView, IdentityView, QueueView, QueuedView, SnapshotQuery};

/// The most characters of the short form of variables.
pub const SHORT_VARIABLES: usize = 60;
/// The request name of an operation without a name.
pub const ANONYMOUS: &str = "<anonymous>";
/// The partition name of entries nobody's partition holds.
pub const SHARED: &str = "shared";
/// Where a partition segment follows in an entry URL (`crate::engine::key`).
const PARTITIONED_PREFIXES: [&str; 2] =
    [crate::cache_key::GRAPHQL_CACHE_PREFIX, crate::engine::key::PARTITIONED_GET_PREFIX];

/// What the entry index records about an entry beside its tags and times, decided when it is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryDetails {
    /// [`EntryView::request`].
    pub request: String,
    /// [`EntryView::variables`].
    pub variables: Option<String>,
    /// Body size in bytes.
    pub size: u64,
    /// The strategy's name.
    pub strategy: &'static str,
}

impl EntryDetails {
    /// The details of an entry stored for the request to `url` with `body` (a GraphQL POST's; `None` for
    /// a GET), whose answer is `size` bytes, by `strategy`.
    pub fn describe(url: &str, body: Option<&[u8]>, size: u64, strategy: crate::strategy::Strategy) -> Self {
        let (request, variables) = match body.map(crate::graphql::parse_body) {
            Some(Ok(Some(graphql))) => (
                graphql.operation.name.unwrap_or_else(|| ANONYMOUS.to_owned()),
                short_variables(&graphql.variables),
            ),
            _ => (url.to_owned(), None),
        };
        EntryDetails { request, variables, size, strategy: strategy.as_str() }
    }
}

/// Compact JSON of `variables`, at most [`SHORT_VARIABLES`] characters (cut with `…`); `None` when empty.
pub fn short_variables(variables: &Map) -> Option<String> {
    if variables.is_empty() {
        return None;
    }
    let text = Value::Object(variables.clone()).to_string();
    if text.chars().count() <= SHORT_VARIABLES {
        return Some(text);
    }
    Some(text.chars().take(SHORT_VARIABLES - 1).chain(['…']).collect())
}

/// The partition of the entry at the cache URL `url`: its segment after `/__cachet/gql/` or
/// `/__cachet/get/`, else [`SHARED`].
pub fn partition_of(url: &str) -> String {
    PARTITIONED_PREFIXES
        .iter()
        .find_map(|prefix| url.split_once(prefix).and_then(|(_, rest)| rest.split('/').next()))
        .filter(|segment| !segment.is_empty())
        .unwrap_or(SHARED)
        .to_owned()
}

/// A record's fields as `EntryView`'s derive reads them (`url` and `cache` required, the rest absent
/// meaning empty, `null` refused but for `variables` and `strategy`); the name of the field that is not,
/// when one is not. By hand: the worker's wasm then carries no serde deserializer (the derive is the
/// oracle in the tests).
fn entry_of(value: &Value) -> Result<EntryView, &'static str> {
    let object = value.as_object().ok_or("(record): expected an object,")?;
    let string = |name: &'static str, required: bool| match object.get(name) {
        None if !required => Ok(String::new()),
        Some(Value::String(text)) => Ok(text.clone()),
        _ => Err(name),
    };
    let option = |name: &'static str| match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        _ => Err(name),
    };
    let number = |name: &'static str| match object.get(name) {
        None => Ok(0),
        Some(value) => value.as_u64().ok_or(name),
    };
    let tags = match object.get("tags") {
        None => Vec::new(),
        Some(Value::Array(items)) => {
            items.iter().map(|item| item.as_str().map(str::to_owned)).collect::<Option<_>>().ok_or("tags")?
        }
        Some(_) => return Err("tags"),
    };
    Ok(EntryView {
        url: string("url", true)?,
        cache: string("cache", true)?,
        partition: string("partition", false)?,
        request: string("request", false)?,
        variables: option("variables")?,
        tags,
        size: number("size")?,
        stored_at: number("storedAt")?,
        used_at: number("usedAt")?,
        strategy: option("strategy")?,
    })
}

impl EntryView {
    /// Reads one record of the entry index (JSON text). A record that is not an object with a string
    /// `url` and `cache` is [`crate::Error::StoredState`] naming what was wrong; absent details (a record
    /// of an older build) are left empty.
    pub fn from_record_json(text: &str) -> Result<Self, crate::Error> {
        let wrong = |message: String| crate::Error::StoredState { what: "entry index record", message };
        let value = crate::json::from_str(text).map_err(|error| wrong(error.to_string()))?;
        let mut entry =
            entry_of(&value).map_err(|field| wrong(format!("{field}: invalid type or missing")))?;
        if entry.url.is_empty() {
            return Err(wrong("url: expected a non-empty string".to_owned()));
        }
        entry.partition = partition_of(&entry.url);
        if entry.request.is_empty() {
            entry.request = entry.url.clone();
        }
        Ok(entry)
    }
}

impl SnapshotQuery {
    /// How many entries a page holds: `limit`, [`DEFAULT_PAGE_SIZE`] for 0, at most [`MAX_PAGE_SIZE`].
    pub fn page_size(&self) -> u32 {
        match self.limit {
            0 => DEFAULT_PAGE_SIZE,
            limit => limit.min(MAX_PAGE_SIZE),
        }
    }

    /// Whether `entry` passes every filter of the query.
    pub fn matches(&self, entry: &EntryView) -> bool {
        let tag = self.tag.as_ref().is_none_or(|tag| entry.tags.contains(tag));
        // ASCII case only: operation names and URLs are ASCII, and Unicode case tables cost the worker KBs.
        let operation = self
            .operation
            .as_ref()
            .is_none_or(|text| entry.request.to_ascii_lowercase().contains(&text.to_ascii_lowercase()));
        let partition = self.partition.as_ref().is_none_or(|partition| *partition == entry.partition);
        tag && operation && partition
    }
}

fn operation_of(request: &QueuedRequest) -> (String, Option<String>) {
    let variables = match crate::graphql::parse_body(request.body.as_bytes()) {
        Ok(Some(graphql)) => short_variables(&graphql.variables),
        _ => None,
    };
    (request.operation_name.clone().unwrap_or_else(|| ANONYMOUS.to_owned()), variables)
}

impl QueueView {
    /// The queue as the panel shows it: ids, operations, short variables, attempts and times; never a
    /// header.
    pub fn of(state: &QueueState) -> Self {
        let pending = state
            .items
            .iter()
            .map(|item| {
                let (operation, variables) = operation_of(&item.request);
                QueuedView {
                    id: item.id,
                    operation,
                    variables,
                    attempts: item.attempts,
                    enqueued_at: item.enqueued_at,
                    next_attempt_at: item.next_attempt_at,
                }
            })
            .collect();
        let dead_letters = state
            .dead_letters
            .iter()
            .map(|letter| {
                let (operation, variables) = operation_of(&letter.item.request);
                DeadLetterView {
                    id: letter.item.id,
                    operation,
                    variables,
                    attempts: letter.item.attempts,
                    reason: letter.reason,
                    at: letter.at,
                }
            })
            .collect();
        QueueView { online: state.online, pending, in_flight: state.in_flight, dead_letters }
    }
}

impl IdentityView {
    /// The identity without its fingerprints: the partition and how many there are.
    pub fn of(identity: &Identity) -> Self {
        IdentityView {
            partition: identity.partition.clone(),
            vouched: u32::try_from(identity.credentials.len()).unwrap_or(u32::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// One member: absent, valid, `null`, or of another type.
    fn member(valid: serde_json::Value) -> impl Strategy<Value = Option<serde_json::Value>> {
        prop_oneof![
            4 => Just(Some(valid)),
            3 => Just(None),
            1 => Just(Some(json!(null))),
            1 => Just(Some(json!(true))),
            1 => Just(Some(json!([1]))),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        /// The hand reader of an index record accepts what `EntryView`'s derive accepts, and reads the
        /// same entry.
        #[test]
        fn index_records_read_as_the_derive_reads_them(
            text in member(json!("u")),
            cache in member(json!("c")),
            request in member(json!("Q")),
            variables in member(json!("{\"x\":1}")),
            tags in member(json!(["t"])),
            size in member(json!(7)),
            stored_at in member(json!(8)),
            strategy in member(json!("cache-first")),
        ) {
            let mut record = serde_json::Map::new();
            for (name, value) in [("url", text), ("cache", cache), ("request", request), ("variables", variables),
                ("tags", tags), ("size", size), ("storedAt", stored_at), ("strategy", strategy)] {
                if let Some(value) = value {
                    record.insert(name.into(), value);
                }
            }
            let text = serde_json::Value::Object(record).to_string();
            let ours = entry_of(&crate::json::from_str(&text).unwrap()).ok();
            let oracle = serde_json::from_str::<EntryView>(&text).ok();
            prop_assert_eq!(ours, oracle, "{}", text);
        }
    }
}
