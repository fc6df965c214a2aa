//! The Service Worker an app gets when its config is the bench's (`bench/cachet.config.json`: GraphQL
//! caching, no auth, no push) and it does not show the devtools panel: `cachet-worker` without its
//! `devtools` and `push` features, as `cachet generate` writes the binary (`sw::install()`).

fn main() {
    cachet_worker::sw::install();
}

#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();
