//! Arbitrary argument vectors through clap and then through everything `rigor run` checks before
//! it starts (flags, config, plan): a usage error or a plan, never a panic. Seeded, so a failure
//! replays.

use super::prepare;
use crate::options::run::RunOptions;
use crate::{Cli, Command};
use clap::Parser;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const FLAGS: &[&str] = &[
    "-f",
    "-s",
    "-p",
    "-i",
    "--exclude",
    "--exclude-order",
    "--var",
    "--variants",
    "--seed",
    "--until-conclusive",
    "--primary",
    "--threshold",
    "--measurements",
    "--sample-interval",
    "--strict",
    "--fail-on-regression",
    "-c",
    "-t",
    "-d",
    "-w",
    "--pipeline",
    "--rate",
    "--timeout",
    "-H",
    "-m",
    "--cpus",
    "--json",
    "--",
    "-",
    "--help",
];

const VALUES: &[&str] = &[
    "0",
    "1",
    "3",
    "18446744073709551615",
    "-1",
    "99999999999999999999999h",
    "18446744074s",
    "0s",
    "250ms",
    "1e12",
    "nan",
    "0-99999999999",
    "5000",
    "0",
    "s",
    "s,s",
    "v,v",
    "v,w",
    "",
    ",",
    "a,,b",
    "port=1",
    "port={{port}}",
    "=",
    "n=",
    "1:1",
    "99999999999999999999:1",
    "load.rps",
    "app.nope",
    "2%",
    "-5%",
    "local",
    "other",
    "X: y",
    "bad header",
    "G T",
    "rigor.toml",
    "/nonexistent.toml",
    "ü",
    "\u{0}",
];

const GOOD: &str = r#"[variables]
port = 5000
[jobs.app]
command = "./app --port {{port}}"
[jobs.load]
url = "http://127.0.0.1:{{port}}/"
[scenarios.s]
application = "app"
load = "load"
matrix = { connections = [1, 2] }
[scenarios.s.variants.v]
[scenarios.s.variants.w]
[profiles.local]
load = { cpus = "0" }
"#;

fn argv(rng: &mut StdRng, config: &str) -> Vec<String> {
    let sub = ["run", "load", "compare", "nope", "help"][rng.random_range(0..5)];
    let mut args = vec!["rigor".to_string(), sub.to_string()];
    if sub == "run" && rng.random_bool(0.8) {
        args.extend(["-f".to_string(), config.to_string()]);
    }
    if sub == "load" {
        args.push("http://127.0.0.1:1/".into());
    }
    for _ in 0..rng.random_range(0..6) {
        if rng.random_bool(0.8) {
            args.push(FLAGS[rng.random_range(0..FLAGS.len())].into());
        }
        args.push(VALUES[rng.random_range(0..VALUES.len())].into());
    }
    args
}

#[test]
fn arbitrary_argument_vectors_are_usage_errors_or_plans_never_panics() {
    let dir = std::env::temp_dir().join(format!("rigor-cli-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("rigor.toml");
    std::fs::write(&config, GOOD).unwrap();
    let config = config.to_string_lossy().to_string();
    let mut rng = StdRng::seed_from_u64(0x0063_6c69);
    let (mut parsed, mut planned) = (0, 0);
    for _ in 0..3000 {
        let args = argv(&mut rng, &config);
        let Ok(cli) = Cli::try_parse_from(&args) else {
            continue;
        };
        parsed += 1;
        match &cli.command {
            Command::Run(a) => {
                if RunOptions::from_args(a).is_ok_and(|o| prepare(&o.selection).is_ok()) {
                    planned += 1;
                }
            }
            Command::Load(a) => {
                // What `rigor load` checks before it starts the engine.
                for h in &a.headers {
                    let _ = crate::options::load::parse_header(h);
                }
                if let Some(c) = &a.cpus {
                    let _ = crate::config::parse_cpu_list(c);
                }
            }
            Command::Bench(a) => {
                // What `rigor bench` checks before it writes or starts anything.
                let _ = crate::bench::Bench::from_args(a);
            }
            Command::Compare(_)
            | Command::Help(_)
            | Command::History(_)
            | Command::Bisect(_)
            | Command::Agent(_)
            | Command::Init(_) => {}
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        parsed > 200 && planned > 30,
        "parsed {parsed}, planned {planned}"
    );
}
