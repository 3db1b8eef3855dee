//! `rigor help [COMMAND|TOPIC]`: a command's full help, as clap's own help subcommand would
//! print it, or a short topic page saying where its reference is and what it covers.

use crate::exit::Exit;
use crate::failure::Failure;
use clap::CommandFactory;

/// Flags of `rigor help`.
#[derive(clap::Args, Debug)]
pub struct HelpArgs {
    /// A command (load, run, bench, compare, bisect) or a topic (config, results).
    pub topic: Option<String>,
}

/// The topics beside the commands, each with its page.
const TOPICS: &[(&str, &str)] = &[
    (
        "config",
        "\
rigor.toml: the reference of every table and key, with types, defaults and examples, is
docs/config.md in the repository.

`rigor run` reads rigor.toml in the current folder (or -f FILE). Its top-level tables:
  [variables]          values for {{name}} substitution
  [jobs.NAME]          an application to build and start, or a load to drive
  [scenarios.NAME]     which job is the application, which the load, and what varies
  [profiles.NAME]      CPU sets and priority per role, plus variables
  [measurements.ID]    unit, direction and label of a measurement id
Any other top-level key, and any unknown key in a table, is an error.
",
    ),
    (
        "results",
        "\
Results: the result JSON (rigor.run.v1, rigor.compare.v1, rigor.load.v1) and every measurement
id with its unit and direction are in docs/results.md in the repository; every warning kind with
its meaning and advice is in docs/warnings.md.

Measurement ids (unit, better):
",
    ),
];

/// Prints the help asked for; an unknown name is a usage error that lists what there is.
pub fn execute(args: &HelpArgs) -> Result<Exit, Failure> {
    crate::console::out(&page(args.topic.as_deref())?);
    Ok(Exit::Success)
}

/// The page for `topic`: the whole CLI's help without one, a command's full help, or a topic.
fn page(topic: Option<&str>) -> Result<String, Failure> {
    let mut cli = super::Cli::command();
    cli.build();
    let Some(topic) = topic else {
        return Ok(cli.render_long_help().to_string());
    };
    if let Some(command) = cli.find_subcommand_mut(topic) {
        return Ok(command.render_long_help().to_string());
    }
    match TOPICS.iter().find(|(name, _)| *name == topic) {
        Some(("results", page)) => Ok(format!("{page}{}", measurement_ids())),
        Some((_, page)) => Ok(page.to_string()),
        None => {
            let commands: Vec<String> = cli
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            let topics: Vec<&str> = TOPICS.iter().map(|(name, _)| *name).collect();
            Err(Failure::usage(format!(
                "no help for `{topic}`: commands are {}; topics are {}",
                commands.join(", "),
                topics.join(", ")
            )))
        }
    }
}

/// The catalogue's ids, one a line: `  load.rps  1/s  higher`.
fn measurement_ids() -> String {
    let width = crate::measurements::CATALOGUE
        .iter()
        .map(|m| m.id.len())
        .max()
        .unwrap_or(0);
    crate::measurements::CATALOGUE
        .iter()
        .map(|m| {
            let better = match m.direction {
                rigor_stats::Direction::HigherIsBetter => "higher",
                rigor_stats::Direction::LowerIsBetter => "lower",
            };
            format!("  {:<width$}  {:<6}  {better}\n", m.id, m.unit)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn every_help_page_says_where_the_docs_are() {
        let mut cli = super::super::Cli::command();
        cli.build();
        assert!(cli
            .render_long_help()
            .to_string()
            .contains("docs/config.md"));
        for name in ["load", "run", "bench", "compare"] {
            let page = cli
                .find_subcommand_mut(name)
                .unwrap()
                .render_long_help()
                .to_string();
            for doc in ["docs/cli.md", "docs/config.md", "docs/results.md"] {
                assert!(page.contains(doc), "{name}: {page}");
            }
        }
    }

    #[test]
    fn commands_and_topics_have_help_and_anything_else_is_a_usage_error() {
        assert!(page(None).unwrap().contains("Usage: rigor <COMMAND>"));
        assert!(page(Some("run"))
            .unwrap()
            .contains("Usage: rigor run [OPTIONS]"));
        assert!(page(Some("config")).unwrap().contains("[scenarios.NAME]"));
        assert!(page(Some("results")).unwrap().contains("docs/results.md"));
        let e = page(Some("nope")).unwrap_err();
        assert_eq!(e.exit(), Exit::Usage);
        assert_eq!(
            e.text(),
            "no help for `nope`: commands are load, run, bench, compare, history, bisect, agent, help; topics are config, results"
        );
        let parsed = super::super::Cli::try_parse_from(["rigor", "help", "config"]).unwrap();
        assert!(matches!(parsed.command, super::super::Command::Help(_)));
    }

    #[test]
    fn the_results_topic_lists_every_measurement_id() {
        let ids = measurement_ids();
        for m in crate::measurements::CATALOGUE {
            assert!(ids.contains(m.id), "{}", m.id);
        }
        assert!(ids.contains("load.rps"));
    }
}
