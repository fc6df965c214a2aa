//! Which cache partition a request's entry lives in, so that one user is never answered with another
//! user's entries, even when a purge failed or a page forgot to mark its requests.
//!
//! The Service Worker decides this from what it sees itself: the request's `Authorization` header and
//! the [`Identity`] a page set with `set-identity` (persisted by the worker). The page's marker
//! `X-Cachet-Auth: 1` only ever makes a request *less* shareable; forgetting it never makes one more so.
//!
//! | `Authorization` on the request | identity known to the worker | marked `X-Cachet-Auth: 1` | partition |
//! |---|---|---|---|
//! | present, its fingerprint one the identity vouched for | `Some(user)` | any | [`Partition::User`]`(user)` |
//! | present, any other | any (none, or another user) | any | [`Partition::Uncached`]: network only |
//! | absent | `Some(user)` | any | [`Partition::User`]`(user)`: while someone is signed in, plain clients (a `fetch`, urql) are cached in that user's partition, never a shared one |
//! | absent | `None` | yes | [`Partition::Uncached`] |
//! | absent | `None` | no | [`Partition::Shared`] ([`ANONYMOUS_PARTITION`]): only while nobody is signed in |
//!
//! A token is bound to a user when the page says so: `set-identity {partition, authorization}` (the
//! [`auth_fingerprint`] of the page's current `Authorization`), and when the page answers a
//! `refresh-request` with a new header ([`Identity::vouch`]). The identity remembers the last
//! [`MAX_CREDENTIALS`] fingerprints of its user (other tabs may still hold the previous token for a
//! moment); another user's `set-identity` replaces them all. A token nobody vouched for is never stored
//! and never answered from a cache: at worst a request goes to the network, never to another user's data.
//!
//! The page client runs the same rule over its in-page cache, with its own current auth as the identity.

use crate::cache_key::{auth_fingerprint, ANONYMOUS_PARTITION};

pub use crate::protocol::headers::AUTH_HEADER;

/// How many `Authorization` fingerprints an [`Identity`] remembers.
pub const MAX_CREDENTIALS: usize = 8;

/// Where a request's cache entry lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Partition {
    /// Nobody is signed in and the request carries no credentials: the shared partition.
    Shared,
    /// This user's partition (a [`crate::cache_key::partition_id`]).
    User(String),
    /// Credentials the worker cannot tie to the signed-in user, or a marked request with no user known:
    /// never cached.
    Uncached,
}

impl Partition {
    /// The partition segment of the entry's cache URL; `None` when the request must not be cached.
    pub fn segment(&self) -> Option<&str> {
        match self {
            Partition::Shared => Some(ANONYMOUS_PARTITION),
            Partition::User(partition) => Some(partition),
            Partition::Uncached => None,
        }
    }
}

/// The signed-in user as the Service Worker knows it: their partition and the `Authorization` values
/// (by [`auth_fingerprint`]) a page vouched for as theirs, oldest first.
///
/// Persisted as `{"partition": "…", "credentials": ["…", …]}` ([`Identity::to_json`]), written and read
/// through [`crate::json`] rather than a derive: the config's reader already links that reader into the
/// worker, and a derived reader was a second one for two fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// [`crate::cache_key::partition_id`] of the user.
    pub partition: String,
    /// Fingerprints of this user's `Authorization` values, at most [`MAX_CREDENTIALS`], newest last.
    pub credentials: Vec<String>,
}

impl Identity {
    /// What `set-identity {partition, authorization}` makes of `current`: the same user keeps the
    /// fingerprints already vouched for and adds the new one; another user (or none) replaces them.
    pub fn after_set(
        current: Option<Identity>,
        partition: Option<String>,
        authorization: Option<String>,
    ) -> Option<Identity> {
        let partition = partition?;
        let mut identity = match current {
            Some(current) if current.partition == partition => current,
            _ => Identity { partition, credentials: Vec::new() },
        };
        if let Some(fingerprint) = authorization {
            identity.vouch(fingerprint);
        }
        Some(identity)
    }

    /// Records `fingerprint` as this user's (newest last), dropping the oldest past [`MAX_CREDENTIALS`].
    pub fn vouch(&mut self, fingerprint: String) {
        self.credentials.retain(|known| *known != fingerprint);
        self.credentials.push(fingerprint);
        let excess = self.credentials.len().saturating_sub(MAX_CREDENTIALS);
        self.credentials.drain(..excess);
    }

    /// Whether `fingerprint` was vouched for as this user's.
    pub fn knows(&self, fingerprint: &str) -> bool {
        self.credentials.iter().any(|known| known == fingerprint)
    }

    /// The persisted form.
    pub fn to_json(&self) -> String {
        // Members in serde_json's (sorted) order, as earlier versions wrote it.
        let mut text = String::new();
        crate::json::ObjectWriter::start(&mut text)
            .strings("credentials", &self.credentials)
            .string("partition", &self.partition)
            .end();
        text
    }

