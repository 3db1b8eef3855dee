//! `rigor bench`'s flags checked (every problem in one pass) and turned into the `rigor run`
//! options of the generated config.

use crate::cli::bench::BenchArgs;
use crate::cli::{Cli, Command};
use crate::config::{Problems, MAX_ITERATIONS};
use crate::failure::Failure;
use crate::options::run::{refused, RunOptions};
use clap::Parser;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Iterations per command without `-i`: hyperfine's least number of runs.
pub const DEFAULT_ITERATIONS: usize = 10;
/// Iterations per server with `--url` (each start carries a load of a few seconds): the fewest
/// paired rounds whose signed-rank test can reach 95%.
pub const DEFAULT_URL_ITERATIONS: usize = 6;
/// Load before the measured window of each server start, with `--url`.
pub const URL_WARMUP: &str = "1s";
/// How long a name may be: it heads a table column.
const MAX_NAME: usize = 40;

/// A checked bench: the commands, their names (the variants), and the server mode's load.
#[derive(Debug, Clone)]
pub struct Bench {
    pub commands: Vec<String>,
    /// One per command, in order; the first is the baseline.
    pub names: Vec<String>,
    /// Where the commands run: the folder rigor was started in.
    pub dir: PathBuf,
    pub iterations: usize,
    /// `--url`: the commands are servers loaded at this URL.
    pub server: Option<Server>,
}

/// The load of `--url`.
#[derive(Debug, Clone)]
pub struct Server {
    pub url: String,
    pub connections: usize,
    pub duration: Duration,
}

impl Bench {
    /// Checks the flags; every problem is named, each with its flag or command.
    pub fn from_args(args: &BenchArgs) -> Result<Bench, Failure> {
        let mut p = Problems::default();
        for (i, c) in args.commands.iter().enumerate() {
            if c.trim().is_empty() {
                p.add(format!(
                    "command {} is empty: give the command line to run",
                    i + 1
                ));
            }
        }
        for (flag, n) in [
            ("-i/--iterations", args.iterations),
            ("--until-conclusive", args.until_conclusive),
        ] {
            match n {
                Some(0) => p.add(format!("{flag} must be at least 1")),
                Some(n) if n > MAX_ITERATIONS => p.add(format!(
                    "{flag} {n} is more than the limit of {MAX_ITERATIONS} iterations per command"
                )),
                _ => {}
            }
        }
        let planned = args.iterations.unwrap_or(if args.url.is_some() {
            DEFAULT_URL_ITERATIONS
        } else {
            DEFAULT_ITERATIONS
        });
        if let Some(max @ 1..) = args.until_conclusive.filter(|max| *max < planned) {
            let given = match args.iterations {
                Some(_) => format!("-i {planned}"),
                None => format!("the {planned} iterations a bench starts with (-i)"),
            };
            p.add(format!(
                "--until-conclusive={max} is below {given}: the cap counts every iteration of a \
                 command, so it could never add a round; give a MAX above {planned}, or a \
                 smaller -i"
            ));
        }
        if let Some(store) = &args.store {
            let spec = crate::history::StoreSpec::parse(store);
            if let Some(e) = spec
                .unusable()
                .or_else(|| crate::options::store::cannot_write(&spec))
            {
                p.add(e);
            }
        }
        // Said before anything is written, as `rigor run` refuses the same run.
        if let Some(n @ 1..) = args.iterations {
            if args.until_conclusive.is_none() && !args.allow_inconclusive {
                if let Some(w) = crate::analysis::sufficiency::never_enough(n, 0) {
                    p.add(format!(
                        "-i {n}: {}; {}, or pass --allow-inconclusive to run it anyway",
                        w.message, w.advice
                    ));
                }
            }
        }
        if let Some(id) = &args.primary {
            p.take(crate::measurements::validate(id).map_err(String::from));
        }
        p.take(crate::analysis::gate::Strictness::parse(
            args.strict.as_deref(),
        ));
        let names = names(args, &mut p);
        let server = args.url.as_ref().map(|url| server(args, url, &mut p));
        if args.url.is_some() && args.warmup > 0 {
            p.add(
                "--warmup runs each command to completion; with --url the commands are servers \
                 (each start has a load warmup of its own)"
                    .into(),
            );
        }
        let dir = std::env::current_dir()
            .map_err(|e| Failure::from(anyhow::anyhow!("the current folder: {e}")))?;
        if !p.is_empty() {
            return Err(refused(&p));
        }
        let iterations = planned;
        Ok(Bench {
            commands: args.commands.clone(),
            names,
            dir,
            iterations,
            server,
        })
    }
}

