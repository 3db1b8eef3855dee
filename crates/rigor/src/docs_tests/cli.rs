//! docs/cli.md against clap's commands: every flag of `rigor load`, `run`, `bench`, `compare` and `bisect` has a row
//! with its default, and every documented flag exists.

use super::{cells, heading, read};
use clap::CommandFactory;
use std::collections::BTreeSet;

/// The lines of cli.md's `## \`rigor NAME\`` section.
fn cli_section<'a>(doc: &'a str, name: &str) -> Vec<&'a str> {
    let title = format!("`rigor {name}`");
    doc.lines()
        .skip_while(|l| heading(l) != Some((2, title.as_str())))
        .skip(1)
        .take_while(|l| !matches!(heading(l), Some((level, _)) if level <= 2))
        .collect()
}

/// How a flag is spelled at the start of its row: `-c, --connections` or `--rate`.
fn spelling(arg: &clap::Arg) -> Option<String> {
    let long = arg.get_long()?;
    Some(match arg.get_short() {
        Some(s) => format!("-{s}, --{long}"),
        None => format!("--{long}"),
    })
}

/// A row's first cell without its code spans' backticks.
fn plain(cell: &str) -> String {
    cell.replace('`', "")
}

#[test]
fn every_flag_has_a_row_with_its_default_in_cli_md() {
    let doc = read("docs/cli.md");
    let cli = crate::cli::Cli::command();
    let mut wrong = Vec::new();
    for name in [
        "load", "run", "bench", "compare", "history", "bisect", "agent", "init",
    ] {
        let command = cli.find_subcommand(name).expect("subcommand");
        let rows: Vec<Vec<String>> = cli_section(&doc, name)
            .into_iter()
            .filter_map(cells)
            .collect();
        for arg in command.get_arguments().filter(|a| !a.is_positional()) {
            let Some(flag) = spelling(arg) else { continue };
            let row = rows.iter().find(|r| {
                let first = plain(&r[0]);
                first == flag || first.starts_with(&format!("{flag} "))
            });
            let Some(row) = row else {
                wrong.push(format!("rigor {name} {flag}: no row"));
                continue;
            };
            for default in arg.get_default_values() {
                let default = default.to_string_lossy();
                if !row
                    .get(1)
                    .is_some_and(|c| plain(c).contains(default.as_ref()))
                {
                    wrong.push(format!(
                        "rigor {name} {flag}: default {default} not in {row:?}"
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/cli.md (option | default | meaning): {wrong:?}"
    );
}

#[test]
fn every_flag_cli_md_documents_exists() {
    let doc = read("docs/cli.md");
    let cli = crate::cli::Cli::command();
    let mut unknown = Vec::new();
    for name in [
        "load", "run", "bench", "compare", "history", "bisect", "agent", "init",
    ] {
        let command = cli.find_subcommand(name).expect("subcommand");
        let flags: BTreeSet<String> = command.get_arguments().filter_map(spelling).collect();
        for row in cli_section(&doc, name).into_iter().filter_map(cells) {
            let first = plain(&row[0]);
            if !first.starts_with('-') {
                continue;
            }
            if !flags
                .iter()
                .any(|f| first == *f || first.starts_with(&format!("{f} ")))
            {
                unknown.push(format!("rigor {name}: {first}"));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "cli.md documents flags rigor does not have: {unknown:?}"
    );
}
