//! The agent's codec: how yew-agent's messages between a page and the agent worker are written as
//! JavaScript values.
//!
//! yew-agent wraps every bridge message in its own enums (`ToWorker::ProcessInput(HandlerId, input)`,
//! `FromWorker::ProcessOutput(..)`, `ReactorInput::Input(..)`, `ReactorOutput::Finish`, …), all derived
//! with serde, and writes them with a [`Codec`] chosen on both sides. Its default, bincode, links bincode
//! and, through serde's error messages, `f64`'s formatting: 13.5 KB of the page's gzipped wasm and as
//! much of the agent's (BENCHMARKS.md, session 21). cachet's messages are already wire text (`String`), so
//! what travels is only those enums, their handler id (a `usize`) and a string; [`WireCodec`] writes
//! exactly that, by hand for size, straight to JavaScript values (no bytes copied in and out of wasm):
//!
//! | serde's shape | JavaScript value |
//! |---|---|
//! | a string | the string |
//! | an unsigned integer (at most 2^53) | a number |
//! | a newtype struct (`HandlerId`) | its field's value |
//! | a unit variant | its index, a number |
//! | a newtype or tuple variant | an array: its index, then its fields |
//!
//! Anything else is refused with a typed [`CodecError`] naming the shape. yew-agent's `Codec` cannot
//! return an error, so the [`Codec`] impl throws the error's text as a JavaScript exception (yew-agent's
//! bincode panics in the same place); the console then says what was wrong. The one error a developer can
//! meet is an agent binary built before this codec (its `main` calls `CachetAgent::registrar().register()`,
//! bincode): its first message arrives as bytes and the page throws [`CodecError::Bincode`], whose text
//! names the fix ([`register`](super::register), which `cachet generate` writes).
//!
//! The codec's tests (`tests/agent_codec.rs`, wasm) write every message shape yew-agent sends, read it
//! back equal, and check the values against the table above.

use std::fmt;

use js_sys::{Array, Uint8Array};
use serde::de::{self, DeserializeSeed, Visitor};
use serde::ser::{self, Serialize};
use wasm_bindgen::{JsCast, JsValue};
use yew_agent::Codec;

/// yew-agent's [`Codec`] for cachet's agent: see the [module docs](self).
#[derive(Debug, Clone, Copy)]
pub struct WireCodec;

impl Codec for WireCodec {
    fn encode<I: Serialize>(input: I) -> JsValue {
        encode(&input).unwrap_or_else(|error| wasm_bindgen::throw_str(error.text()))
    }

    fn decode<O: for<'de> de::Deserialize<'de>>(input: JsValue) -> O {
        decode(input).unwrap_or_else(|error| wasm_bindgen::throw_str(error.text()))
    }
}

/// What [`WireCodec`] could not write or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodecError {
    /// A value of a shape the codec does not write (named).
    Unsupported(&'static str),
    /// A JavaScript value of another shape than the one asked for (named).
    Expected(&'static str),
    /// The other side speaks bincode, yew-agent's default: an agent binary registered without this codec.
    Bincode,
    /// Serde's own error (a derive's unknown variant, a missing field): never met for yew-agent's messages.
    Serde,
}

impl CodecError {
    /// The error's text, a constant (no formatting is linked to write it).
    pub fn text(self) -> &'static str {
        match self {
            CodecError::Unsupported(what) | CodecError::Expected(what) => what,
            CodecError::Bincode => {
                "cachet agent: the agent worker speaks yew-agent's default codec (bincode), not cachet's: \
                 its main must call cachet_worker::agent::register() (cachet_kit::worker::agent::register()); \
                 `cachet generate` writes src/bin/cachet-agent.rs so"
            }
            CodecError::Serde => "cachet agent: a message the agent codec does not read",
        }
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

impl std::error::Error for CodecError {}

// Serde's errors carry a message built from `Display` values (an `Unexpected` float among them); the
// codec drops the message, so none of that formatting is linked: each of serde's constructors is
// overridden to the one constant it stands for.
impl ser::Error for CodecError {
    fn custom<T: fmt::Display>(_: T) -> Self {
        CodecError::Serde
    }
}

impl de::Error for CodecError {
    fn custom<T: fmt::Display>(_: T) -> Self {
        CodecError::Serde
    }
    fn invalid_type(_: de::Unexpected<'_>, _: &dyn de::Expected) -> Self {
        CodecError::Serde
    }
    fn invalid_value(_: de::Unexpected<'_>, _: &dyn de::Expected) -> Self {
        CodecError::Serde
    }
    fn invalid_length(_: usize, _: &dyn de::Expected) -> Self {
        CodecError::Serde
    }
    fn unknown_variant(_: &str, _: &'static [&'static str]) -> Self {
        CodecError::Serde
    }
    fn unknown_field(_: &str, _: &'static [&'static str]) -> Self {
        CodecError::Serde
    }
    fn missing_field(_: &'static str) -> Self {
        CodecError::Serde
    }
    fn duplicate_field(_: &'static str) -> Self {
        CodecError::Serde
    }
}

