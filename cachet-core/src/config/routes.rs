//! The route table the Service Worker's JS shim matches synchronously, before the wasm engine has
//! loaded: a request it does not route gets no `respondWith` and reaches the network untouched.
//!
//! The shim routes a request to the engine when it is same-origin and either a `GET` not under a
//! `passThrough` path (equal to it, or continuing it with `/`, exactly as [`Config::is_auth_route`]
//! decides) or a `POST` to one of `graphqlEndpoints` (exactly, as [`Config::graphql_endpoint_index`]
//! decides). The engine then classifies it fully with [`crate::classify::classify_request`].
//!
//! A routed request whose job begins with the network whatever the engine reads ([`SwRoutes::fetches_early`]:
//! a `GET`, not to a GraphQL endpoint, carrying none of cachet's request headers, while the config's
//! default strategy is network-first or network-only) is sent by the shim as the event arrives, and the
//! engine's network step takes that answer (`cachet-worker`'s `WorkerNetwork`), as it takes a
//! navigation's preload: the request is sent once, and a stopped worker's start and the network's time
//! overlap. Everything else waits for the engine, which decides first.
//!
//! Such a request that the browser makes for a document, a script, a stylesheet... ([`SwRoutes::hands_over`])
//! is answered by the shim itself when what was sent (a navigation's preload, another's early send)
//! brings a 2xx answer and no plugin of the app's may change network answers (the engine says so at
//! install: `Plugin::shapes_network_answers`): the page gets that answer as it streams in, marked
//! `X-Cachet-Source: network` as the engine marks it, and the engine, once loaded, runs the request's
//! job on a copy (stored as network-first stores it).
//! Any other answer (none, a failure, a status other than 2xx) is the engine's, as before: a 5xx may be
//! answered from the store (stale-if-error), a failure from the store or the app shell.

use serde::Serialize;

use super::Config;
use crate::strategy::Strategy;

/// What the shim needs to route synchronously.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SwRoutes {
    /// Paths (and everything below them) that never reach the engine: the auth routes when auth is on.
    pub pass_through: Vec<String>,
    /// GraphQL endpoint paths whose POSTs reach the engine: the configured ones when GraphQL is on.
    pub graphql_endpoints: Vec<String>,
    /// Whether a `GET` with none of cachet's request headers begins with the network (the config's
    /// `strategy.default` is network-first or network-only): the shim then sends it early
    /// ([`SwRoutes::fetches_early`]).
    pub fetch_early: bool,
}

impl SwRoutes {
    /// Whether the shim routes a same-origin `method` request to `path` (no query string) to the engine:
    /// a GET not at or below a pass-through path, or a POST to a GraphQL endpoint. The shim
    /// (`service-worker.js`) runs this rule in JavaScript, the page client and the worker's hand-over
    /// ([`crate::handover`]) here.
    pub fn routes(&self, method: &str, path: &str) -> bool {
        match method {
            "POST" => self.graphql_endpoints.iter().any(|endpoint| endpoint == path),
            "GET" => !self.pass_through.iter().any(|pass| {
                path == pass || path.strip_prefix(pass.as_str()).is_some_and(|rest| rest.starts_with('/'))
            }),
            _ => false,
        }
    }

    /// Whether a routed request's job begins with the network whatever the engine reads: `method` `GET`,
    /// `path` (no query string) routed and not a GraphQL endpoint (a GraphQL `GET` is a query,
    /// classified by the engine), none of `header_names` (lower case) cachet's own
    /// ([`crate::protocol::headers::is_cachet_header`]: a strategy, tags or the auth marker change what
    /// the engine does first), and [`SwRoutes::fetch_early`]. The shim runs this rule in JavaScript
    /// (`beginsWithTheNetwork`), under the two below.
    fn begins_with_the_network(&self, method: &str, path: &str, header_names: &[&str]) -> bool {
        self.fetch_early
            && method == "GET"
            && self.routes(method, path)
            && !self.graphql_endpoints.iter().any(|endpoint| endpoint == path)
            && !header_names.iter().any(|name| crate::protocol::headers::is_cachet_header(name))
    }

    /// Whether the shim sends a routed request early, handing the answer to the engine (the module
    /// docs): its job begins with the network, and it is not a `navigation` (`Request.mode` `navigate`:
    /// the browser sends it itself, as navigation preload, where it has that).
    pub fn fetches_early(&self, method: &str, navigation: bool, path: &str, header_names: &[&str]) -> bool {
        !navigation && self.begins_with_the_network(method, path, header_names)
    }

    /// Whether the shim may hand a request's 2xx answer (a navigation's preload, another's early send) to
    /// the page before the engine runs (the module docs): its job begins with the network (network-first
    /// or network-only gives a 2xx network answer as it is), and the browser makes it for a document, a
    /// script, a stylesheet, an image... (`destination`, `Request.destination`, not empty): no code reads
    /// its headers, so the page loses nothing the engine would have marked on it (`X-Cachet-Not-Stored`
    /// is on the console and in the devtools). A `fetch()` or an XHR (no destination) waits for the
    /// engine. The shim runs this rule in JavaScript, and only while the engine said at install that no
    /// plugin of the app's may change network answers.
    pub fn hands_over(&self, method: &str, destination: &str, path: &str, header_names: &[&str]) -> bool {
        !destination.is_empty() && self.begins_with_the_network(method, path, header_names)
    }
}

