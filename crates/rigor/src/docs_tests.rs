//! The documentation is checked against the code it describes: every `rigor.toml` key the
//! parser accepts has a row (type, default, example, meaning) in docs/config.md, every
//! measurement id of the catalogue a row in docs/results.md with its label, unit and direction,
//! every field of docs/rigor.run.v1.schema.json (which a test holds to real output) is explained
//! in docs/results.md, every flag of `rigor load`, `run` and `compare` has a row in docs/cli.md
//! with its default, and every link of the README and docs/ lands on a file and heading inside
//! the repository. Each list is read from the code (serde's fields, the catalogue, clap's
//! command), so a new key, id or flag without documentation fails here, and so does a documented
//! one that no longer exists.

use crate::config::keys::{self, Key};
use crate::measurements::CATALOGUE;
use clap::CommandFactory;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository root, where README.md and docs/ live.
fn root() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .canonicalize()
        .expect("repository root")
}

fn read(relative: &str) -> String {
    let path = root().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A Markdown heading: its level (`##` is 2) and its text.
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|&c| c == '#').count();
    (level > 0 && line[level..].starts_with(' ')).then(|| (level, line[level..].trim()))
}

/// The cells of a table row, split at unescaped `|`; `None` for other lines and separators.
fn cells(line: &str) -> Option<Vec<String>> {
    let line = line.trim();
    if !line.starts_with('|') || line.trim_matches(['|', '-', ':', ' ']).is_empty() {
        return None;
    }
    let mut out = vec![String::new()];
    let mut chars = line[1..].trim_end_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                out.last_mut().unwrap().push(chars.next().unwrap())
            }
            '|' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    Some(out.into_iter().map(|c| c.trim().to_string()).collect())
}

/// The `code spans` of a piece of Markdown.
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

// ---------------------------------------------------------------------------------------------
// docs/config.md