    /// Reads the persisted form back (`credentials` may be absent: none); a record that is not one is a
    /// [`crate::Error::StoredState`] naming what is wrong.
    pub fn from_json(text: &str) -> Result<Identity, crate::Error> {
        let stored = |message: String| crate::Error::StoredState { what: "identity", message };
        let value = crate::json::from_str(text).map_err(|error| stored(error.to_string()))?;
        let Some(partition) = value.get("partition").and_then(|partition| partition.as_str()) else {
            return Err(stored("expected an object with a string `partition`".into()));
        };
        let credentials = match value.get("credentials") {
            None => Vec::new(),
            Some(crate::json::Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| stored("`credentials`: expected a list of strings".into()))?,
            Some(_) => return Err(stored("`credentials`: expected a list of strings".into())),
        };
        let identity = Identity { partition: partition.to_owned(), credentials };
        identity.check().map_err(|error| stored(error.to_string()))?;
        Ok(identity)
    }

    /// Checks what a page sent or the store gave back: the partition is 1 to 64 ASCII letters, digits,
    /// `-` or `_` (it becomes a path segment of cache URLs), each credential a hex fingerprint.
    pub fn check(&self) -> Result<(), IdentityError> {
        let segment = |text: &str| {
            (1..=64).contains(&text.len())
                && text.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
        };
        let hex =
            |text: &str| (1..=64).contains(&text.len()) && text.bytes().all(|byte| byte.is_ascii_hexdigit());
        if !segment(&self.partition) {
            return Err(IdentityError::Partition { partition: self.partition.clone() });
        }
        match self.credentials.iter().find(|fingerprint| !hex(fingerprint)) {
            Some(bad) => Err(IdentityError::Credential { credential: bad.clone() }),
            None => Ok(()),
        }
    }
}

/// Why an [`Identity`] cannot be kept ([`Identity::check`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    /// The partition could not be a cache path segment.
    #[error("partition '{partition}': expected 1 to 64 of A-Z a-z 0-9 - _")]
    Partition {
        /// The partition as given.
        partition: String,
    },
    /// A credential is not a hex fingerprint.
    #[error("credential '{credential}': expected a hex fingerprint")]
    Credential {
        /// The credential as given.
        credential: String,
    },
}

/// The partition of a request, from its headers (looked up by lowercase name) and the current identity:
/// the table of this module.
pub fn partition_for(headers: &dyn Fn(&str) -> Option<String>, identity: Option<&Identity>) -> Partition {
    let authorization = headers("authorization").filter(|value| !value.trim().is_empty());
    let fingerprint = authorization.as_deref().map(auth_fingerprint);
    partition_of(fingerprint.as_deref(), is_marked(headers), identity)
}

/// The same rule from the [`auth_fingerprint`] of the request's `Authorization` (`None`: it carries
/// none) and whether it is marked: what a page's hand-over carries instead of the header
/// ([`crate::handover`]).
pub fn partition_of(fingerprint: Option<&str>, marked: bool, identity: Option<&Identity>) -> Partition {
    if let Some(fingerprint) = fingerprint {
        return match identity {
            Some(identity) if identity.knows(fingerprint) => Partition::User(identity.partition.clone()),
            _ => Partition::Uncached,
        };
    }
    match identity {
        Some(identity) => Partition::User(identity.partition.clone()),
        None if marked => Partition::Uncached,
        None => Partition::Shared,
    }
}

