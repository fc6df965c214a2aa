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
//! Under the same condition, where the browser has static routes ([`SwRoutes::static_routes`]: Chromium's
//! `InstallEvent.addRoutes` with the source `race-network-and-fetch-handler`), a `GET` navigation (the
//! browser sends it, so it never carries cachet's request headers) goes to the network at once while the
//! worker starts, and a 2xx answer reaches the page without waiting for the engine. The engine still gets the request, with the
//! browser's copy of that same answer (the server is asked once), and stores it as network-first does. Any
//! other outcome (no answer, a redirect, a status other than 2xx) is the engine's to answer: network-first's
//! fallback to the stored answer and stale-if-error hold as before. A network-first or network-only job
//! answers a 2xx from the network with that answer, so the race changes no answer; the marks
//! (`X-Cachet-Source`) of such an answer cannot be read by the page it loads. A GraphQL endpoint
//! (a `GET` there is a query, with the GraphQL strategy) is kept to the engine by a rule before the race.

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

    /// Whether the shim sends a routed request early, handing the answer to the engine (the module
    /// docs): `method` `GET`, not a `navigation` (`Request.mode` `navigate`: the browser sends it
    /// itself, as navigation preload, where it has that), `path` (no query string) routed and not a
    /// GraphQL endpoint (a GraphQL `GET` is a query, classified by the engine), none of `header_names`
    /// (lower case) cachet's own ([`crate::protocol::headers::is_cachet_header`]: a strategy, tags or the
    /// auth marker change what the engine does first), and [`SwRoutes::fetch_early`]. The shim runs this
    /// rule in JavaScript.
    pub fn fetches_early(&self, method: &str, navigation: bool, path: &str, header_names: &[&str]) -> bool {
        self.fetch_early
            && method == "GET"
            && !navigation
            && self.routes(method, path)
            && !self.graphql_endpoints.iter().any(|endpoint| endpoint == path)
            && !header_names.iter().any(|name| crate::protocol::headers::is_cachet_header(name))
    }
}

/// The static-route source that races the network against the worker's fetch handler.
const RACE_SOURCE: &str = "race-network-and-fetch-handler";