/// A table path as written in a heading (`[scenarios.NAME.variants.VARIANT]`) in the form the key
/// listing uses (`scenarios.NAME.variants.NAME`).
fn table_path(written: &str) -> String {
    written
        .split('.')
        .map(|part| match part {
            "ID" | "VARIANT" => "NAME",
            p => p,
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The tables a heading documents: each `[a.b]` code span in it.
fn tables_of(heading_text: &str) -> Vec<String> {
    code_spans(heading_text)
        .into_iter()
        .filter_map(|s| s.strip_prefix('[')?.strip_suffix(']'))
        .map(table_path)
        .collect()
}

/// The sections of config.md that document tables: the tables named by the heading, and the
/// lines up to the next heading that names a table or is at the same or a higher level. The
/// text before the first `##` documents the top level.
fn config_sections(doc: &str) -> Vec<(Vec<String>, Vec<&str>)> {
    let mut sections: Vec<(Vec<String>, usize, Vec<&str>)> = vec![(vec![String::new()], 0, vec![])];
    for line in doc.lines() {
        if let Some((level, text)) = heading(line) {
            let tables = tables_of(text);
            let current = sections.last().unwrap().1;
            if !tables.is_empty() {
                sections.push((tables, level, vec![]));
                continue;
            }
            if level <= current {
                sections.push((vec![], level, vec![]));
                continue;
            }
        }
        sections.last_mut().unwrap().2.push(line);
    }
    sections
        .into_iter()
        .filter(|(tables, _, _)| !tables.is_empty())
        .map(|(tables, _, lines)| (tables, lines))
        .collect()
}

/// The rows of a section whose first cell names `key` (for the top level: `[key…`).
fn key_rows(lines: &[&str], key: &Key) -> Vec<Vec<String>> {
    lines
        .iter()
        .filter_map(|l| cells(l))
        .filter(|row| {
            code_spans(&row[0]).iter().any(|span| {
                if key.table.is_empty() {
                    span.strip_prefix('[')
                        .is_some_and(|t| t.split(['.', ']']).next() == Some(key.name))
                } else {
                    *span == key.name
                }
            })
        })
        .collect()
}

#[test]
fn every_config_key_has_a_row_with_type_default_and_example_in_config_md() {
    let doc = read("docs/config.md");
    let sections = config_sections(&doc);
    let mut missing = Vec::new();
    for key in keys::all() {
        let rows: Vec<Vec<String>> = sections
            .iter()
            .filter(|(tables, _)| tables.contains(&key.table))
            .flat_map(|(_, lines)| key_rows(lines, &key))
            .collect();
        let wanted = if key.table.is_empty() { 2 } else { 5 };
        if !rows
            .iter()
            .any(|r| r.len() >= wanted && r.iter().all(|c| !c.is_empty()))
        {
            missing.push(key.path());
        }
    }
    assert!(
        missing.is_empty(),
        "docs/config.md has no row (key | type | default | example | meaning) under the heading \
         naming its table for: {missing:?}"
    );
}

#[test]
fn every_key_config_md_documents_exists() {
    let doc = read("docs/config.md");
    let keys = keys::all();
    let mut unknown = Vec::new();
    for (tables, lines) in config_sections(&doc) {
        if tables == [String::new()] {
            continue;
        }
        let known: BTreeSet<&str> = keys
            .iter()
            .filter(|k| tables.contains(&k.table))
            .map(|k| k.name)
            .collect();
        for row in lines
            .iter()
            .filter_map(|l| cells(l))
            .filter(|r| r.len() >= 5)
        {
            for span in code_spans(&row[0]) {
                if !known.contains(span) {
                    unknown.push(format!("{tables:?}: {span}"));
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "config.md documents keys the parser rejects: {unknown:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// docs/results.md

#[test]
fn every_measurement_id_has_a_row_with_label_unit_and_direction_in_results_md() {
    let doc = read("docs/results.md");
    let rows: Vec<Vec<String>> = doc.lines().filter_map(cells).collect();
    let mut wrong = Vec::new();
    for m in CATALOGUE {
        let better = match m.direction {
            rigor_stats::Direction::HigherIsBetter => "higher",
            rigor_stats::Direction::LowerIsBetter => "lower",
        };
        let expected = [
            format!("`{}`", m.id),
            m.name.into(),
            m.unit.into(),
            better.into(),
        ];
        match rows.iter().find(|r| r[0] == expected[0]) {
            None => wrong.push(format!("{}: no row", m.id)),
            Some(r) if r.len() < 5 || r[..4] != expected || r[4].is_empty() => wrong.push(format!(
                "{}: {r:?}, expected {expected:?} and a meaning",
                m.id
            )),
            Some(_) => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/results.md (id | table label | unit | better | meaning): {wrong:?}"
    );
}

#[test]
fn every_measurement_id_results_md_lists_is_in_the_catalogue() {
    let doc = read("docs/results.md");
    let unknown: Vec<String> = doc
        .lines()
        .filter_map(cells)
        .filter_map(|r| {
            r[0].strip_prefix('`')?
                .strip_suffix('`')
                .map(str::to_string)
        })
        .filter(|id| id.starts_with("app.") || id.starts_with("load."))
        .filter(|id| crate::measurements::info(id).is_none())
        .collect();
    assert!(
        unknown.is_empty(),
        "results.md lists ids the catalogue lacks: {unknown:?}"
    );
}

#[test]
fn results_md_documents_the_schema_file_and_the_warning_kinds() {
    let doc = read("docs/results.md");
    for link in ["rigor.run.v1.schema.json", "warnings.md"] {
        assert!(
            doc.contains(&format!("]({link}")),
            "results.md does not link {link}"
        );
    }
}

/// The property names of a schema object and of every object inside it.
fn property_names(schema: &serde_json::Value, out: &mut BTreeSet<String>) {
    match schema {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Object(props)) = map.get("properties") {
                out.extend(props.keys().cloned());
            }
            map.values().for_each(|v| property_names(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| property_names(v, out)),
        _ => {}
    }
}

#[test]
fn every_field_of_the_schema_is_explained_in_results_md() {
    let doc = read("docs/results.md");
    let schema: serde_json::Value =
        serde_json::from_str(&read("docs/rigor.run.v1.schema.json")).expect("schema JSON");
    // A field is a row of its table (`field` in the first cell), or a member named in a cell
    // such as `{steal_pct, busy_pct, throttle_events}`.
    let rows: Vec<Vec<String>> = doc.lines().filter_map(cells).collect();
    let first: BTreeSet<&str> = rows.iter().flat_map(|r| code_spans(&r[0])).collect();
    let anywhere: BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| r.iter().flat_map(|c| code_spans(c)))
        .flat_map(|span| span.split(|c: char| !(c.is_alphanumeric() || c == '_')))
        .collect();
    let mut top = BTreeSet::new();
    for part in ["", "build", "row", "iteration", "comparison", "loadReport"] {
        let object = match part {
            "" => &schema,
            p => &schema["$defs"][p],
        };
        let props = object["properties"].as_object().expect("properties");
        top.extend(props.keys().cloned());
    }
    let mut all = BTreeSet::new();
    property_names(&schema, &mut all);
    let missing: BTreeSet<&String> = all
        .iter()
        .filter(|f| !anywhere.contains(f.as_str()))
        .chain(top.iter().filter(|f| !first.contains(f.as_str())))
        .collect();
    assert!(
        missing.is_empty(),
        "rigor.run.v1.schema.json has fields docs/results.md does not explain: {missing:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// docs/cli.md

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
    for name in ["load", "run", "compare"] {
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
    for name in ["load", "run", "compare"] {
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

// ---------------------------------------------------------------------------------------------
// Links

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The targets of the `[text](target)` links of a document.
fn links(doc: &str) -> Vec<&str> {
    doc.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .collect()
}

#[test]
fn links_in_the_readme_and_docs_stay_inside_the_repository_and_land() {
    let mut documents = vec![PathBuf::from("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).expect("docs/") {
        let path = entry.expect("docs entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            documents.push(path.strip_prefix(root()).unwrap().to_path_buf());
        }
    }
    let mut broken = Vec::new();
    for document in &documents {
        let text = read(&document.to_string_lossy());
        for link in links(&text) {
            let (file, fragment) = link.split_once('#').unwrap_or((link, ""));
            if file.contains("://") || file.starts_with("..") || file.starts_with('/') {
                broken.push(format!(
                    "{}: {link} leaves the repository",
                    document.display()
                ));
                continue;
            }
            let target = match file {
                "" => root().join(document),
                f => root().join(document).parent().unwrap().join(f),
            };
            let Ok(target) = target.canonicalize() else {
                broken.push(format!("{}: {link}: no such file", document.display()));
                continue;
            };
            if !target.starts_with(root()) {
                broken.push(format!(
                    "{}: {link} leaves the repository",
                    document.display()
                ));
            } else if !fragment.is_empty() {
                let text = std::fs::read_to_string(&target).unwrap_or_default();
                let anchors: BTreeSet<String> = text
                    .lines()
                    .filter_map(heading)
                    .map(|(_, h)| anchor(h))
                    .collect();
                if !anchors.contains(fragment) {
                    broken.push(format!(
                        "{}: {link}: no heading #{fragment}",
                        document.display()
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links: {broken:#?}");
}

#[test]
fn the_readme_says_where_each_document_is() {
    let readme = read("README.md");
    for entry in std::fs::read_dir(root().join("docs")).expect("docs/") {
        let name = entry.expect("docs entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            readme.contains(&format!("](docs/{name})")),
            "README.md does not link docs/{name}"
        );
    }
}
