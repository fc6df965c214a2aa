//! Running steps and child processes with their output shown.

use std::ffi::OsStr;
use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

/// Runs `body` as a named step, printing its name before and its duration after.
pub fn step(name: &str, body: impl FnOnce() -> Result<()>) -> Result<()> {
    println!("[xtask] ==> {name}");
    let started = Instant::now();
    let result = body();
    match &result {
        Ok(()) => println!("[xtask] <== {name}: ok in {:.1?}", started.elapsed()),
        Err(error) => println!("[xtask] <== {name}: FAILED after {:.1?}: {error:#}", started.elapsed()),
    }
    result
}

/// Runs `program args` with `PATH` set to `path`, output inherited; fails on a non-zero exit.
pub fn command(path: &OsStr, program: &str, args: &[&str]) -> Result<()> {
    println!("[xtask] $ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .env("PATH", path)
        .status()
        .with_context(|| format!("could not start {program}"))?;
    if !status.success() {
        bail!("{program} {} exited with {status}", args.join(" "));
    }
    Ok(())
}

/// Runs `cargo args` (the cargo that runs xtask) with `PATH` set to `path`.
pub fn cargo(path: &OsStr, args: &[&str]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    command(path, &cargo, args)
}

/// The first line a command prints on stdout, or `None` when it cannot run.
pub fn output_line(program: &str, args: &[&str], path: &OsStr) -> Option<String> {
    let output = Command::new(program).args(args).env("PATH", path).output().ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8_lossy(&output.stdout).lines().next().map(str::to_owned)
}

/// Everything a command prints on stdout (empty when it cannot run).
pub fn output_all(program: &str, args: &[&str], path: &OsStr) -> String {
    Command::new(program)
        .args(args)
        .env("PATH", path)
        .output()
        .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
        .unwrap_or_default()
}

/// Runs `cargo args` with `PATH` set to `path` and the environment `env` added, showing its output as it
/// comes, and returns the lines of its stdout from `prefix` on (where they hold it); fails on a non-zero
/// exit.
pub fn cargo_lines(path: &OsStr, args: &[&str], env: &[(&str, &str)], prefix: &str) -> Result<Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    println!(
        "[xtask] $ {} cargo {}",
        env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
        args.join(" ")
    );
    let mut child = Command::new(&cargo)
        .args(args)
        .env("PATH", path)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("could not start {cargo}"))?;
    let mut found = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line?;
            println!("{line}");
            // libtest may print a test's name on the same line, before what the test printed.
            if let Some(at) = line.find(prefix) {
                found.push(line[at..].to_owned());
            }
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("cargo {} exited with {status}", args.join(" "));
    }
    Ok(found)
}
