//! The agent's codec (`cachet_worker::agent::codec`): every message shape yew-agent sends between a page
//! and the agent worker, written as the codec's table says and read back equal; what it refuses, refused
//! with the error that names it; an agent registered with yew-agent's default codec named as such.
//!
//! yew-agent's message enums are private to it, so the tests declare their twins with the same serde
//! derives (`gloo-worker` 0.5: `ToWorker`, `FromWorker`, `ReactorInput`, `ReactorOutput`, `HandlerId`);
//! the end-to-end suite runs the real ones (the examples' agent worker behind `<CachetProvider>`).
#![allow(clippy::unwrap_used)]

use cachet_worker::agent::codec::{decode, encode, CodecError, WireCodec};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;
use yew_agent::Codec;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct HandlerId(usize);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum ReactorInput<I> {
    Input(I),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum ReactorOutput<O> {
    Output(O),
    Finish,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum ToWorker {
    Connected(HandlerId),
    ProcessInput(HandlerId, ReactorInput<String>),
    Disconnected(HandlerId),
    Destroy,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum FromWorker {
    WorkerLoaded,
    ProcessOutput(HandlerId, ReactorOutput<String>),
}

/// The JSON text of a JavaScript value, to compare shapes.
fn json(value: &JsValue) -> String {
    js_sys::JSON::stringify(value).unwrap().as_string().unwrap()
}

fn strings() -> Vec<String> {
    vec![
        String::new(),
        "{\"v\":1,\"type\":\"subscribe\",\"tags\":[\"Todo\"]}".to_owned(),
        "é ✓ 🦀 \u{0} \u{1f} \" \\ \n".to_owned(),
        "x".repeat(100_000),
    ]
}

#[wasm_bindgen_test]
fn every_message_is_written_as_the_table_says_and_read_back_equal() {
    let id = HandlerId(7);
    let mut to_worker = vec![
        (ToWorker::Connected(id), "[0,7]".to_owned()),
        (ToWorker::Disconnected(HandlerId(0)), "[2,0]".to_owned()),
        (ToWorker::Destroy, "3".to_owned()),
        (ToWorker::Connected(HandlerId(usize::MAX)), format!("[0,{}]", usize::MAX)),
    ];
    let mut from_worker = vec![
        (FromWorker::WorkerLoaded, "0".to_owned()),
        (FromWorker::ProcessOutput(id, ReactorOutput::Finish), "[1,7,1]".to_owned()),
    ];
    for text in strings() {
        let quoted = serde_json::to_string(&text).unwrap();
        to_worker.push((
            ToWorker::ProcessInput(id, ReactorInput::Input(text.clone())),
            format!("[1,7,[0,{quoted}]]"),
        ));
        from_worker.push((
            FromWorker::ProcessOutput(id, ReactorOutput::Output(text)),
            format!("[1,7,[0,{quoted}]]"),
        ));
    }
    for (message, shape) in to_worker {
        let value = encode(&message).unwrap();
        assert_eq!(json(&value), shape, "{message:?}");
        assert_eq!(decode::<ToWorker>(value.clone()).unwrap(), message);
        // The same through yew-agent's trait, as the bridge calls it.
        assert_eq!(WireCodec::decode::<ToWorker>(WireCodec::encode(&message)), message);
    }
    for (message, shape) in from_worker {
        let value = encode(&message).unwrap();
        assert_eq!(json(&value), shape, "{message:?}");
        assert_eq!(decode::<FromWorker>(value).unwrap(), message);
    }
}

#[wasm_bindgen_test]
fn an_agent_speaking_bincode_is_named_with_the_fix() {
    let bytes = yew_agent::Bincode::encode(FromWorker::WorkerLoaded);
    let error = decode::<FromWorker>(bytes).unwrap_err();
    assert_eq!(error, CodecError::Bincode);
    assert!(error.to_string().contains("cachet_worker::agent::register()"), "{error}");
}

#[wasm_bindgen_test]
fn what_the_codec_does_not_write_or_read_is_a_typed_error() {
    #[derive(Serialize)]
    struct Record {
        field: u8,
    }
    let refused = [
        (encode(&Record { field: 1 }).unwrap_err(), "a struct"),
        (encode(&1.5_f64).unwrap_err(), "a float"),
        (encode(&-1_i32).unwrap_err(), "a signed integer"),
        (encode(&(1_u64 << 53)).unwrap_err(), "an integer above 2^53"),
        (encode(&Some(1_u8)).unwrap_err(), "an option"),
        (encode(&vec![1_u8]).unwrap_err(), "a sequence"),
    ];
    for (error, what) in refused {
        assert!(matches!(error, CodecError::Unsupported(_)), "{error:?}");
        assert!(error.to_string().ends_with(what), "{error} should name {what}");
    }
    let malformed: [(JsValue, &str); 6] = [
        (JsValue::from_str("0"), "an integer"),
        (JsValue::from_f64(-1.0), "an integer"),
        (JsValue::from_f64(0.5), "an integer"),
        (js_sys::Array::of2(&1.into(), &7.into()).into(), "a variant's field"),
        (js_sys::Array::of3(&1.into(), &"7".into(), &js_sys::Array::of1(&0.into())).into(), "an integer"),
        (
            js_sys::Array::of3(&1.into(), &7.into(), &js_sys::Array::of2(&0.into(), &3.into())).into(),
            "a string",
        ),
    ];
    for (value, what) in malformed {
        let shown = json(&value);
        let error = decode::<FromWorker>(value).unwrap_err();
        assert!(matches!(error, CodecError::Expected(_)), "{shown}: {error:?}");
        assert!(error.to_string().ends_with(what), "{shown}: {error} should name {what}");
    }
    // A variant index the enum does not have: serde's own refusal, typed.
    assert_eq!(decode::<FromWorker>(JsValue::from_f64(5.0)).unwrap_err(), CodecError::Serde);
}
