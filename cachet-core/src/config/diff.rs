//! Where two configs differ, key by key: the Service Worker compares the config a page sends it (the
//! page's config as [`Config::to_json`] writes it, in its `config-request`) to the one it runs on, and
//! the page names the keys it lists on the console when they disagree (the page then follows the
//! worker's, which holds the data). Both are written by [`Config::to_json`] and read back with
//! [`crate::json`]. The worker lists them ([`Config::differences_from_page`]) so that the listing is not
//! in every page's wasm.

use crate::json::{self, Value};

use super::Config;

/// One key whose value differs: its JSON path and both values as JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigDifference {
    /// The key, e.g. `features.graphql.enabled`.
    pub path: String,
    /// Its value in the config compared (`Config::differences`' `self`).
    pub here: String,
    /// Its value in the other config.
    pub there: String,
}

impl std::fmt::Display for ConfigDifference {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}: {} here, {} there", self.path, self.here, self.there)
    }
}

impl Config {
    /// Every key whose value differs between `self` and `other`, sorted by path; empty when they are
    /// equal.
    pub fn differences(&self, other: &Config) -> Vec<ConfigDifference> {
        let mut found = Vec::new();
        if self == other {
            return found;
        }
        // Each text is this crate's own writing of a config: it reads back.
        let (here, there) = (json::from_str(&self.to_json()), json::from_str(&other.to_json()));
        if let (Ok(here), Ok(there)) = (here, there) {
            walk(String::new(), &here, &there, &mut found);
        }
        // Through the one sort of the wasm (`crate::sort`), not a copy of its own.
        crate::sort::sort_by(&mut found, |left, right| left.path.cmp(&right.path));
        found
    }
}

impl Config {
    /// What a worker running on `self` answers a page whose config, as cachet writes it, is `page`
    /// ([`crate::protocol::SwToPage::Config`]'s `differences`): one `path: here, there` line per key that
    /// differs, here the page's; a page config that does not read is one line naming why.
    pub fn differences_from_page(&self, page: &str) -> Vec<String> {
        match Config::from_json_str(page) {
            Ok(page) => page.differences(self).iter().map(ToString::to_string).collect(),
            Err(error) => vec![format!("the page's config did not read ({error})")],
        }
    }
}

fn walk(path: String, here: &Value, there: &Value, found: &mut Vec<ConfigDifference>) {
    let child = |key: &str| if path.is_empty() { key.to_owned() } else { [path.as_str(), key].join(".") };
    match (here, there) {
        (Value::Object(left), Value::Object(right)) => {
            for (key, value) in left.iter() {
                walk(child(key), value, right.get(key).unwrap_or(&Value::Null), found);
            }
            for (key, value) in right.iter().filter(|(key, _)| !left.contains_key(key)) {
                walk(child(key), &Value::Null, value, found);
            }
        }
        _ if here != there => {
            let (mut here_text, mut there_text) = (String::new(), String::new());
            json::write(&mut here_text, here);
            json::write(&mut there_text, there);
            found.push(ConfigDifference { path, here: here_text, there: there_text })
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_configs_have_no_difference_and_others_name_each_key() {
        let page = Config::default();
        assert!(page.differences(&Config::default()).is_empty());
        let worker = Config::from_json_str(
            r#"{"features": {"auth": {"enabled": true, "type": "bearer"}, "graphql": {"enabled": true}},
                "cache": {"maxEntries": 50}}"#,
        )
        .expect("valid");
        let named: Vec<String> = page.differences(&worker).iter().map(ToString::to_string).collect();
        assert_eq!(
            named,
            [
                "cache.maxEntries: 200 here, 50 there",
                "features.auth.enabled: false here, true there",
                "features.auth.type: \"cookie\" here, \"bearer\" there",
                "features.graphql.enabled: false here, true there",
            ]
        );
    }

    #[test]
    fn a_worker_lists_where_a_pages_written_config_differs_from_its_own() {
        let worker = Config::from_json_str(r#"{"cache": {"maxEntries": 50}}"#).expect("valid");
        assert_eq!(
            worker.differences_from_page(&Config::default().to_json()),
            ["cache.maxEntries: 200 here, 50 there"]
        );
        assert!(worker.differences_from_page(&worker.to_json()).is_empty());
        let unread = worker.differences_from_page("{\"cache\": 3}");
        assert_eq!(unread.len(), 1);
        assert!(
            unread[0].starts_with("the page's config did not read (") && unread[0].contains("cache"),
            "{unread:?}"
        );
    }
}
