//! Cache tags: the names under which GraphQL query responses are stored and by which mutations remove
//! them.
//!
//! # A tag
//!
//! A tag is 1 to [`MAX_TAG_LEN`] characters of `[a-z0-9:_.-]`. Tags are case-insensitive: input is
//! trimmed and ASCII-lowercased before it is checked, so `Notes` and `notes` are one tag. One entry or
//! one mutation carries at most [`MAX_TAGS`] tags from any one source.
//!
//! # Where tags come from
//!
//! | Source | Travels as | Applies to | Effect |
//! |---|---|---|---|
//! | operation name | derived by [`query_tags`] / [`invalidation_tags`] | query, mutation | auto-tags (rules in [`mod@derive`]) |
//! | `tags` option of `queryGql` | request header `X-Cachet-Tags` | query | *replaces* the auto-tags |
//! | `invalidate` option of `mutateGql` | request header `X-Cachet-Invalidate` | mutation | *added* to the derived tags |
//! | the server | response header `X-SW-Cache-Tags` | query response | *added* to the entry's tags |
//!
//! The option values travel as request headers so that the GraphQL body stays standard. The Service
//! Worker strips every `X-Cachet-*` header before the request goes to the network. All three headers use
//! one syntax, parsed by [`parse_tag_list`]: comma-separated tags, each trimmed; an empty or
//! whitespace-only value is the empty list; an empty item (`a,,b`, `a,`), an over-long tag, a character
//! outside the tag alphabet, or more than [`MAX_TAGS`] items is a [`TagError`]. Repeated tags are kept once.

pub mod derive;

pub use derive::{invalidation_tags, query_tags, split_words};

/// Longest tag, in bytes.
pub const MAX_TAG_LEN: usize = 64;
/// Most tags one header (or one derivation) may carry.
pub const MAX_TAGS: usize = 32;
pub use crate::protocol::headers::CACHE_TAGS_HEADER;
pub use crate::protocol::headers::INVALIDATE_HEADER;
pub use crate::protocol::headers::TAGS_HEADER;

/// A tag or tag list is not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TagError {
    /// An item of the list is empty.
    #[error("tag list item {index} is empty")]
    Empty {
        /// Zero-based position of the item.
        index: usize,
    },
    /// A tag is longer than [`MAX_TAG_LEN`].
    #[error("tag {} is {len} bytes long, the limit is {MAX_TAG_LEN}", crate::json::quoted(.tag))]
    TooLong {
        /// The first [`MAX_TAG_LEN`] bytes of the tag.
        tag: String,
        /// Its full length in bytes.
        len: usize,
    },
    /// A tag holds a character outside `[a-z0-9:_.-]` (after lowercasing).
    #[error("tag {} holds {}: tags are made of a-z, 0-9, ':', '_', '.', '-'", crate::json::quoted(.tag), crate::json::quoted(&.character.to_string()))]
    InvalidCharacter {
        /// The tag.
        tag: String,
        /// The first offending character.
        character: char,
    },
    /// The list holds more than [`MAX_TAGS`] items.
    #[error("tag list holds {count} tags, the limit is {MAX_TAGS}")]
    TooMany {
        /// How many items it holds.
        count: usize,
    },
}

/// Checks one tag and returns its normal form (trimmed, lowercase).
pub fn normalize_tag(raw: &str) -> Result<String, TagError> {
    let tag = raw.trim().to_ascii_lowercase();
    if tag.is_empty() {
        return Err(TagError::Empty { index: 0 });
    }
    if tag.len() > MAX_TAG_LEN {
        let mut cut = MAX_TAG_LEN;
        while !tag.is_char_boundary(cut) {
            cut -= 1;
        }
        let len = tag.len();
        let mut tag = tag;
        tag.truncate(cut); // at a char boundary (above); not sliced: see derive::invalidation_tags
        return Err(TagError::TooLong { tag, len });
    }
    if let Some(character) = tag.chars().find(|character| !is_tag_char(*character)) {
        return Err(TagError::InvalidCharacter { tag, character });
    }
    Ok(tag)
}

/// Whether `character` belongs to the tag alphabet `[a-z0-9:_.-]`.
pub fn is_tag_char(character: char) -> bool {
    matches!(character, 'a'..='z' | '0'..='9' | ':' | '_' | '.' | '-')
}

