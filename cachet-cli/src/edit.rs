//! `cachet init`, `cachet add auth`, `cachet add graphql`, `cachet add push`: create or change `cachet.config.json`, then
//! regenerate. Each is idempotent: a second run writes nothing.
//!
//! | command | what it does to the config |
//! |---|---|
//! | `init` | writes `{"features": {"graphql": {"enabled": false, "endpoints": ["/graphql"]}}}` when there is no config (auth is absent from it, as SPEC §2 says); an existing config is kept |
//! | `add auth [--type cookie\|bearer\|custom]` | `features.auth.enabled = true`; `type` set to `--type` when given, else kept when set, else `cookie`; `routePaths` stay when set, else the four defaults |
//! | `add graphql` | `features.graphql.enabled = true`; `endpoints` stay when set, else `["/graphql"]` |
//! | `add push` | `features.push.enabled = true` (server push, SPEC §5.8: cookie auth or none); a `notification` stays as set |
//!
//! The edited config is validated by `cachet-core` before it is written: a broken config is an error
//! naming the key, and the file on disk stays as it was. An edit keeps the file as its author wrote it
//! (key order, indentation, anything else around the keys it changes): the changed keys are set in
//! place and new ones appended, through `jsonc-parser`'s concrete syntax tree.

use std::path::Path;

use cachet_core::config::{AuthType, Config, CONFIG_FILE_NAME, DEFAULT_ENDPOINTS, DEFAULT_ROUTE_PATHS};
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::{json, Map, Value};

use crate::{generate, CliError};

/// What a command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Whether `cachet.config.json` was written.
    pub config_written: bool,
    /// Generated files whose content changed.
    pub generated: Vec<&'static str>,
    /// Whether `Cargo.toml` was written: the `cachet-kit` features the config now needs were added to
    /// its dependency ([`crate::kit_features`]).
    pub manifest_written: bool,
}

/// `cachet init`.
pub fn init(dir: &Path) -> Result<Outcome, CliError> {
    let path = dir.join(CONFIG_FILE_NAME);
    let config_written = !path.exists();
    if config_written {
        let initial =
            json!({ "features": { "graphql": { "enabled": false, "endpoints": DEFAULT_ENDPOINTS } } });
        write_config(dir, &initial)?;
    }
    Ok(Outcome { config_written, generated: generate(dir)?, manifest_written: false })
}

/// `cachet add auth [--type]`: `auth_type` when given, else the config's, else cookie.
pub fn add_auth(dir: &Path, auth_type: Option<AuthType>) -> Result<Outcome, CliError> {
    edit(dir, "auth", |auth| {
        auth.insert("enabled".into(), Value::Bool(true));
        match auth_type {
            Some(auth_type) => {
                auth.insert("type".into(), json!(auth_type.as_str()));
            }
            None => {
                auth.entry("type").or_insert_with(|| json!("cookie"));
            }
        }
        auth.entry("routePaths").or_insert_with(|| json!(DEFAULT_ROUTE_PATHS));
    })
}

/// `cachet add graphql`.
pub fn add_graphql(dir: &Path) -> Result<Outcome, CliError> {
    edit(dir, "graphql", |graphql| {
        graphql.insert("enabled".into(), Value::Bool(true));
        graphql.entry("endpoints").or_insert_with(|| json!(DEFAULT_ENDPOINTS));
    })
}

/// `cachet add push`.
pub fn add_push(dir: &Path) -> Result<Outcome, CliError> {
    edit(dir, "push", |push| {
        push.insert("enabled".into(), Value::Bool(true));
    })
}

/// Applies `change` to `features.<feature>` of the config, validates, writes when different, regenerates.
fn edit(
    dir: &Path,
    feature: &str,
    change: impl FnOnce(&mut Map<String, Value>),
) -> Result<Outcome, CliError> {
    let path = dir.join(CONFIG_FILE_NAME);
    let text = std::fs::read_to_string(&path)
        .map_err(|source| CliError::ReadConfig { path: path.clone(), source })?;
    // Validate first: a broken config is reported by key, not half-edited.
    Config::from_json_str(&text).map_err(|source| CliError::InvalidConfig { path: path.clone(), source })?;
    let before: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let mut value = before.clone();
    let section = value
        .as_object_mut()
        .and_then(|root| root.entry("features").or_insert_with(|| json!({})).as_object_mut())
        .and_then(|features| features.entry(feature).or_insert_with(|| json!({})).as_object_mut());
    // The config validated, so `features` and `features.<feature>` are objects when present.
    let Some(section) = section else {
        return Err(CliError::Edit { path, message: format!("features.{feature}: expected an object") });
    };
    change(section);
    let config_written = value != before;
    if config_written {
        let edited = edited_in_place(&text, feature, &value).unwrap_or_else(|| pretty(&value));
        write_text(dir, &edited)?;
    }
    let generated = generate(dir)?;
    let config = crate::read_config(dir)?;
    let manifest_written = crate::features::add_kit_features(dir, &crate::kit_features(&config))?;
    Ok(Outcome { config_written, generated, manifest_written })
}

fn write_config(dir: &Path, value: &Value) -> Result<(), CliError> {
    write_text(dir, &pretty(value))
}

fn pretty(value: &Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(value).unwrap_or_default())
}

fn write_text(dir: &Path, text: &str) -> Result<(), CliError> {
    let path = dir.join(CONFIG_FILE_NAME);
    Config::from_json_str(text).map_err(|source| CliError::InvalidConfig { path: path.clone(), source })?;
    std::fs::create_dir_all(dir).map_err(|source| CliError::Write { path: path.clone(), source })?;
    std::fs::write(&path, text).map_err(|source| CliError::Write { path, source })
}

/// `text` with `features.<feature>` made to hold what `edited` holds there: each key that changed set in
/// place, each new one appended, everything else as written. `None` when the text does not parse as the
/// tree needs (the caller then writes `edited` whole), or when the result would not read back as
/// `edited` (checked, so that an edit never writes something else than what was decided).
fn edited_in_place(text: &str, feature: &str, edited: &Value) -> Option<String> {
    let wanted = edited.get("features")?.get(feature)?.as_object()?;
    let root = CstRootNode::parse(text, &jsonc_parser::ParseOptions::default()).ok()?;
    let section = root.object_value()?.object_value_or_create("features")?.object_value_or_create(feature)?;
    set_keys(&section, wanted);
    let result = root.to_string();
    let reread: Value = serde_json::from_str(&result).ok()?;
    (reread == *edited).then_some(result)
}

fn set_keys(object: &CstObject, wanted: &Map<String, Value>) {
    for (key, value) in wanted {
        match object.get(key) {
            Some(property) => {
                let same = property
                    .value()
                    .and_then(|node| serde_json::from_str::<Value>(&node.to_string()).ok())
                    .is_some_and(|current| current == *value);
                if !same {
                    property.set_value(cst_value(value));
                }
            }
            None => {
                object.append(key, cst_value(value));
            }
        }
    }
}

fn cst_value(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(flag) => CstInputValue::Bool(*flag),
        Value::Number(number) => CstInputValue::Number(number.to_string()),
        Value::String(text) => CstInputValue::String(text.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(cst_value).collect()),
        Value::Object(fields) => {
            CstInputValue::Object(fields.iter().map(|(key, value)| (key.clone(), cst_value(value))).collect())
        }
    }
}