/// The largest integer a JavaScript number holds exactly.
const MAX_SAFE: u64 = (1 << 53) - 1;

/// `value` as the JavaScript value of the [table](self).
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, CodecError> {
    value.serialize(Writer)
}

/// The value of type `T` that `value` holds, as [`encode`] wrote it.
pub fn decode<T: for<'de> de::Deserialize<'de>>(value: JsValue) -> Result<T, CodecError> {
    if value.is_instance_of::<Uint8Array>() {
        return Err(CodecError::Bincode);
    }
    T::deserialize(Reader(value))
}

/// Writes one value.
struct Writer;

/// A variant's array being filled: its index first, then its fields.
struct Fields(Array);

macro_rules! unsupported {
    ($($method:ident($($ty:ty),*) -> $out:ty: $what:literal;)*) => {$(
        fn $method(self, $(_: $ty),*) -> Result<$out, CodecError> {
            Err(CodecError::Unsupported(concat!("cachet agent: the agent codec does not write ", $what)))
        }
    )*};
}

impl ser::Serializer for Writer {
    type Ok = JsValue;
    type Error = CodecError;
    type SerializeSeq = ser::Impossible<JsValue, CodecError>;
    type SerializeTuple = ser::Impossible<JsValue, CodecError>;
    type SerializeTupleStruct = ser::Impossible<JsValue, CodecError>;
    type SerializeTupleVariant = Fields;
    type SerializeMap = ser::Impossible<JsValue, CodecError>;
    type SerializeStruct = ser::Impossible<JsValue, CodecError>;
    type SerializeStructVariant = ser::Impossible<JsValue, CodecError>;

