//! `cargo xtask bench` runs this after building everything: cachet's Service Worker against a Workbox 7
//! Service Worker, the floor (an empty SW answering from memory) and no SW at all, in one headless
//! Chromium, each variant at its own 127.0.0.1 origins. It prints p50 / p95 per workload and variant
//! with cachet's ratios, the sizes of every artifact, and the goals of issue 9, and rewrites the
//! generated part of BENCHMARKS.md.
//!
//! It never asserts on speed; it fails when a variant answers wrongly (bodies checked in the page,
//! request counts checked at the server), so that it cannot silently time nothing.

mod browser;
mod cdp;
mod checks;
mod cold_trace;
mod invalidation;
mod lazy_compiles;
mod profile;
mod report;
mod server;
mod sizes;
mod variants;
mod wasm_names;
mod workload_model;
mod workloads;

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::Result;
use clap::Parser;

use variants::Variant;
use workloads::{Settings, Site};

#[derive(Parser)]
#[command(name = "bench", about = "cachet vs Workbox vs the empty-SW floor, in headless Chromium")]
struct Args {
    /// Few iterations and small caches: checks that everything works; writes no BENCHMARKS.md
    /// unless `--out` is given.
    #[arg(long)]
    quick: bool,
    /// Where to write the results (default: BENCHMARKS.md at the workspace root, for a full run).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run only these variants (`none`, `floor`, `workbox`, `cachet`), e.g. to profile one; the results
    /// are then printed only, unless `--out` is given.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Print the sizes (and where the bytes go) only: no browser, no BENCHMARKS.md.
    #[arg(long)]
    sizes_only: bool,
    /// Entries stored for the small and the large invalidation case (default 1000,10000; quick 300,600).
    #[arg(long, value_delimiter = ',')]
    cached: Option<Vec<u64>>,
    /// Run only the rows whose title contains one of these (case-insensitive), e.g. `--rows cold` for the
    /// cold start and its step-by-step trace; `profile` names the profile phase. The results are then
    /// printed only, unless `--out` is given.
    #[arg(long, value_delimiter = ',')]
    rows: Vec<String>,
    /// How many cold starts to time, to trace step by step, and navigations with a stopped worker at
    /// each round trip (default 20, 15 and 20; quick 3 each).
    #[arg(long)]
    cold: Option<u64>,
    /// A flag for Chromium, after the usual ones (repeatable), e.g.
    /// `--chromium-flag=--js-flags=--no-wasm-lazy-compilation`. The results are then printed only,
    /// unless `--out` is given.
    #[arg(long = "chromium-flag", allow_hyphen_values = true)]
    chromium_flags: Vec<String>,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let args = Args::parse();
    let root = cachet_e2e::workspace_root();
    variants::check_built(&root)?;
    let mut settings = if args.quick { Settings::QUICK } else { Settings::FULL };
    if let Some(cached) = &args.cached {
        let [small, large] = cached[..] else {
            anyhow::bail!("--cached takes two sizes, e.g. --cached 1000,10000");
        };
        if small < 200 || large <= small {
            anyhow::bail!("--cached {small},{large}: expected 200 <= small < large");
        }
        settings.cached = (small, large);
    }
    if let Some(cold) = args.cold {
        if cold == 0 {
            anyhow::bail!("--cold 0: expected at least one cold start");
        }
        (settings.cold, settings.cold_traced, settings.nav) = (cold, cold, cold);
    }
    let rows = workloads::Rows::new(&args.rows);
    let custom = args.cached.is_some()
        || args.cold.is_some()
        || !args.rows.is_empty()
        || !args.chromium_flags.is_empty();
    let command = if args.quick { "cargo xtask bench --quick" } else { "cargo xtask bench" };
    let started = Instant::now();
    let load_before = first_line("uptime", &[]);
    let sizes = sizes::measure(&root)?;
    if args.sizes_only {
        println!("{}\n{}", report::sizes_table(&sizes), sizes::attribution(&root)?);
        return Ok(());
    }

