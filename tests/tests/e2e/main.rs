//! The end-to-end stories: the real app, its real backend and the foreign servers of the interop
//! matrix, driven in real browsers. One test binary (linked once, rather than once per story file):
//! `cargo test -p cachet-e2e --test e2e -- --test-threads=1` runs them all, `... --test e2e offline_queue::`
//! one story file, `... --test e2e offline_queue::offline_mutations` one story.
//!
//! The stories share no state: each starts its own servers and its own browser with a fresh profile
//! (`cachet_e2e::Harness`), and none depends on the order they run in.

mod app_shell;
mod auth_refresh;
mod chaos_corrupt_state;
mod chaos_killed_mid_write;
mod chaos_load;
mod chaos_storage_full;
mod chaos_tabs_auth;
mod clear_all;
mod clear_all_interrupted;
mod devtools;
mod graphql_document_cache;
mod harness_cleanup;
mod interop;
mod invalidation_generations;
mod live_send_idempotency;
mod navigation_preload;
mod offline_queue;
mod one_request_for_every_tab;
mod persisted_queries;
mod plain_page_tabs;
mod queue_delivery;
mod queue_without_idempotency;
mod readme_quick_start;
mod served_alone;
mod server_cache_hints;
mod server_push;
mod session_restore;
mod spec_plain_page;
mod stale_if_error;
mod start_module;
mod stateless_sw;
mod static_routes;
mod storage_quota;
mod todo_app;
mod upgrade_in_place;
mod user_partition;
mod walking_skeleton;
