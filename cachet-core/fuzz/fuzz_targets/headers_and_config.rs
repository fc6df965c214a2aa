//! Any text as a tag header, a strategy header, a config file or a protocol message: never a panic.
#![no_main]

use cachet_core::config::Config;
use cachet_core::protocol::{decode_message, AgentRequest, PageReply, PageToSw, SwEvent};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(tags) = cachet_core::tags::parse_tag_list(text) {
        assert!(tags.len() <= cachet_core::tags::MAX_TAGS);
    }
    let _ = text.parse::<cachet_core::strategy::Strategy>();
    if let Ok(config) = Config::from_json_str(text) {
        assert_eq!(Config::from_json_str(&config.to_json_pretty()), Ok(config));
    }
    let _ = decode_message::<SwEvent>(text);
    let _ = decode_message::<PageToSw>(text);
    let _ = decode_message::<PageReply>(text);
    let _ = decode_message::<AgentRequest>(text);
    let _ = cachet_core::machines::queue::QueueState::from_json(text);
});
