//! What the engine moves between the store, the network and the plugins: an entry the store holds
//! ([`Hit`]), an answer from the network ([`Fetched`]), where an answer came from ([`Source`]), and what a
//! plugin may read of any response ([`Message`]).

/// An entry the store holds.
#[derive(Debug, Clone)]
pub struct Hit<R> {
    /// The stored response, ready to be answered with (marked as coming from the cache).
    pub response: R,
    /// When it was stored (Unix ms); `None` when the entry carries no readable time.
    pub stored_at: Option<u64>,
    /// Its body, when the lookup was asked for it.
    pub body: Option<Vec<u8>>,
}

/// An answer from the network.
#[derive(Debug, Clone)]
pub struct Fetched<R> {
    /// The response, ready to be answered with (marked as coming from the network).
    pub response: R,
    /// Its status.
    pub status: u16,
    /// Its body (already read: the planner checks it, the store keeps it).
    pub body: Vec<u8>,
    /// The configured auth-failure check's verdict, after any refresh-and-retry.
    pub auth_failure: bool,
    /// The server's `X-SW-Cache-Tags`.
    pub server_tags: Option<String>,
    /// The server's `Cache-Control` (the planner reads `no-store` and `private` in it).
    pub cache_control: Option<String>,
}

/// Where an answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The store.
    Cache,
    /// The network.
    Network,
    /// A plugin's [`handler_did_error`](super::plugin::Plugin::handler_did_error) (the offline queue's 202, say).
    Plugin,
}

/// What plugins read of a response, on either edge.
pub trait Message {
    /// The HTTP status.
    fn status(&self) -> u16;
    /// The value of header `name` (case-insensitive), if present.
    fn header(&self, name: &str) -> Option<String>;
}

#[cfg(feature = "web-sys")]
impl Message for web_sys::Response {
    fn status(&self) -> u16 {
        web_sys::Response::status(self)
    }
    fn header(&self, name: &str) -> Option<String> {
        self.headers().get(name).ok().flatten()
    }
}
