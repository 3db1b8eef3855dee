//! `rigor bench 'CMD A' 'CMD B' …`: a comparison without a config file. The commands become the
//! variants of one scenario of a generated config (a command job, or with `--url` an application
//! under the built-in load), written to `OUT_DIR/bench.toml` and run by the same path as
//! `rigor run`, so every guard, probe, statistic and report applies; a verdict per command ends it.

mod config;
mod headline;
mod setup;
mod warmup;

use crate::cli::bench::BenchArgs;
use crate::exit::Exit;
use crate::failure::Failure;
use crate::{console, exec};

pub use setup::Bench;

/// Runs `rigor bench`: bad flags are usage failures (exit 2) before anything starts; then the
/// exit code is the one `rigor run` would give the generated config.
pub fn execute(args: &BenchArgs) -> Result<Exit, Failure> {
    let bench = Bench::from_args(args)?;
    // Before the warmup starts anything: the sentinel is forked while rigor is single-threaded,
    // and the handlers make Ctrl-C stop a warmup run as it stops a measured one.
    crate::exec::sentinel::start();
    crate::interrupt::install();
    let file = config::write(&bench, &args.out_dir)?;
    let options = setup::run_options(args, &bench, &file)?;
    let legend: Vec<String> = (bench.names.iter().zip(&bench.commands))
        .map(|(name, command)| format!("{name}: {command}"))
        .collect();
    console::err(&legend.join("\n"));
    warmup::run(&bench, args.warmup)?;
    exec::execute_then(&options, |result| {
        // The names again beside the verdict, which may be all that is read.
        let lines = crate::report::headline::fit_to_terminal(&headline::lines(result, &bench));
        console::report(&format!("\n{}\n", [legend, lines].concat().join("\n")))
    })
}
