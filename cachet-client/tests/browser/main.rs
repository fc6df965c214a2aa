//! The page client in a real page of headless Chromium, without a Service Worker (the in-page path),
//! against a fake server behind the client's fetch hook. Two clients with the same channel names stand for
//! two tabs: BroadcastChannel delivers between two objects of one page as between two tabs.
#![allow(clippy::unwrap_used)]

mod adapters;
mod auth;
mod data;
mod global_config;
mod parity;
mod push;
mod support;
mod sw_messages;
mod tabs;

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
