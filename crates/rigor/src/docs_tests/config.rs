//! docs/config.md against the serde structs of `rigor.toml`: every key has a row with its type,
//! default, example and meaning under the heading that names its table, and every row names a
//! key the parser accepts.

use super::{cells, code_spans, heading, read};
use crate::config::keys::{self, Key};
use std::collections::BTreeSet;

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

/// The tables a heading documents: each `[a.b]` (or array of tables, `[[a]]`) code span in it.
fn tables_of(heading_text: &str) -> Vec<String> {
    code_spans(heading_text)
        .into_iter()
        .filter_map(|s| {
            s.strip_prefix("[[")
                .and_then(|t| t.strip_suffix("]]"))
                .or_else(|| s.strip_prefix('[')?.strip_suffix(']'))
        })
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
                        .map(|t| t.trim_start_matches('['))
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
