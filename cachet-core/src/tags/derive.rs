//! Tags derived from operation names (SPEC §4, rules 1, 2, 5, 6).
//!
//! # Rules
//!
//! 1. **Words.** The operation name is split into words: `_` separates words and is dropped; a capital
//!    after a lowercase letter or digit starts a word (`getNotes` → `get|Notes`); in a run of capitals the
//!    last one starts a word when a lowercase letter follows (`HTMLPage` → `HTML|Page`); digits stay with
//!    the word before them (`V2Users` → `V2|Users`). Words are lowercased.
//! 2. **Suffix.** A last word `query`, `mutation` or `subscription` is dropped when other words remain
//!    (`GetNotesQuery` reads as `GetNotes`).
//! 3. **Verb.** A *query* whose first word is one of the query verbs
//!    `get list fetch load find search query read watch lookup all` drops that word; a query without one
//!    keeps every word (`Dashboard`, `CurrentUser`). A *mutation* always drops its first word, the verb,
//!    whatever it is (`CreateNote`, `LikePost`, `ArchiveTodoItem`); a one-word mutation (`Logout`)
//!    derives nothing.
//! 4. **Qualifier.** The noun phrase ends before the first of `by for with of from in on at` that is not
//!    its first word (`GetNotesByAuthor` → `notes`, `UpdateNoteForUser` → `note`).
//! 5. **Noun tag.** The remaining words joined with `-` form the noun tag (`TodoItems` → `todo-items`).
//! 6. **Query tags** are the noun tag plus the lowercased operation name itself (`GetNotes` → `notes`,
//!    `getnotes`), so a query is "tagged with its operation name" and an `invalidate: ["GetNotes"]`
//!    removes exactly that query.
//! 7. **Mutation tags** are the noun tag plus the singular and plural forms of its last word
//!    (`CreateNote` → `note`, `notes`; `DeleteTodoItems` → `todo-item`, `todo-items`). Inflection uses
//!    simple English rules:
//!
//!    | Plural ending | Singular candidates | | Singular ending | Plural |
//!    |---|---|---|---|---|
//!    | `-ies` | `-y` and `-ie` (`categories` → `category`, `movies` → `movie`) | | consonant + `y` | `-ies` |
//!    | `-ses -xes -zes -ches -shes` | without `es` and without `s` (`boxes` → `box`, `caches` → `cache`) | | `s x z ch sh` | `+es` |
//!    | `-ss -us -is` | itself (`class`, `status`, `analysis`) | | anything else | `+s` |
//!    | other `-s` | without `s` | | | |
//!    | irregular: `people children men women` | `person child man woman` | | | |
//!
//!    Where English is ambiguous both candidates are kept: a stray extra tag costs nothing, a missing one
//!    leaves stale data in the cache.
//! 8. **Never.** Anonymous operations and subscriptions get no tags. Invalidation covers only the
//!    top-level operation name, so `UpdateUser` (→ `user`, `users`) does not touch a query tagged
//!    `dashboard`. A derived tag longer than [`super::MAX_TAG_LEN`] is dropped.
//!
//! Both functions return their tags sorted, each once.

use super::MAX_TAG_LEN;
use crate::graphql::OperationKind;

const QUERY_VERBS: &[&str] =
    &["get", "list", "fetch", "load", "find", "search", "query", "read", "watch", "lookup", "all"];
const SUFFIXES: &[&str] = &["query", "mutation", "subscription"];
const QUALIFIERS: &[&str] = &["by", "for", "with", "of", "from", "in", "on", "at"];
const IRREGULAR: &[(&str, &str)] =
    &[("person", "people"), ("child", "children"), ("man", "men"), ("woman", "women")];

