//! The `cachet` command: `init [--trunk]`, `add auth|graphql|push`, `generate`, `doctor`. Exit codes: 0 done,
//! 1 generated files out of date (`generate --check`) or something missing (`doctor`), 2 error (the message names the file and the key).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cachet", version, about = "Sets a Yew app up for cachet")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Feature {
    /// Auth: `features.auth.enabled`, type `cookie` unless the config already names one.
    Auth,
    /// GraphQL: `features.graphql.enabled`, endpoints `["/graphql"]` unless already set.
    Graphql,
    /// Server push: `features.push.enabled` (cookie auth or none; the notification is edited in the config).
    Push,
}

/// `features.auth.type`, for `cachet add auth --type`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum AuthTypeArg {
    /// An httpOnly session cookie.
    Cookie,
    /// `Authorization: Bearer <token>`, the token in page memory only.
    Bearer,
    /// The app's own adapter.
    Custom,
}

impl From<AuthTypeArg> for cachet_core::config::AuthType {
    fn from(arg: AuthTypeArg) -> Self {
        match arg {
            AuthTypeArg::Cookie => cachet_core::config::AuthType::Cookie,
            AuthTypeArg::Bearer => cachet_core::config::AuthType::Bearer,
            AuthTypeArg::Custom => cachet_core::config::AuthType::Custom,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Create cachet.config.json (both features off) if it is missing, and generate the files; with
    /// --trunk, also wire the trunk app (Cargo.toml, index.html, Trunk.toml).
    Init {
        /// The app directory.
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// Wire a trunk-built Yew app: add cachet-kit to Cargo.toml, the worker links to index.html,
        /// the build-stamp hook to Trunk.toml.
        #[arg(long)]
        trunk: bool,
        /// With --trunk: depend on cachet-kit at this path (default: the checkout this CLI was built
        /// from, else crates.io).
        #[arg(long, value_name = "DIR", conflicts_with = "git")]
        path: Option<String>,
        /// With --trunk: depend on cachet-kit from this git repository.
        #[arg(long, value_name = "URL")]
        git: Option<String>,
    },
    /// Name what is missing for the Service Worker and the agent to load: in index.html, Trunk.toml,
    /// the generated files, and (with --dist) a built dist/. Exit 1 when something is.
    Doctor {
        /// The app directory.
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// The built site to inspect (relative to --dir), e.g. `dist`.
        #[arg(long, value_name = "DIR")]
        dist: Option<PathBuf>,
    },
    /// Turn a feature on in cachet.config.json and regenerate.
    Add {
        /// The feature.
        #[arg(value_enum)]
        feature: Feature,
        /// With `auth`: the auth type, written to `features.auth.type` (default: the config's, else
        /// cookie).
        #[arg(long = "type", value_enum, value_name = "TYPE")]
        auth_type: Option<AuthTypeArg>,
        /// The app directory (holding cachet.config.json).
        #[arg(long, default_value = ".")]
        dir: PathBuf,
    },
    /// Regenerate the app's cachet files from cachet.config.json.
    Generate {
        /// The app directory (holding cachet.config.json).
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// Write nothing; exit 1 when a generated file is out of date.
        #[arg(long)]
        check: bool,
        /// Also copy the bundler-free API (client-injector.bundle.js, cachet-api.bundle.js and its wasm)
        /// built by trunk in DIR (default dist/cachet) into the app's cachet/.
        #[arg(long, value_name = "DIR", num_args = 0..=1, require_equals = true, default_missing_value = cachet_cli::DEFAULT_BUNDLES_DIR)]
        bundles: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Init { dir, trunk, path, git } => {
            let outcome = cachet_cli::init(&dir).and_then(|mut outcome| {
                if trunk {
                    let dependency = match (path, git) {
                        (Some(path), _) => cachet_cli::Dependency::Path(path),
                        (None, Some(url)) => cachet_cli::Dependency::Git(url),
                        (None, None) => cachet_cli::Dependency::default_for_this_cli(),
                    };
                    outcome.generated.extend(cachet_cli::wire_trunk_app(&dir, &dependency)?);
                }
                Ok(outcome)
            });
            let created = outcome.as_ref().is_ok_and(|outcome| outcome.config_written);
            let code = report(outcome);
            if created {
                println!(
                    "cachet: next, declare `mod cachet;` in your crate root and wrap the app in \
                     `<cachet::Provider>`{}",
                    if trunk {
                        ""
                    } else {
                        " (`--trunk` wires a trunk app: dependency, index.html, Trunk.toml)"
                    }
                );
            }
            code
        }
        Command::Doctor { dir, dist } => match cachet_cli::doctor(&dir, dist.as_deref()) {
            Ok(problems) if problems.is_empty() => {
                println!("cachet: nothing missing");
                ExitCode::SUCCESS
            }
            Ok(problems) => {
                for problem in &problems {
                    eprintln!("cachet doctor: {problem}");
                }
                ExitCode::from(1)
            }
            Err(error) => fail(&error),
        },
        Command::Add { feature: Feature::Auth, auth_type, dir } => {
            report(cachet_cli::add_auth(&dir, auth_type.map(Into::into)))
        }
        Command::Add { auth_type: Some(_), .. } => {
            eprintln!("error: --type is the auth type: it goes with `cachet add auth` only");
            ExitCode::from(2)
        }
        Command::Add { feature: Feature::Graphql, dir, .. } => report(cachet_cli::add_graphql(&dir)),
        Command::Add { feature: Feature::Push, dir, .. } => report(cachet_cli::add_push(&dir)),
        Command::Generate { dir, check: true, bundles } => match stale(&dir, bundles.as_deref()) {
            Ok(stale) if stale.is_empty() => ExitCode::SUCCESS,
            Ok(stale) => {
                eprintln!("out of date (run `cachet generate`): {}", stale.join(", "));
                ExitCode::from(1)
            }
            Err(error) => fail(&error),
        },
        Command::Generate { dir, check: false, bundles } => match generate(&dir, bundles.as_deref()) {
            Ok(changed) if changed.is_empty() => {
                println!("cachet: generated files are up to date");
                ExitCode::SUCCESS
            }
            Ok(changed) => {
                println!("cachet: wrote {}", changed.join(", "));
                ExitCode::SUCCESS
            }
            Err(error) => fail(&error),
        },
    }
}

/// The stale generated files, and bundles when asked for.
fn stale(dir: &Path, bundles: Option<&Path>) -> Result<Vec<String>, cachet_cli::CliError> {
    let mut stale: Vec<String> = cachet_cli::stale_files(dir)?.into_iter().map(str::to_owned).collect();
    if let Some(from) = bundles {
        stale.extend(cachet_cli::stale_bundles(dir, from)?);
    }
    Ok(stale)
}

/// Generates, then copies the bundles when asked for.
fn generate(dir: &Path, bundles: Option<&Path>) -> Result<Vec<String>, cachet_cli::CliError> {
    let mut written: Vec<String> = cachet_cli::generate(dir)?.into_iter().map(str::to_owned).collect();
    if let Some(from) = bundles {
        written.extend(cachet_cli::copy_bundles(dir, from)?);
    }
    Ok(written)
}

fn report(outcome: Result<cachet_cli::Outcome, cachet_cli::CliError>) -> ExitCode {
    match outcome {
        Ok(outcome) => {
            let mut written: Vec<&str> = Vec::new();
            if outcome.config_written {
                written.push("cachet.config.json");
            }
            written.extend(outcome.generated);
            if outcome.manifest_written {
                written.push("Cargo.toml (the cachet-kit features the config needs)");
            }
            if written.is_empty() {
                println!("cachet: nothing to change");
            } else {
                println!("cachet: wrote {}", written.join(", "));
            }
            ExitCode::SUCCESS
        }
        Err(error) => fail(&error),
    }
}

fn fail(error: &cachet_cli::CliError) -> ExitCode {
    eprintln!("cachet: {error}");
    ExitCode::from(2)
}