    let served = tempfile::tempdir()?;
    let mut sites = Vec::new();
    let variants: Vec<Variant> = if args.only.is_empty() {
        Variant::ALL.to_vec()
    } else {
        args.only.iter().map(|name| Variant::from_key(name)).collect::<Result<_>>()?
    };
    for variant in variants.iter().copied() {
        let dir = served.path().join(variant.key());
        variants::assemble(variant, &root, &dir, false)?;
        let traced_dir = served.path().join(format!("{}-traced", variant.key()));
        variants::assemble(variant, &root, &traced_dir, true)?;
        // Origins of their own, so that each starts with empty storage: the timed runs, the invalidation
        // runs, and the two parts of the profile phase.
        let site = Site {
            variant,
            main: server::serve(dir.clone()).await?,
            fresh: server::serve(dir.clone()).await?,
            traced: server::serve(traced_dir.clone()).await?,
            profiled: server::serve(traced_dir).await?,
            cold: server::serve(dir).await?,
            apq: match variant {
                Variant::Cachet => {
                    let apq_dir = served.path().join("cachet-apq");
                    variants::assemble_persisted(&root, &apq_dir)?;
                    Some(server::serve(apq_dir).await?)
                }
                _ => None,
            },
        };
        println!(
            "[bench] {:<8} {} (and {} for the invalidation runs)",
            variant.name(),
            site.main.url,
            site.fresh.url
        );
        sites.push(site);
    }
    let browser = browser::Browser::start(&args.chromium_flags).await?;
    let progress = |line: &str| println!("[bench] {line}");
    let (measured, notes) = workloads::run_all(&browser, &sites, settings, &rows, &progress).await?;
    let mut cold_steps = Vec::new();
    if rows.wants(cold_trace::TITLE) {
        progress("cold starts, step by step: traced workers");
        cold_steps = cold_trace::run(&browser, &sites, settings.cold_traced).await?;
        println!("\n{}", cold_trace::table(&cold_steps));
    }
    let mut compiles = String::new();
    if rows.wants(lazy_compiles::TITLE) {
        if let Some(site) = sites.iter().find(|site| site.variant == Variant::Cachet) {
            progress("cold starts: the code compiled on the way (cachet, a v8.wasm trace)");
            let lazy = lazy_compiles::run(&browser, site, settings.cold_traced).await?;
            // The functions compiled before the answer are the start module's (the whole engine
            // takes over after the answer): named from its build, not the whole engine's.
            let names = lazy_compiles::names_for(&root, sizes::BENCH_SW_DIR, "cachet-sw-start_bg.wasm");
            compiles = lazy_compiles::table(&lazy, names.as_ref(), 20);
            std::fs::write(
                cachet_e2e_target().join("lazy-compiles.csv"),
                lazy_compiles::csv(&lazy, names.as_ref()),
            )?;
            println!("\n{compiles}");
        }
    }
    let (mut breakdowns, mut cpu_profiles) = (Vec::new(), Vec::new());
    if rows.wants("profile") {
        progress("profile phase: traced workers");
        (breakdowns, cpu_profiles) = profile::run(&browser, &sites, settings.cached.1).await?;
    }
    drop(browser);

    let machine = report::Machine {
        cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu_model: cpu_model(),
        chromium: first_line("/usr/bin/chromium", &["--version"]),
        date: first_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        load_before,
        load_after: first_line("uptime", &[]),
    };
    let iterations = format!(
        "hits {}+{}, miss {}+{}, mutation {}+{}, invalidation event {}+{}, hook {}+{}, invalidate-tags {}+{} \
         (each after seeding its 100 entries again), misses at each cache size {}+{}, cold starts {} (traced step by step: {}), \
         navigations with a stopped worker {}+1 at each round trip; the two cache sizes: {} and {} entries",
        settings.hit.0,
        settings.hit.1,
        settings.miss.0,
        settings.miss.1,
        settings.mutation.0,
        settings.mutation.1,
        settings.event.0,
        settings.event.1,
        settings.hook.0,
        settings.hook.1,
        settings.invalidate.0,
        settings.invalidate.1,
        settings.miss_at_size.0,
        settings.miss_at_size.1,
        settings.cold,
        settings.cold_traced,
        settings.nav,
        settings.cached.0,
        settings.cached.1
    );
    let attribution = sizes::attribution(&root)?;
    let breakdowns = format!(
        "{}\n{}\n{}\n{}",
        cold_trace::table(&cold_steps),
        compiles,
        profile::tables(&breakdowns),
        profile::cpu_tables(&cpu_profiles)
    );
    let generated = report::render(&report::Run {
        machine: &machine,
        command,
        iterations: &iterations,
        measured: &measured,
        sizes: &sizes,
        attribution: &attribution,
        breakdowns: &breakdowns,
        notes: &notes,
    });
    println!("\n{generated}\n");
    let complete = !args.quick && !custom && variants.len() == Variant::ALL.len();
    let out = args.out.or_else(|| complete.then(|| root.join("BENCHMARKS.md")));
    if let Some(out) = out {
        report::write_into(&out, &generated)?;
        println!("[bench] wrote {}", out.display());
    }
    println!("[bench] done in {:.0?}", started.elapsed());
    Ok(())
}

/// Where the run keeps what it does not put in BENCHMARKS.md (the CPU profiles): `target/bench/`.
fn cachet_e2e_target() -> PathBuf {
    let dir = cachet_e2e::workspace_root().join("target/bench");
    let _ = std::fs::create_dir_all(&dir);
    dir
}

fn first_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .and_then(|output| {
            String::from_utf8_lossy(&output.stdout).lines().next().map(|line| line.trim().to_owned())
        })
        .unwrap_or_else(|| format!("({program} unavailable)"))
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, model)| model.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}