/// The variants' names: `-n` for each command, else A, B, C… (C1, C2… past 26 commands).
fn names(args: &BenchArgs, p: &mut Problems) -> Vec<String> {
    let n = args.commands.len();
    if args.names.is_empty() {
        return (0..n)
            .map(|i| match u8::try_from(i) {
                Ok(i) if n <= 26 => char::from(b'A' + i).to_string(),
                _ => format!("C{}", i + 1),
            })
            .collect();
    }
    if args.names.len() != n {
        p.add(format!(
            "-n/--name given {} times for {n} commands: name every command, in order, or none",
            args.names.len()
        ));
    }
    for (i, name) in args.names.iter().enumerate() {
        // A name starts with a letter or digit: `.` or `-x` reads as a path or a flag.
        let ok = name.len() <= MAX_NAME
            && name.starts_with(|c: char| c.is_ascii_alphanumeric())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
        if !ok {
            p.add(format!(
                "-n/--name `{name}`: a name is 1 to {MAX_NAME} letters, digits, `_`, `-` or `.`, \
                 starting with a letter or digit"
            ));
        } else if args.names[..i].contains(name) {
            p.add(format!(
                "-n/--name `{name}` is given twice: each command needs its own"
            ));
        }
    }
    args.names.clone()
}

/// `--url` with its `-c` and `-d`.
fn server(args: &BenchArgs, url: &str, p: &mut Problems) -> Server {
    if let Err(e) = rigor_load::url_host_port(url) {
        p.add(format!("--url {url}: {e}"));
    }
    if args.connections == 0 {
        p.add("-c/--connections must be at least 1".into());
    }
    // The same limits the generated config is checked against, said of the flag the user typed.
    let engine = rigor_load::MAX_CONNECTIONS as u64;
    let (max, why) = match crate::config::Limits::this_machine().max_connections() {
        Some(files) if files < engine => (
            files,
            "this machine's open-file limit allows (raise it with `ulimit -n`)",
        ),
        _ => (engine, "one load may open"),
    };
    if args.connections as u64 > max {
        p.add(format!(
            "-c/--connections {} is more than the {max} connections {why}",
            args.connections
        ));
    }
    let duration = match crate::duration::parse_duration(&args.duration) {
        Ok(d) if !d.is_zero() => d,
        Ok(_) => {
            p.add("-d/--duration must be more than 0".into());
            Duration::ZERO
        }
        Err(e) => {
            p.add(format!("-d/--duration: {e}"));
            Duration::ZERO
        }
    };
    Server {
        url: url.to_string(),
        connections: args.connections,
        duration,
    }
}

/// The `rigor run` options of the generated config at `file`, made from the flags a user would
/// type, so a bench is exactly the run `rigor run -f OUT_DIR/bench.toml` makes.
pub fn run_options(args: &BenchArgs, bench: &Bench, file: &Path) -> Result<RunOptions, Failure> {
    let mut argv: Vec<String> = vec!["rigor".into(), "run".into(), "-f".into()];
    argv.push(file.display().to_string());
    let mut flag = |name: &str, value: String| {
        argv.push(name.to_string());
        argv.push(value);
    };
    flag("-s", super::config::SCENARIO.into());
    flag("-i", bench.iterations.to_string());
    flag("--threshold", format!("{}%", args.threshold));
    flag("--out-dir", args.out_dir.display().to_string());
    if let Some(max) = args.until_conclusive {
        flag("--until-conclusive", max.to_string());
    }
    if let Some(primary) = &args.primary {
        flag("--primary", primary.clone());
    }
    if let Some(seed) = args.seed {
        flag("--seed", seed.to_string());
    }
    for (name, path) in [
        ("--json", &args.json),
        ("--markdown", &args.markdown),
        ("--html", &args.html),
    ] {
        if let Some(path) = path {
            flag(name, path.display().to_string());
        }
    }
    match &args.store {
        Some(store) => flag("--store", store.clone()),
        None => argv.push("--no-store".into()),
    }
    if args.fail_on_regression {
        argv.push("--fail-on-regression".into());
    }
    if let Some(kinds) = &args.strict {
        argv.push(format!("--strict={}", kinds.join(",")));
    }
    if args.allow_inconclusive {
        argv.push("--allow-inconclusive".into());
    }
    let cli = Cli::try_parse_from(argv).map_err(|e| Failure::usage(e.to_string()))?;
    let Command::Run(run) = cli.command else {
        return Err(Failure::usage("rigor bench: not a run"));
    };
    RunOptions::from_args(&run)
}
