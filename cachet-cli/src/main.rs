//! The `cachet` command. Exit codes: 0 done, 1 generated files out of date (`--check`), 2 error.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cachet", version, about = "Sets a Yew app up for cachet")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Regenerate the app's cachet files from cachet.config.json.
    Generate {
        /// The app directory (holding cachet.config.json).
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// Write nothing; exit 1 when a generated file is out of date.
        #[arg(long)]
        check: bool,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Generate { dir, check: true } => match cachet_cli::stale_files(&dir) {
            Ok(stale) if stale.is_empty() => ExitCode::SUCCESS,
            Ok(stale) => {
                eprintln!("out of date (run `cachet generate`): {}", stale.join(", "));
                ExitCode::from(1)
            }
            Err(error) => fail(&error),
        },
        Command::Generate { dir, check: false } => match cachet_cli::generate(&dir) {
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

fn fail(error: &cachet_cli::CliError) -> ExitCode {
    eprintln!("cachet: {error}");
    ExitCode::from(2)
}