/// Parses a header value of comma-separated tags (`X-SW-Cache-Tags`, `X-Cachet-Tags`,
/// `X-Cachet-Invalidate`).
pub fn parse_tag_list(value: &str) -> Result<Vec<String>, TagError> {
    if value.trim().is_empty() {
        return Ok(Vec::new());
    }
    let count = value.split(',').count();
    if count > MAX_TAGS {
        return Err(TagError::TooMany { count });
    }
    normalize_tags(value.split(','), count)
}

/// Each of `items` normalised ([`normalize_tag`]; an empty one named by its position), duplicates
/// dropped, first occurrence first; `count` is how many there are (the list's capacity).
pub fn normalize_tags<'a>(
    items: impl Iterator<Item = &'a str>,
    count: usize,
) -> Result<Vec<String>, TagError> {
    let mut tags: Vec<String> = Vec::with_capacity(count);
    for (index, item) in items.enumerate() {
        let tag = normalize_tag(item).map_err(|error| match error {
            TagError::Empty { .. } => TagError::Empty { index },
            other => other,
        })?;
        if !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    Ok(tags)
}

/// Writes tags as a header value (`a, b`); the inverse of [`parse_tag_list`] for valid tags.
pub fn format_tag_list(tags: &[String]) -> String {
    tags.join(", ")
}

/// The union of two tag lists, in order, each tag once.
pub fn merge_tags(first: &[String], second: &[String]) -> Vec<String> {
    let mut merged: Vec<String> = Vec::with_capacity(first.len() + second.len());
    for tag in first.iter().chain(second) {
        if !merged.contains(tag) {
            merged.push(tag.clone());
        }
    }
    merged
}

/// Whether an entry carrying `entry_tags` is removed by invalidating `invalidated`.
pub fn is_hit(entry_tags: &[String], invalidated: &[String]) -> bool {
    entry_tags.iter().any(|tag| invalidated.contains(tag))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn parses_tag_lists_as_a_table() {
        let ok: &[(&str, &[&str])] = &[
            ("", &[]),
            ("   ", &[]),
            ("notes", &["notes"]),
            (" Notes , note ", &["notes", "note"]),
            ("a,b,a", &["a", "b"]),
            ("user:42,todo-item,v1.2_x", &["user:42", "todo-item", "v1.2_x"]),
        ];
        for (value, expected) in ok {
            assert_eq!(parse_tag_list(value).unwrap(), *expected, "value {value:?}");
        }
        let too_long = "x".repeat(MAX_TAG_LEN + 1);
        let too_many = vec!["t"; MAX_TAGS + 1].join(",");
        let errors: &[(&str, TagError)] = &[
            ("a,,b", TagError::Empty { index: 1 }),
            ("a,", TagError::Empty { index: 1 }),
            (",a", TagError::Empty { index: 0 }),
            ("a, ,b", TagError::Empty { index: 1 }),
            (&too_long, TagError::TooLong { tag: "x".repeat(MAX_TAG_LEN), len: MAX_TAG_LEN + 1 }),
            ("a b", TagError::InvalidCharacter { tag: "a b".into(), character: ' ' }),
            ("notes;drop", TagError::InvalidCharacter { tag: "notes;drop".into(), character: ';' }),
            ("café", TagError::InvalidCharacter { tag: "café".into(), character: 'é' }),
            (&too_many, TagError::TooMany { count: MAX_TAGS + 1 }),
        ];
        for (value, expected) in errors {
            assert_eq!(parse_tag_list(value).as_ref(), Err(expected), "value {value:?}");
        }
        assert_eq!(parse_tag_list(&vec!["t"; MAX_TAGS].join(",")).unwrap(), ["t"]);
        assert_eq!(parse_tag_list(&"x".repeat(MAX_TAG_LEN)).unwrap().len(), 1);
    }

    #[test]
    fn an_over_long_multibyte_tag_is_cut_on_a_char_boundary() {
        let tag = "é".repeat(40);
        assert!(matches!(normalize_tag(&tag), Err(TagError::TooLong { len: 80, .. })));
    }

    #[test]
    fn format_is_the_inverse_of_parse_and_merge_keeps_order() {
        let tags = vec!["b".to_owned(), "a".to_owned()];
        assert_eq!(parse_tag_list(&format_tag_list(&tags)).unwrap(), tags);
        assert_eq!(merge_tags(&tags, &["a".into(), "c".into()]), ["b", "a", "c"]);
        assert!(is_hit(&tags, &["a".into()]));
        assert!(!is_hit(&tags, &["dashboard".into()]));
    }
}
