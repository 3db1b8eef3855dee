//! `rigor help [COMMAND|TOPIC]`: a command's full help, as clap's own help subcommand would
//! print it, or a whole reference (cli, config, results, warnings). The references are the
//! Markdown pages of docs/, compiled into the binary, so an installed rigor prints them with no
//! repository at hand and the pages and the help never differ.

use crate::exit::Exit;
use crate::failure::Failure;
use clap::CommandFactory;

/// Flags of `rigor help`.
#[derive(clap::Args, Debug)]
pub struct HelpArgs {
    /// A command (load, run, bench, compare, …) or a reference: cli, config, results, warnings.
    pub topic: Option<String>,
}

/// The references beside the commands, each the whole page of docs/ it is compiled from.
pub const TOPICS: &[(&str, &str)] = &[
    ("cli", include_str!("../../../../docs/cli.md")),
    ("config", include_str!("../../../../docs/config.md")),
    ("results", include_str!("../../../../docs/results.md")),
    ("warnings", include_str!("../../../../docs/warnings.md")),
];

/// Prints the help asked for; an unknown name is a usage error that lists what there is.
pub fn execute(args: &HelpArgs) -> Result<Exit, Failure> {
    crate::console::report(&page(args.topic.as_deref())?)
        .map_err(|e| Failure::from(anyhow::anyhow!(e)))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn every_help_page_names_the_built_in_references_and_no_repository_path() {
        let mut cli = super::super::Cli::command();
        cli.build();
        let mut pages = vec![("rigor".to_string(), cli.render_long_help().to_string())];
        for command in cli.get_subcommands_mut() {
            let name = command.get_name().to_string();
            pages.push((name, command.render_long_help().to_string()));
        }
        for (name, page) in pages.iter().filter(|(n, _)| n != "help") {
            for (topic, _) in TOPICS {
                assert!(
                    page.contains(&format!("rigor help {topic}")),
                    "{name}: {page}"
                );
            }
            assert!(
                !page.contains("docs/"),
                "{name} points into the repository: {page}"
            );
        }
    }

    #[test]
    fn commands_and_topics_have_help_and_anything_else_is_a_usage_error() {
        assert!(page(None).unwrap().contains("Usage: rigor <COMMAND>"));
        assert!(page(Some("run"))
            .unwrap()
            .contains("Usage: rigor run [OPTIONS]"));
        assert!(page(Some("config")).unwrap().contains("[scenarios.NAME]"));
        let e = page(Some("nope")).unwrap_err();
        assert_eq!(e.exit(), Exit::Usage);
        assert!(
            e.text()
                .starts_with("no help for `nope`: commands are load, run,"),
            "{}",
            e.text()
        );
        assert!(
            e.text()
                .ends_with("; topics are cli, config, results, warnings"),
            "{}",
            e.text()
        );
        let parsed = super::super::Cli::try_parse_from(["rigor", "help", "config"]).unwrap();
        assert!(matches!(parsed.command, super::super::Command::Help(_)));
    }

    #[test]
    fn each_topic_is_its_whole_page_of_docs() {
        for (topic, file) in [
            ("cli", "docs/cli.md"),
            ("config", "docs/config.md"),
            ("results", "docs/results.md"),
            ("warnings", "docs/warnings.md"),
        ] {
            assert_eq!(
                page(Some(topic)).unwrap(),
                crate::docs_tests::read(file),
                "{topic}"
            );
        }
        let results = page(Some("results")).unwrap();
        for m in crate::measurements::CATALOGUE {
            assert!(results.contains(m.id), "{}", m.id);
        }
    }
}