    fn serialize_u64(self, v: u64) -> Result<JsValue, CodecError> {
        if v > MAX_SAFE {
            return Err(CodecError::Unsupported(
                "cachet agent: the agent codec does not write an integer above 2^53",
            ));
        }
        Ok(JsValue::from_f64(v as f64))
    }
    fn serialize_u32(self, v: u32) -> Result<JsValue, CodecError> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<JsValue, CodecError> {
        self.serialize_u64(v.into())
    }
    fn serialize_u8(self, v: u8) -> Result<JsValue, CodecError> {
        self.serialize_u64(v.into())
    }
    fn serialize_str(self, v: &str) -> Result<JsValue, CodecError> {
        Ok(JsValue::from_str(v))
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
    ) -> Result<JsValue, CodecError> {
        self.serialize_u32(index)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<JsValue, CodecError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        value: &T,
    ) -> Result<JsValue, CodecError> {
        Ok(Array::of2(&index.into(), &value.serialize(Writer)?).into())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Fields, CodecError> {
        Ok(Fields(Array::of1(&index.into())))
    }

    unsupported! {
        serialize_bool(bool) -> JsValue: "a bool";
        serialize_i8(i8) -> JsValue: "a signed integer";
        serialize_i16(i16) -> JsValue: "a signed integer";
        serialize_i32(i32) -> JsValue: "a signed integer";
        serialize_i64(i64) -> JsValue: "a signed integer";
        serialize_f32(f32) -> JsValue: "a float";
        serialize_f64(f64) -> JsValue: "a float";
        serialize_char(char) -> JsValue: "a char";
        serialize_bytes(&[u8]) -> JsValue: "bytes";
        serialize_none() -> JsValue: "an option";
        serialize_unit() -> JsValue: "a unit";
        serialize_unit_struct(&'static str) -> JsValue: "a unit struct";
        serialize_seq(Option<usize>) -> Self::SerializeSeq: "a sequence";
        serialize_tuple(usize) -> Self::SerializeTuple: "a tuple";
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct: "a tuple struct";
        serialize_map(Option<usize>) -> Self::SerializeMap: "a map";
        serialize_struct(&'static str, usize) -> Self::SerializeStruct: "a struct";
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant: "a struct variant";
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<JsValue, CodecError> {
        self.serialize_none()
    }
}

impl ser::SerializeTupleVariant for Fields {
    type Ok = JsValue;
    type Error = CodecError;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CodecError> {
        self.0.push(&value.serialize(Writer)?);
        Ok(())
    }

    fn end(self) -> Result<JsValue, CodecError> {
        Ok(self.0.into())
    }
}

/// Reads one value.
struct Reader(JsValue);

impl Reader {
    fn integer(&self) -> Result<u64, CodecError> {
        match self.0.as_f64() {
            Some(n) if n >= 0.0 && n <= MAX_SAFE as f64 && n.fract() == 0.0 => Ok(n as u64),
            _ => Err(CodecError::Expected("cachet agent: the agent codec expected an integer")),
        }
    }

    fn string(self) -> Result<String, CodecError> {
        self.0.as_string().ok_or(CodecError::Expected("cachet agent: the agent codec expected a string"))
    }
}

impl<'de> de::Deserializer<'de> for Reader {
    type Error = CodecError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, CodecError> {
        if self.0.as_f64().is_some() {
            visitor.visit_u64(self.integer()?)
        } else {
            visitor.visit_string(self.string()?)
        }
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, CodecError> {
        visitor.visit_u64(self.integer()?)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, CodecError> {
        visitor.visit_string(self.string()?)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, CodecError> {
        self.deserialize_string(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, CodecError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, CodecError> {
        let (index, fields) = match self.0.dyn_into::<Array>() {
            Ok(array) => (array.get(0), Some(array)),
            Err(value) => (value, None),
        };
        visitor.visit_enum(Variant { index: Reader(index).integer()?, fields })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u128 f32 f64 char bytes byte_buf option unit
        unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// An enum's variant: its index, and its array when it has fields.
struct Variant {
    index: u64,
    fields: Option<Array>,
}

impl<'de> de::EnumAccess<'de> for Variant {
    type Error = CodecError;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self), CodecError> {
        let index = seed.deserialize(de::value::U64Deserializer::<CodecError>::new(self.index))?;
        Ok((index, self))
    }
}

impl<'de> de::VariantAccess<'de> for Variant {
    type Error = CodecError;

    fn unit_variant(self) -> Result<(), CodecError> {
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, CodecError> {
        seed.deserialize(Reader(self.field(1)?))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, CodecError> {
        visitor.visit_seq(Elements { variant: self, next: 1 })
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, CodecError> {
        Err(CodecError::Unsupported("cachet agent: the agent codec does not read a struct variant"))
    }
}

impl Variant {
    /// The field at `at` of the variant's array (its index is at 0).
    fn field(&self, at: u32) -> Result<JsValue, CodecError> {
        match &self.fields {
            Some(array) if at < array.length() => Ok(array.get(at)),
            _ => Err(CodecError::Expected("cachet agent: the agent codec expected a variant's field")),
        }
    }
}

/// A tuple variant's fields, in order.
struct Elements {
    variant: Variant,
    next: u32,
}

impl<'de> de::SeqAccess<'de> for Elements {
    type Error = CodecError;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, CodecError> {
        // A tuple variant's visitor asks for exactly its fields: one missing is an error, not an end.
        let value = self.variant.field(self.next)?;
        self.next += 1;
        seed.deserialize(Reader(value)).map(Some)
    }
}