/// Splits an operation name into lowercase words (rule 1).
pub fn split_words(name: &str) -> Vec<String> {
    let characters: Vec<char> = name.chars().collect();
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    for (index, &character) in characters.iter().enumerate() {
        if !character.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        if character.is_ascii_uppercase() && !current.is_empty() {
            let previous = characters[index - 1];
            let next_is_lower = characters.get(index + 1).is_some_and(char::is_ascii_lowercase);
            if previous.is_ascii_lowercase()
                || previous.is_ascii_digit()
                || (previous.is_ascii_uppercase() && next_is_lower)
            {
                words.push(std::mem::take(&mut current));
            }
        }
        current.push(character.to_ascii_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// The auto-tags of an operation a query carries (rule 6); empty for anonymous operations and
/// subscriptions, and for mutations (see [`invalidation_tags`]).
pub fn query_tags(kind: OperationKind, operation_name: Option<&str>) -> Vec<String> {
    let Some(name) = operation_name.filter(|_| kind == OperationKind::Query) else {
        return Vec::new();
    };
    let mut words = split_words(name);
    strip_suffix(&mut words);
    if words.len() > 1 && QUERY_VERBS.contains(&words[0].as_str()) {
        words.remove(0);
    }
    let mut tags = vec![name.to_ascii_lowercase()];
    tags.extend(noun_phrase(words));
    finish(tags)
}

/// The tags a mutation invalidates by its name alone (rule 7); empty for anything but a named mutation.
pub fn invalidation_tags(kind: OperationKind, operation_name: Option<&str>) -> Vec<String> {
    let Some(name) = operation_name.filter(|_| kind == OperationKind::Mutation) else {
        return Vec::new();
    };
    let mut words = split_words(name);
    strip_suffix(&mut words);
    if words.len() < 2 {
        return Vec::new();
    }
    words.remove(0);
    let Some(phrase) = noun_phrase(words) else {
        return Vec::new();
    };
    // Split, not sliced: a `str` slice links the panic that formats a `char` (about 2.5 KB of wasm).
    let (stem, dash, last) = match phrase.rsplit_once('-') {
        Some((stem, last)) => (stem, "-", last),
        None => ("", "", phrase.as_str()),
    };
    let mut tags = vec![phrase.clone()];
    for singular in singulars(last) {
        tags.push(format!("{stem}{dash}{}", plural(&singular)));
        tags.push(format!("{stem}{dash}{singular}"));
    }
    finish(tags)
}

fn strip_suffix(words: &mut Vec<String>) {
    if words.len() > 1 && words.last().is_some_and(|last| SUFFIXES.contains(&last.as_str())) {
        words.pop();
    }
}

fn noun_phrase(mut words: Vec<String>) -> Option<String> {
    if let Some(cut) = words.iter().skip(1).position(|word| QUALIFIERS.contains(&word.as_str())) {
        words.truncate(cut + 1);
    }
    (!words.is_empty()).then(|| words.join("-"))
}

fn finish(mut tags: Vec<String>) -> Vec<String> {
    tags.retain(|tag| !tag.is_empty() && tag.len() <= MAX_TAG_LEN);
    crate::sort::sort_by(&mut tags, |left, right| left.cmp(right));
    tags.dedup();
    tags
}

/// The singular forms a word may have (the word itself when it already looks singular).
fn singulars(word: &str) -> Vec<String> {
    if let Some((singular, _)) = IRREGULAR.iter().find(|(_, plural)| *plural == word) {
        return vec![(*singular).to_owned()];
    }
    if let Some(stem) = word.strip_suffix("ies").filter(|stem| !stem.is_empty()) {
        return vec![format!("{stem}y"), format!("{stem}ie")];
    }
    if ["ses", "xes", "zes", "ches", "shes"].iter().any(|ending| word.ends_with(ending)) {
        if let (Some(without_es), Some(without_s)) = (word.strip_suffix("es"), word.strip_suffix('s')) {
            return vec![without_es.to_owned(), without_s.to_owned()];
        }
    }
    if ["ss", "us", "is"].iter().any(|ending| word.ends_with(ending))
        || !word.ends_with('s')
        || word.len() < 2
    {
        return vec![word.to_owned()];
    }
    vec![word.strip_suffix('s').unwrap_or(word).to_owned()]
}

/// The plural of a singular word.
fn plural(word: &str) -> String {
    if let Some((_, plural)) = IRREGULAR.iter().find(|(singular, _)| *singular == word) {
        return (*plural).to_owned();
    }
    if let Some(stem) = word.strip_suffix('y') {
        if stem.chars().last().is_some_and(|before| !"aeiou".contains(before)) {
            return format!("{stem}ies");
        }
    }
    if ["s", "x", "z", "ch", "sh"].iter().any(|ending| word.ends_with(ending)) {
        return format!("{word}es");
    }
    format!("{word}s")
}
