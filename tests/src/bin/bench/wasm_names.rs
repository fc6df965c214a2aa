//! Where a wasm module's bytes go: function body sizes grouped by the Rust crate named in the module's
//! `name` section (wasm-bindgen writes demangled names there; build with `wasm-opt -g` to keep them), plus
//! the data segments.

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};

/// A module's functions as its `name` section and code section describe them.
pub struct Functions {
    /// Functions imported (their indices come first).
    pub imported: u64,
    /// Body size in bytes of each defined function, in index order (index `imported + position`).
    pub body_sizes: Vec<u64>,
    /// Function index → demangled name.
    pub names: BTreeMap<u64, String>,
    /// Bytes of the data section.
    pub data: u64,
}

impl Functions {
    /// The name and body size of the function at `index` (a defined one), as far as they are known.
    pub fn describe(&self, index: u64) -> (String, Option<u64>) {
        let name = self.names.get(&index).cloned().unwrap_or_else(|| format!("function {index}"));
        let size = index.checked_sub(self.imported).and_then(|at| self.body_sizes.get(at as usize)).copied();
        (name, size)
    }
}

/// Reads `module`'s functions (no names when it has no `name` section).
pub fn functions(module: &[u8]) -> Result<Functions> {
    if module.get(..4) != Some(b"\0asm".as_slice()) {
        bail!("not a wasm module");
    }
    let mut reader = Reader { bytes: module, at: 8 };
    let mut imported = 0_u64;
    let mut body_sizes = Vec::new();
    let mut names = BTreeMap::new();
    let mut data = 0_u64;
    while reader.at < module.len() {
        let id = reader.byte()?;
        let size = reader.leb()? as usize;
        let start = reader.at;
        let end = start.checked_add(size).filter(|end| *end <= module.len()).context("truncated section")?;
        match id {
            2 => imported = count_imported_functions(&mut Reader { bytes: &module[..end], at: start })?,
            10 => {
                let mut code = Reader { bytes: &module[..end], at: start };
                for _ in 0..code.leb()? {
                    let body = code.leb()?;
                    body_sizes.push(body);
                    code.at += body as usize;
                }
            }
            11 => data = size as u64,
            0 => {
                let mut custom = Reader { bytes: &module[..end], at: start };
                if custom.name()? == "name" {
                    read_function_names(&mut custom, end, &mut names)?;
                }
            }
            _ => {}
        }
        reader.at = end;
    }
    Ok(Functions { imported, body_sizes, names, data })
}

/// Bytes of function bodies per crate, and of data segments under `(data)`, largest first.
pub fn bytes_by_crate(module: &[u8]) -> Result<Vec<(String, u64)>> {
    let functions = functions(module)?;
    if functions.names.is_empty() {
        bail!("the module has no function names: build it with `wasm-opt -g`");
    }
    let mut by_crate: BTreeMap<String, u64> = BTreeMap::new();
    for (position, size) in functions.body_sizes.iter().enumerate() {
        let name = functions.names.get(&(functions.imported + position as u64)).map_or("", String::as_str);
        *by_crate.entry(crate_of(name)).or_default() += size;
    }
    by_crate.insert("(data)".to_owned(), functions.data);
    let mut sorted: Vec<(String, u64)> = by_crate.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(sorted)
}

