//! What makes a wrong answer fail the run instead of being timed: the server's request counts, cachet's
//! `X-Cachet-Source`, and the samples the page returns.

use std::ops::RangeInclusive;

use anyhow::{bail, Result};
use serde_json::Value;

use crate::variants::Variant;

pub(crate) fn expect_count(
    variant: Variant,
    what: &str,
    got: u64,
    allowed: RangeInclusive<u64>,
) -> Result<()> {
    if !allowed.contains(&got) {
        bail!(
            "{}: {what}: {got}, expected {allowed:?}: the variant did not do what it is timed for",
            variant.name()
        );
    }
    Ok(())
}

/// For cachet, `sources` (counts by `X-Cachet-Source`) must be `want` for all `count` answers.
pub(crate) fn expect_cachet_sources(
    variant: Variant,
    what: &str,
    sources: &Value,
    want: &str,
    count: u64,
) -> Result<()> {
    if variant == Variant::Cachet && sources[want].as_u64() != Some(count) {
        bail!("cachet: {what}: X-Cachet-Source counts {sources}, expected {count} × {want}");
    }
    Ok(())
}

pub(crate) fn samples(out: &Value) -> Result<Vec<f64>> {
    numbers(&out["samples"])
}

pub(crate) fn numbers(value: &Value) -> Result<Vec<f64>> {
    let Some(items) = value.as_array() else {
        bail!("the page returned no samples: {value}");
    };
    items.iter().map(|item| item.as_f64().ok_or_else(|| anyhow::anyhow!("not a number: {item}"))).collect()
}
