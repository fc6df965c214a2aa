//! The Service Worker an app gets when its config is the bench's (`bench/cachet.config.json`: GraphQL
//! caching, no auth, no push), it does not show the devtools panel and it never queues a mutation
//! offline: `cachet-worker` without its `devtools`, `push` and `queue` features (cachet-kit with
//! `default-features = false`), as `cachet generate` writes the binary (`sw::install()`).

fn main() {
    cachet_worker::sw::install();
}

#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();