/// The crate a demangled function name belongs to: its first path segment without the `[hash]`
/// disambiguator, looking through `<`, `&`, `mut` and `dyn` (`<alloc[..]::vec::Vec<T> as Clone>::clone` is
/// `alloc`). Methods of primitive types (`<str as ..>`, `<char>::..`) count as `core`. Names without a
/// path (wasm-bindgen shims, `main`) are `(no crate)`.
pub fn crate_of(name: &str) -> String {
    let mut rest = name.trim_start_matches(['<', '&', ' ', '(']);
    for prefix in ["mut ", "dyn ", "const "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest).trim_start_matches(['<', '&', ' ']);
    }
    let end = rest.find([':', '<', '>', ' ', '[', '(']).unwrap_or(rest.len());
    let first = &rest[..end];
    const PRIMITIVES: [&str; 17] = [
        "char", "str", "bool", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128",
        "isize", "f32", "f64",
    ];
    if PRIMITIVES.contains(&first) {
        return "core".to_owned();
    }
    // What follows the crate name: its `[hash]`, then `::`.
    let after = rest[end..]
        .split_once(']')
        .filter(|_| rest[end..].starts_with('['))
        .map_or(&rest[end..], |(_, tail)| tail);
    if !first.is_empty() && after.starts_with("::") && first.chars().all(|c| c.is_alphanumeric() || c == '_')
    {
        first.to_owned()
    } else {
        "(no crate)".to_owned()
    }
}

fn count_imported_functions(reader: &mut Reader<'_>) -> Result<u64> {
    let mut functions = 0;
    for _ in 0..reader.leb()? {
        reader.name()?;
        reader.name()?;
        match reader.byte()? {
            0 => {
                reader.leb()?;
                functions += 1;
            }
            1 => {
                reader.byte()?;
                reader.limits()?;
            }
            2 => reader.limits()?,
            3 => {
                reader.byte()?;
                reader.byte()?;
            }
            4 => {
                reader.byte()?;
                reader.leb()?;
            }
            other => bail!("unknown import kind {other}"),
        }
    }
    Ok(functions)
}

fn read_function_names(reader: &mut Reader<'_>, end: usize, names: &mut BTreeMap<u64, String>) -> Result<()> {
    while reader.at < end {
        let id = reader.byte()?;
        let size = reader.leb()? as usize;
        let next = reader.at + size;
        if id == 1 {
            for _ in 0..reader.leb()? {
                let index = reader.leb()?;
                names.insert(index, reader.name()?);
            }
        }
        reader.at = next;
    }
    Ok(())
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8> {
        let byte = *self.bytes.get(self.at).context("truncated module")?;
        self.at += 1;
        Ok(byte)
    }

    fn leb(&mut self) -> Result<u64> {
        let mut value = 0_u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        bail!("LEB128 number too long")
    }

    fn name(&mut self) -> Result<String> {
        let length = self.leb()? as usize;
        let bytes = self.bytes.get(self.at..self.at + length).context("truncated name")?;
        self.at += length;
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }

    fn limits(&mut self) -> Result<()> {
        let flags = self.byte()?;
        self.leb()?;
        if flags & 1 == 1 {
            self.leb()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crates_of_demangled_names() {
        for (name, expected) in [
            ("cachet_core::classify::classify_request::h0123", "cachet_core"),
            ("<alloc::vec::Vec<T> as core::clone::Clone>::clone::h1", "alloc"),
            (
                "<&mut serde_json::de::Deserializer<R> as serde::de::Deserializer>::deserialize_any",
                "serde_json",
            ),
            ("<dyn core::any::Any>::type_id", "core"),
            ("core[c5930c85a12de822]::str::slice_error_fail", "core"),
            ("<dlmalloc[e24a27]::dlmalloc::Dlmalloc<dlmalloc[e24a27]::sys::System>>::malloc", "dlmalloc"),
            ("<char>::escape_debug_ext", "core"),
            ("<str as core[c59]::fmt::Debug>::fmt", "core"),
            ("<u64 as itoa::Unsigned>::fmt::h49603474b406f4ed", "core"),
            ("main", "(no crate)"),
            ("__wbg_fetch_1234", "(no crate)"),
            ("memcpy", "(no crate)"),
        ] {
            assert_eq!(crate_of(name), expected, "{name}");
        }
    }

    #[test]
    fn a_module_without_names_is_refused() {
        // The smallest module: magic and version only.
        assert!(bytes_by_crate(b"\0asm\x01\0\0\0").is_err());
        assert!(bytes_by_crate(b"nope").is_err());
    }
}
