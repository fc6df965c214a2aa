//! JSON text to serde_json's tree and back, by cachet-core's reader and writer (`cachet_core::json`),
//! which every context links anyway for its config and messages. The page client's own reads and
//! writes (the auth record, the tabs' messages, a GraphQL body and answer, `window.cachet`'s values)
//! go through here, and its records are read and written by hand ([`crate::AuthData::to_value`] and its reader): serde_json's
//! text reader, its writer and serde's derived decoders are then linked only where an app asks for a
//! typed value (`query_gql::<T>`, `HttpResponse::json::<T>`; the `_json` and `json_value` forms give
//! the tree), not by the client itself (the bundler-free
//! API's wasm: BENCHMARKS.md, session 37). The tree stays serde_json's: it is the type apps pass and
//! get (`json!` variables, `Value` results).
//!
//! Numbers cross as JSON text allows: an integer that fits `u64` or `i64` exactly; any other number as
//! the browser reads it (`parseFloat`, as `JSON.parse` does) and writes it (`JSON.stringify`), never in
//! Rust's float formatting or parsing (a few KB of wasm each). A number no `f64` holds (`1e400`) reads as `null`.

use cachet_core::json::{self as core_json, write_list, write_string, write_u64, ObjectWriter};
use serde_json::{Map, Number, Value};

/// Reads a JSON text into serde_json's tree; an error names what is wrong and where. Every JSON text the
/// page client reads goes through here; a typed value an app asks for is read from the tree
/// (`serde_json::from_value`).
pub fn read(bytes: &[u8]) -> Result<Value, core_json::Error> {
    core_json::from_slice(bytes).map(from_core)
}

/// `value` as compact JSON text: members in the tree's order, strings minimally escaped.
pub fn text(value: &Value) -> String {
    let mut text = String::new();
    write(&mut text, value);
    text
}

/// Appends `value` as compact JSON text.
pub fn write(text: &mut String, value: &Value) {
    match value {
        Value::Null => text.push_str("null"),
        Value::Bool(flag) => text.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => write_number(text, number),
        Value::String(string) => write_string(text, string),
        Value::Array(items) => write_list(text, items, write),
        Value::Object(members) => {
            let mut object = ObjectWriter::start(text);
            for (name, member) in members {
                write(object.member(name), member);
            }
            object.end();
        }
    }
}

fn write_number(text: &mut String, number: &Number) {
    if let Some(unsigned) = number.as_u64() {
        write_u64(text, unsigned);
    } else if let Some(signed) = number.as_i64() {
        text.push('-');
        write_u64(text, signed.unsigned_abs());
    } else {
        let float = number.as_f64().unwrap_or_default();
        let written = js_sys::JSON::stringify(&float.into()).ok().and_then(|text| text.as_string());
        text.push_str(written.as_deref().unwrap_or("null"));
    }
}

/// cachet-core's tree as serde_json's.
pub fn from_core(value: core_json::Value) -> Value {
    match value {
        core_json::Value::Null => Value::Null,
        core_json::Value::Bool(flag) => Value::Bool(flag),
        core_json::Value::Number(number) => number_of(number.as_str()),
        core_json::Value::String(text) => Value::String(text),
        core_json::Value::Array(items) => Value::Array(items.into_iter().map(from_core).collect()),
        core_json::Value::Object(members) => {
            // Inserted one by one (a later member of the same name wins, as serde_json's reader has it):
            // collecting would sort the members first, a sort of its own in the wasm.
            let mut object = Map::new();
            for (name, member) in members {
                object.insert(name, from_core(member));
            }
            Value::Object(object)
        }
    }
}

/// A JSON number's text (as the reader checked it) as serde_json's number.
fn number_of(text: &str) -> Value {
    // `-0` is serde_json's `-0.0`, a float: it takes the float path.
    let integer = !text.contains(['.', 'e', 'E']) && text != "-0";
    if integer {
        if let Ok(unsigned) = text.parse::<u64>() {
            return Value::Number(unsigned.into());
        }
        if let Ok(signed) = text.parse::<i64>() {
            return Value::Number(signed.into());
        }
    }
    Number::from_f64(js_sys::parse_float(text)).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::*;

    use super::*;

    wasm_bindgen_test_configure!(run_in_browser);

    /// serde_json's reader and writer are the oracle: the same tree from every text, and a text each
    /// reads back to the same tree.
    #[wasm_bindgen_test]
    fn reads_and_writes_what_serde_json_reads_and_writes() {
        let texts = [
            "null",
            "true",
            "0",
            "7",
            "-7",
            "18446744073709551615",
            "-9223372036854775808",
            "18446744073709551616",
            "1.5",
            "-0.25",
            "1e21",
            "1E-7",
            // (Not a 17-digit decimal such as `123456789.12345679`: serde_json without its
            // `float_roundtrip` feature reads some an ulp off; the browser reads them exactly.)
            "123456789.5",
            "0.1",
            r#""plain""#,
            r#""quote \" backslash \\ slash \/ tab \t newline \n unicode \u00e9 \ud83d\ude00""#,
            r#"[]"#,
            r#"{}"#,
            r#"{"b":1,"a":[1,2,{"c":null}],"é":"x"}"#,
            r#"{"data":{"todos":[{"id":"1","title":"a","done":false}]},"errors":null}"#,
        ];
        for source in texts {
            let ours = read(source.as_bytes()).unwrap_or_else(|error| panic!("{source}: {error}"));
            let theirs: Value =
                serde_json::from_str(source).unwrap_or_else(|error| panic!("{source}: {error}"));
            assert_eq!(ours, theirs, "{source}");
            let written = text(&ours);
            let again: Value =
                serde_json::from_str(&written).unwrap_or_else(|error| panic!("{written}: {error}"));
            assert_eq!(again, theirs, "{source} written as {written}");
        }
        // `-0` reads as serde_json reads it (a float), and is written as `JSON.stringify` writes it.
        let negative_zero = read(b"-0").unwrap_or_default();
        assert_eq!(negative_zero, serde_json::from_str::<Value>("-0").unwrap_or_default());
        assert_eq!(text(&negative_zero), "0");
        // Malformed: refused by both.
        for source in ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\x\"", "nul", "[1] 2"] {
            assert!(read(source.as_bytes()).is_err(), "{source}");
            assert!(serde_json::from_str::<Value>(source).is_err(), "{source}");
        }
    }
}
