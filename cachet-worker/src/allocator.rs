//! The allocator of cachet's worker binaries: `cachet generate` writes, in `src/bin/cachet-sw.rs` and
//! `src/bin/cachet-agent.rs`,
//!
//! ```
//! #[global_allocator]
//! static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();
//! # fn main() {}
//! ```
//!
//! On wasm it is [talc](https://docs.rs/talc)'s allocator for single-threaded WebAssembly, which is
//! smaller than the standard library's default there (dlmalloc: 7 KB of the worker's code before gzip;
//! the worker's wasm is 2.7 KB smaller gzipped with talc, BENCHMARKS.md) and, by its own benchmarks,
//! faster. Elsewhere (a native `cargo check` of an app's binaries) it is the system allocator. A worker
//! binary is the app's only in name (cachet writes it whole), so the choice is cachet's; the page's
//! allocator stays the app's own. The bundler-free API (`cachet-api`), cachet's own page binary, declares
//! the same talc allocator itself (it does not depend on this crate).

/// talc's allocator for single-threaded wasm (see the module docs).
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
pub type Allocator = talc::wasm::WasmDynamicTalc;

/// The system allocator, off wasm (see the module docs).
#[cfg(not(all(target_family = "wasm", not(target_feature = "atomics"))))]
pub type Allocator = std::alloc::System;

/// The [`Allocator`], for a `#[global_allocator]` static.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
pub const fn allocator() -> Allocator {
    talc::wasm::new_wasm_dynamic_allocator()
}

/// The [`Allocator`], for a `#[global_allocator]` static.
#[cfg(not(all(target_family = "wasm", not(target_feature = "atomics"))))]
pub const fn allocator() -> Allocator {
    std::alloc::System
}
