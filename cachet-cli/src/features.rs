//! Which cargo features of `cachet-kit` an app's config needs: the worker links server push only with
//! `push` and the page links auth only with `auth` (their size is a headline figure), so a config that
//! turns one on needs the feature in the app's `Cargo.toml`. One rule, used by `cachet init --trunk` (the
//! dependency it adds), `cachet add auth` and `cachet add push` (the feature they add to an existing
//! dependency) and `cachet doctor` (a dependency without it).

use std::path::Path;

use cachet_core::config::Config;
use toml_edit::{Array, DocumentMut, Item, Value};

use crate::{CliError, CARGO_TOML};

/// The `cachet-kit` features `config` needs.
pub fn kit_features(config: &Config) -> Vec<&'static str> {
    let mut features = Vec::new();
    if config.features.auth.enabled {
        features.push("auth");
    }
    if config.features.push.enabled {
        features.push("push");
    }
    if !config.features.graphql.persisted_queries.endpoints.is_empty() {
        features.push("persisted-queries");
    }
    features
}

/// The features of `needed` that the manifest's `cachet-kit` dependency does not turn on; `None` when it
/// has no `cachet-kit` dependency (nothing to check).
pub(crate) fn missing_kit_features(
    manifest: &DocumentMut,
    needed: &[&'static str],
) -> Option<Vec<&'static str>> {
    let kit = manifest.get("dependencies")?.get("cachet-kit")?;
    let listed: Vec<&str> = kit
        .get("features")
        .and_then(Item::as_array)
        .map(|features| features.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    Some(needed.iter().copied().filter(|feature| !listed.contains(feature)).collect())
}

/// Adds `needed` to the features of the app's `cachet-kit` dependency (a `"0.1"` version becomes a
/// table); true when `Cargo.toml` was written. No manifest, or no `cachet-kit` in it: nothing to do.
pub(crate) fn add_kit_features(dir: &Path, needed: &[&'static str]) -> Result<bool, CliError> {
    let path = dir.join(CARGO_TOML);
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(false) };
    let broken = |message: String| CliError::App { path: path.clone(), message };
    let mut manifest: DocumentMut =
        text.parse().map_err(|error| broken(format!("not valid TOML: {error}")))?;
    let Some(missing) = missing_kit_features(&manifest, needed) else { return Ok(false) };
    if missing.is_empty() {
        return Ok(false);
    }
    let Some(kit) = manifest.get_mut("dependencies").and_then(|deps| deps.get_mut("cachet-kit")) else {
        return Ok(false);
    };
    if let Some(version) = kit.as_str().map(str::to_owned) {
        let mut table = toml_edit::InlineTable::new();
        table.insert("version", version.into());
        *kit = toml_edit::value(table);
    }
    let table = kit
        .as_table_like_mut()
        .ok_or_else(|| broken("dependencies.cachet-kit: expected a version or a table".to_owned()))?;
    let features = table.entry("features").or_insert(toml_edit::value(Array::new()));
    let features = features
        .as_array_mut()
        .ok_or_else(|| broken("dependencies.cachet-kit.features: expected an array".to_owned()))?;
    for feature in missing {
        features.push(feature);
    }
    std::fs::write(&path, manifest.to_string())
        .map_err(|source| CliError::Write { path: path.clone(), source })?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_needs_the_features_of_what_it_turns_on() {
        let needs = |text: &str| kit_features(&Config::from_json_str(text).expect("a config"));
        assert_eq!(needs("{}"), Vec::<&str>::new());
        let all = r#"{"features": {"auth": {"enabled": true}, "push": {"enabled": true},
            "graphql": {"enabled": true, "persistedQueries": {"endpoints": ["/graphql"]}}}}"#;
        assert_eq!(needs(all), ["auth", "push", "persisted-queries"]);
        let listed_none =
            r#"{"features": {"graphql": {"enabled": true, "persistedQueries": {"endpoints": []}}}}"#;
        assert_eq!(needs(listed_none), Vec::<&str>::new());
    }
}
