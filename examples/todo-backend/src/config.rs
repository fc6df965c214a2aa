//! Server configuration: where to listen, what to serve, which auth mode to speak.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// How clients prove who they are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AuthMode {
    /// An `HttpOnly` session cookie named `cachet_session`.
    #[default]
    Cookie,
    /// An `Authorization: Bearer <token>` header; tokens are rotated by `/api/refresh`.
    Bearer,
}

impl AuthMode {
    /// The mode's lowercase name, as used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMode::Cookie => "cookie",
            AuthMode::Bearer => "bearer",
        }
    }
}

impl fmt::Display for AuthMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AuthMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "cookie" => Ok(AuthMode::Cookie),
            "bearer" => Ok(AuthMode::Bearer),
            other => Err(format!("unknown auth mode `{other}` (expected `cookie` or `bearer`)")),
        }
    }
}

/// Everything [`crate::start`] needs to run a server.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Address to bind; port 0 picks a free port.
    pub addr: SocketAddr,
    /// The built app (`dist`), served at `/` with an `index.html` fallback.
    pub static_dir: Option<PathBuf>,
    /// SQLite file; created with schema and seed users on first run.
    pub db_path: PathBuf,
    /// Cookie or bearer authentication.
    pub auth_mode: AuthMode,
    /// Lifetime of a bearer token or cookie session.
    pub token_ttl: Duration,
    /// Enables the `/__test/*` routes.
    pub test_hooks: bool,
}

/// Default token / session lifetime: 15 minutes.
pub const DEFAULT_TOKEN_TTL: Duration = Duration::from_secs(15 * 60);

impl ServerConfig {
    /// A config with defaults for everything but the database file.
    pub fn new(db_path: impl Into<PathBuf>) -> Self {
        ServerConfig { db_path: db_path.into(), ..ServerConfig::default() }
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 8080)),
            static_dir: None,
            db_path: PathBuf::from("data/todo.sqlite"),
            auth_mode: AuthMode::Cookie,
            token_ttl: DEFAULT_TOKEN_TTL,
            test_hooks: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_mode_parses_case_insensitively() {
        assert_eq!("Bearer".parse::<AuthMode>(), Ok(AuthMode::Bearer));
        assert_eq!("cookie".parse::<AuthMode>(), Ok(AuthMode::Cookie));
        assert!("basic".parse::<AuthMode>().is_err());
    }
}