impl SwRoutes {
    /// The static routes the shim hands the browser (`InstallEvent.addRoutes`), as JSON text: a list of
    /// groups, each the list of rules of one `addRoutes` call, so that a browser without one of the
    /// API's later conditions (`not`, `or`) keeps the other groups. First match wins, in this order:
    ///
    /// 1. what [`SwRoutes::routes`] never routes goes to the `network` without the worker: the
    ///    pass-through paths (at or below each, whatever the method); another origin; a method other
    ///    than `GET` and `POST`; a `POST` not to a GraphQL endpoint (one group each);
    /// 2. with `race` ([`SwRoutes::races`]): each GraphQL endpoint (any search) to the fetch handler,
    ///    then a `GET` navigation raced against it (the module docs), in one group, so that a browser
    ///    that refuses one of them races nothing.
    ///
    /// Each `urlPattern` is a URLPattern's parts (`pathname`, its syntax escaped) that the shim
    /// completes with the worker's own URL as the base: this origin, any search.
    pub fn static_routes(&self, race: bool) -> String {
        // Written piece by piece: no formatting machinery in the worker for this.
        let mut groups = String::from("[");
        let pattern = |text: &mut String, pathname: &str| {
            text.push_str(r#"{"urlPattern":{"pathname":"#);
            crate::json::write_string(text, pathname);
            text.push_str("}}");
        };
        let network = |groups: &mut String, condition: &dyn Fn(&mut String)| {
            groups.push_str(r#"{"condition":"#);
            condition(groups);
            groups.push_str(r#","source":"network"}"#);
        };
        if !self.pass_through.is_empty() {
            groups.push('[');
            for (index, path) in self.pass_through.iter().enumerate() {
                if index > 0 {
                    groups.push(',');
                }
                let at_or_below = url_pattern_literal(path) + "{/*}?";
                network(&mut groups, &|text| pattern(text, &at_or_below));
            }
            groups.push_str("],");
        }
        groups.push('[');
        network(&mut groups, &|text| {
            text.push_str(r#"{"not":"#);
            pattern(text, "*");
            text.push('}');
        });
        groups.push_str("],[");
        network(&mut groups, &|text| {
            text.push_str(r#"{"not":{"or":[{"requestMethod":"GET"},{"requestMethod":"POST"}]}}"#);
        });
        // A POST not to an endpoint: not (not a POST, or to an endpoint).
        groups.push_str("],[");
        network(&mut groups, &|text| {
            text.push_str(r#"{"not":{"or":[{"not":{"requestMethod":"POST"}}"#);
            for endpoint in &self.graphql_endpoints {
                text.push(',');
                pattern(text, &url_pattern_literal(endpoint));
            }
            text.push_str("]}}");
        });
        groups.push(']');
        if race && self.races() {
            groups.push_str(",[");
            for endpoint in &self.graphql_endpoints {
                groups.push_str(r#"{"condition":"#);
                pattern(&mut groups, &url_pattern_literal(endpoint));
                groups.push_str(r#","source":"fetch-event"},"#);
            }
            groups.push_str(r#"{"condition":{"requestMode":"navigate","requestMethod":"GET"},"source":""#);
            groups.push_str(RACE_SOURCE);
            groups.push_str(r#""}]"#);
        }
        groups.push(']');
        groups
    }

    /// Whether a `GET` navigation may be raced against the engine ([`SwRoutes::static_routes`]): its
    /// job begins with the network ([`SwRoutes::fetch_early`]); off, a lookup comes first, which a race
    /// would skip. The worker also keeps the race off while a plugin of the app's may shape answers.
    ///
    /// The page's elements (scripts, stylesheets: requests by destination) are not raced: tried in
    /// Chromium 156, a worker that had raced them could not be stopped by DevTools for 10 s.
    pub fn races(&self) -> bool {
        self.fetch_early
    }
}

/// `path` as a URLPattern pathname that matches exactly it: the characters URLPattern reads as syntax
/// escaped with a backslash.
fn url_pattern_literal(path: &str) -> String {
    let mut literal = String::with_capacity(path.len());
    for character in path.chars() {
        if matches!(character, '\\' | ':' | '*' | '?' | '+' | '(' | ')' | '{' | '}') {
            literal.push('\\');
        }
        literal.push(character);
    }
    literal
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

    /// The groups of [`SwRoutes::static_routes`], each rule as `condition -> source`.
    fn described(routes: &SwRoutes, race: bool) -> Vec<Vec<String>> {
        let parsed = crate::json::from_str(&routes.static_routes(race)).unwrap_or(crate::json::Value::Null);
        let group = |group: &crate::json::Value| {
            let rules = group.as_array().cloned().unwrap_or_default();
            rules
                .iter()
                .map(|rule| {
                    let mut text = String::new();
                    crate::json::write(&mut text, rule.get("condition").unwrap_or(&crate::json::Value::Null));
                    format!("{text} -> {}", rule.get("source").and_then(|s| s.as_str()).unwrap_or_default())
                })
                .collect()
        };
        parsed.as_array().cloned().unwrap_or_default().iter().map(group).collect()
    }

    #[test]
    fn the_static_routes_pass_on_what_is_never_routed_then_race_navigations() {
        let config = Config::from_json_str(
            r#"{"features":{"auth":{"enabled":true,"routePaths":["/api/login","/a(1)"]},
                "graphql":{"enabled":true,"endpoints":["/graphql","/v(2)/gql"]}}}"#,
        )
        .unwrap_or_default();
        let routes = config.sw_routes();
        let passed_on = [
            vec![
                r#"{"urlPattern":{"pathname":"/api/login{/*}?"}} -> network"#.to_owned(),
                r#"{"urlPattern":{"pathname":"/a\\(1\\){/*}?"}} -> network"#.to_owned(),
            ],
            vec![r#"{"not":{"urlPattern":{"pathname":"*"}}} -> network"#.to_owned()],
            vec![r#"{"not":{"or":[{"requestMethod":"GET"},{"requestMethod":"POST"}]}} -> network"#.to_owned()],
            vec![concat!(
                r#"{"not":{"or":[{"not":{"requestMethod":"POST"}},{"urlPattern":{"pathname":"/graphql"}},"#,
                r#"{"urlPattern":{"pathname":"/v\\(2\\)/gql"}}]}} -> network"#
            )
            .to_owned()],
        ];
        assert_eq!(described(&routes, false), passed_on);
        let mut raced = passed_on.to_vec();
        raced.push(vec![
            r#"{"urlPattern":{"pathname":"/graphql"}} -> fetch-event"#.to_owned(),
            r#"{"urlPattern":{"pathname":"/v\\(2\\)/gql"}} -> fetch-event"#.to_owned(),
            r#"{"requestMode":"navigate","requestMethod":"GET"} -> race-network-and-fetch-handler"#
                .to_owned(),
        ]);
        assert_eq!(described(&routes, true), raced);
        // Nothing passed on by path, no endpoint: those groups are empty or absent.
        let plain = Config::default().sw_routes();
        assert_eq!(described(&plain, false)[0], [r#"{"not":{"urlPattern":{"pathname":"*"}}} -> network"#]);
        assert_eq!(described(&plain, false).len(), 3);
        for strategy in ["cache-first", "stale-while-revalidate", "cache-only"] {
            let config = Config::from_json_str(&format!(r#"{{"strategy":{{"default":"{strategy}"}}}}"#))
                .unwrap_or_default();
            assert!(!config.sw_routes().races(), "{strategy}: a lookup comes first");
            assert_eq!(described(&config.sw_routes(), true).len(), 3, "{strategy}: no race group");
        }
        let network_only =
            Config::from_json_str(r#"{"strategy":{"default":"network-only"}}"#).unwrap_or_default();
        assert!(network_only.sw_routes().races());
    }
}