/// Whether the page marked the request as authenticated (`X-Cachet-Auth: 1` or `true`): the Service
/// Worker then runs refresh-and-retry on it (SPEC §5.6).
pub fn is_marked(headers: &dyn Fn(&str) -> Option<String>) -> bool {
    crate::protocol::headers::marker_is_set(headers(AUTH_HEADER).as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice(credentials: &[&str]) -> Identity {
        Identity {
            partition: "a1".into(),
            credentials: credentials.iter().map(|c| auth_fingerprint(c)).collect(),
        }
    }

    #[test]
    fn partitions_follow_the_credentials_the_identity_and_the_mark() {
        let signed_in = alice(&["Bearer A"]);
        // (X-Cachet-Auth, Authorization, identity, expected)
        type Row<'a> = (Option<&'a str>, Option<&'a str>, Option<&'a Identity>, Partition);
        let table: Vec<Row<'_>> = vec![
            (None, None, None, Partition::Shared),
            (Some("0"), None, None, Partition::Shared),
            (Some("1"), None, None, Partition::Uncached),
            (Some(" true "), None, None, Partition::Uncached),
            // Signed in: plain clients go to the user's partition, marked or not.
            (None, None, Some(&signed_in), Partition::User("a1".into())),
            (Some("1"), None, Some(&signed_in), Partition::User("a1".into())),
            // The user's own token.
            (None, Some("Bearer A"), Some(&signed_in), Partition::User("a1".into())),
            (Some("1"), Some("Bearer A"), Some(&signed_in), Partition::User("a1".into())),
            // Anyone else's token, whatever the marker says: never cached.
            (None, Some("Bearer B"), Some(&signed_in), Partition::Uncached),
            (Some("1"), Some("Bearer B"), Some(&signed_in), Partition::Uncached),
            (None, Some("Bearer A"), None, Partition::Uncached),
            (Some("0"), Some("Bearer A"), None, Partition::Uncached),
            // A blank header is no credential.
            (None, Some("  "), None, Partition::Shared),
        ];
        for (mark, authorization, identity, expected) in table {
            let headers = |name: &str| match name {
                AUTH_HEADER => mark.map(str::to_owned),
                "authorization" => authorization.map(str::to_owned),
                _ => None,
            };
            assert_eq!(
                partition_for(&headers, identity),
                expected,
                "{mark:?} {authorization:?} {identity:?}"
            );
        }
        assert_eq!(Partition::Shared.segment(), Some(ANONYMOUS_PARTITION));
        assert_eq!(Partition::Uncached.segment(), None);
    }

    #[test]
    fn set_identity_keeps_the_same_users_tokens_and_drops_another_users() {
        let fingerprint = |token: &str| auth_fingerprint(&format!("Bearer {token}"));
        let first = Identity::after_set(None, Some("a1".into()), Some(fingerprint("A1")));
        let refreshed = Identity::after_set(first, Some("a1".into()), Some(fingerprint("A2")));
        let refreshed = refreshed.expect("alice");
        assert!(refreshed.knows(&fingerprint("A1")) && refreshed.knows(&fingerprint("A2")));
        let bob = Identity::after_set(Some(refreshed), Some("b2".into()), Some(fingerprint("B1")));
        let bob = bob.expect("bob");
        assert_eq!(bob.partition, "b2");
        assert!(!bob.knows(&fingerprint("A1")) && !bob.knows(&fingerprint("A2")));
        assert!(bob.knows(&fingerprint("B1")));
        assert_eq!(Identity::after_set(Some(bob), None, Some(fingerprint("B1"))), None);
    }

    #[test]
    fn an_identity_remembers_the_newest_credentials_only() {
        let mut identity = Identity { partition: "a1".into(), credentials: Vec::new() };
        for token in 0..(MAX_CREDENTIALS + 3) {
            identity.vouch(format!("{token:016x}"));
        }
        identity.vouch(format!("{:016x}", MAX_CREDENTIALS + 2)); // again: no duplicate
        assert_eq!(identity.credentials.len(), MAX_CREDENTIALS);
        assert!(!identity.knows(&format!("{:016x}", 2)));
        assert!(identity.knows(&format!("{:016x}", 3)));
        assert_eq!(identity.credentials.last(), Some(&format!("{:016x}", MAX_CREDENTIALS + 2)));
    }

    #[test]
    fn a_stored_identity_round_trips_and_a_corrupt_one_is_a_typed_error() {
        let identity = alice(&["Bearer A"]);
        assert_eq!(Identity::from_json(&identity.to_json()), Ok(identity));
        let corrupt_records = [
            "",
            "\"a1\"",
            "{\"partition\":7}",
            "{\"partition\":\"../x\"}",
            "{\"partition\":\"a1\",\"credentials\":[\"<>\"]}",
        ];
        for corrupt in corrupt_records {
            match Identity::from_json(corrupt) {
                Err(crate::Error::StoredState { what: "identity", .. }) => {}
                other => panic!("{corrupt}: {other:?}"),
            }
        }
    }

    /// The reader by hand against serde's derive, the oracle (the derived reader it replaced): the same
    /// records read, the same refused. Where they differ by design: the derive also took a struct as a
    /// list (`["a1", []]`) and refused a repeated key; neither is ever written.
    #[test]
    fn the_identity_reader_agrees_with_serdes_derive() {
        #[derive(serde::Deserialize, serde::Serialize, PartialEq, Debug)]
        struct Oracle {
            partition: String,
            #[serde(default)]
            credentials: Vec<String>,
        }
        let records = [
            r#"{"partition":"a1","credentials":[]}"#,
            r#"{"partition":"a1"}"#,
            r#"{"credentials":[],"partition":"a-_1"}"#,
            r#"{"partition":"a1","credentials":["ab12","cd34"],"extra":{"x":[1]}}"#,
            r#"{"partition":"a1","credentials":null}"#,
            r#"{"partition":"a1","credentials":"ab12"}"#,
            r#"{"partition":"a1","credentials":[7]}"#,
            r#"{"partition":null}"#,
            r#"{}"#,
            r#"[]"#,
            r#"null"#,
            r#"{"partition":"a1""#,
            r#" {"partition" : "a1" , "credentials" : [ "ab" ] } "#,
        ];
        for record in records {
            let oracle = serde_json::from_str::<Oracle>(record).ok().and_then(|oracle| {
                let identity = Identity { partition: oracle.partition, credentials: oracle.credentials };
                identity.check().ok().map(|()| identity)
            });
            assert_eq!(Identity::from_json(record).ok(), oracle, "{record}");
        }
        let identity = alice(&["Bearer A", "Bearer B"]);
        let written = serde_json::to_value(Oracle {
            partition: identity.partition.clone(),
            credentials: identity.credentials.clone(),
        });
        let ours: serde_json::Value = serde_json::from_str(&identity.to_json()).unwrap_or_default();
        assert_eq!(Some(ours), written.ok(), "the same record written");
    }
}