impl Config {
    /// The shim's route table for this config.
    pub fn sw_routes(&self) -> SwRoutes {
        let auth = &self.features.auth;
        let graphql = &self.features.graphql;
        SwRoutes {
            pass_through: if auth.enabled { auth.route_paths.clone() } else { Vec::new() },
            graphql_endpoints: if graphql.enabled { graphql.endpoints.clone() } else { Vec::new() },
            fetch_early: matches!(self.strategy.default, Strategy::NetworkFirst | Strategy::NetworkOnly),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_routes_pass_through_only_when_auth_is_enabled() {
        let off = Config::default();
        assert_eq!(off.sw_routes().pass_through, Vec::<String>::new());
        let on = Config::from_json_str(r#"{"features":{"auth":{"enabled":true}}}"#).unwrap_or_default();
        assert_eq!(on.sw_routes().pass_through, ["/api/login", "/api/logout", "/api/refresh", "/api/me"]);
        for path in &on.sw_routes().pass_through {
            assert!(on.is_auth_route(path), "{path} passes through in the shim and in the engine alike");
        }
    }

    #[test]
    fn graphql_endpoints_are_routed_only_when_graphql_is_enabled() {
        assert_eq!(Config::default().sw_routes().graphql_endpoints, Vec::<String>::new());
        let on = Config::from_json_str(
            r#"{"features":{"graphql":{"enabled":true,"endpoints":["/graphql","/v2/gql"]}}}"#,
        )
        .unwrap_or_default();
        assert_eq!(on.sw_routes().graphql_endpoints, ["/graphql", "/v2/gql"]);
        for (index, path) in on.sw_routes().graphql_endpoints.iter().enumerate() {
            assert_eq!(on.graphql_endpoint_index(path), Some(index), "{path}: the shim and the engine agree");
        }
    }

    #[test]
    fn the_route_rule_matches_the_shims() {
        let routes = SwRoutes {
            pass_through: vec!["/api/login".into()],
            graphql_endpoints: vec!["/graphql".into()],
            fetch_early: true,
        };
        let table = [
            ("GET", "/api/notes", true),
            ("GET", "/api/login", false),
            ("GET", "/api/login/x", false),
            ("GET", "/api/loginx", true),
            ("POST", "/graphql", true),
            ("POST", "/graphql/x", false),
            ("POST", "/api/notes", false),
            ("PUT", "/api/notes", false),
        ];
        for (method, path, routed) in table {
            assert_eq!(routes.routes(method, path), routed, "{method} {path}");
        }
    }

    #[test]
    fn only_a_get_whose_job_begins_with_the_network_is_sent_early() {
        let config = Config::from_json_str(
            r#"{"features":{"auth":{"enabled":true},"graphql":{"enabled":true,"endpoints":["/graphql"]}}}"#,
        )
        .unwrap_or_default();
        let routes = config.sw_routes();
        assert!(routes.fetch_early, "network-first is the default");
        let table: [(&str, bool, &str, &[&str], bool); 9] = [
            ("GET", false, "/app.js", &["accept"], true),
            ("GET", true, "/index.html", &["accept"], false),
            ("GET", false, "/app.js", &["x-sw-strategy"], false),
            ("GET", false, "/app.js", &["x-cachet-tags"], false),
            ("GET", false, "/app.js", &["x-cachet-auth"], false),
            ("GET", false, "/graphql", &[], false),
            ("GET", false, "/api/login", &[], false),
            ("POST", false, "/graphql", &[], false),
            ("HEAD", false, "/app.js", &[], false),
        ];
        for (method, navigation, path, headers, early) in table {
            let sent_early = routes.fetches_early(method, navigation, path, headers);
            assert_eq!(sent_early, early, "{method} navigation {navigation} {path} {headers:?}");
        }
        let cache_first =
            Config::from_json_str(r#"{"strategy":{"default":"cache-first"}}"#).unwrap_or_default();
        assert!(!cache_first.sw_routes().fetch_early, "a lookup comes first");
        assert!(!cache_first.sw_routes().fetches_early("GET", false, "/app.js", &[]));
        let network_only =
            Config::from_json_str(r#"{"strategy":{"default":"network-only"}}"#).unwrap_or_default();
        assert!(network_only.sw_routes().fetch_early);
    }

    #[test]
    fn only_what_the_browser_loads_and_begins_with_the_network_is_handed_over() {
        let config = Config::from_json_str(
            r#"{"features":{"auth":{"enabled":true},"graphql":{"enabled":true,"endpoints":["/graphql"]}}}"#,
        )
        .unwrap_or_default();
        let routes = config.sw_routes();
        let table: [(&str, &str, &str, &[&str], bool); 11] = [
            ("GET", "document", "/", &[], true),
            ("GET", "document", "/todos/3", &["accept"], true),
            ("GET", "script", "/app.js", &[], true),
            ("GET", "style", "/app.css", &[], true),
            ("GET", "", "/app.js", &[], false),
            ("GET", "script", "/app.js", &["x-sw-strategy"], false),
            ("GET", "script", "/app.js", &["x-cachet-tags"], false),
            ("POST", "document", "/", &[], false),
            ("GET", "document", "/graphql", &[], false),
            ("GET", "document", "/api/login", &[], false),
            ("GET", "image", "/api/login/avatar.png", &[], false),
        ];
        for (method, destination, path, headers, handed) in table {
            let hands_over = routes.hands_over(method, destination, path, headers);
            assert_eq!(hands_over, handed, "{method} {destination:?} {path} {headers:?}");
        }
        for default in ["cache-first", "stale-while-revalidate", "cache-only", "cache-and-network"] {
            let config = Config::from_json_str(&format!(r#"{{"strategy":{{"default":"{default}"}}}}"#))
                .unwrap_or_default();
            assert!(
                !config.sw_routes().hands_over("GET", "document", "/", &[]),
                "{default}: a lookup comes first"
            );
        }
        let network_only =
            Config::from_json_str(r#"{"strategy":{"default":"network-only"}}"#).unwrap_or_default();
        assert!(network_only.sw_routes().hands_over("GET", "script", "/app.js", &[]));
    }
}
