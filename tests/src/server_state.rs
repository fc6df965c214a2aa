//! What the running backend holds, read by the test process without a request (so without waking
//! anything in the browser).

use anyhow::Result;

use crate::Harness;

impl Harness {
    /// The todos of `user` as the server stored them, oldest first, read from its database without a
    /// request (so without waking anything in the browser); empty while the server is stopped.
    pub fn server_todos(&self, user: &str) -> Result<Vec<todo_backend::todos::Todo>> {
        match &self.server {
            Some(server) => server.todos_of(user),
            None => Ok(Vec::new()),
        }
    }

    /// Makes every GraphQL answer of the running server wait `ms` after its operation ran (applied but
    /// not yet answered: where a stopped Service Worker loses the answer). A restart ends it.
    pub fn slow_graphql(&self, ms: u64) {
        if let Some(server) = &self.server {
            server.slow_graphql(ms);
        }
    }
}

impl Harness {
    /// The answers the running server kept under `Idempotency-Key`s of `user`: `(key, status, body)`.
    pub fn idempotent_answers(&self, user: &str) -> Result<Vec<(String, u16, String)>> {
        match &self.server {
            Some(server) => server.idempotent_answers_of(user),
            None => Ok(Vec::new()),
        }
    }
}
