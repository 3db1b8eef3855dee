//! Every built-in id written anywhere in the source is in the catalogue: a string literal shaped
//! like `"app.…"` or `"load.…"` in rigor, the load engine or the probe that the catalogue does
//! not know fails here, so an id cannot be recorded, read or documented under a misspelling.

use super::{ids, info, CATALOGUE};
use std::path::{Path, PathBuf};

/// Literals shaped like ids that are not ids, each with where and why.
const NOT_IDS: &[&str] = &[
    // File names in the staleness tests (a .NET project file, a make dependency file).
    "app.csproj",
    "app.d",
    // Deliberately unknown ids: `rigor compare --measurements load.rpz` must name the ids it
    // knows, and the flag fuzzer feeds `app.nope` to every flag.
    "load.rpz",
    "app.nope",
    // The prefix of a request mix's per-request ids, which the mix's names complete.
    "load.req.",
    // The prefix of runtime-metric ids, which programs name.
    "app.metric.",
    // The prefix of one load host's figures, which the config names.
    "load.hosts.",
];

/// The `.rs` files below `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `"app.…"` / `"load.…"` literal in `text`: a quote not escaped, the prefix, id
/// characters, and the closing quote.
fn id_literals(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for (at, _) in text.match_indices('"') {
        let rest = &text[at + 1..];
        if !(rest.starts_with("app.") || rest.starts_with("load.")) {
            continue;
        }
        if at > 0 && bytes[at - 1] == b'\\' {
            continue;
        }
        let len = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        let prefix = rest.find('.').unwrap_or(0) + 1;
        if len > prefix && rest[len..].starts_with('"') {
            out.push(&rest[..len]);
        }
    }
    out
}

#[test]
fn every_id_literal_in_the_source_is_in_the_catalogue() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    // Every crate of the workspace: rigor's own, the model, analysis and reports, the load
    // engine and the probe (the statistics crate names no ids).
    for entry in std::fs::read_dir(&crates).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            sources(&src, &mut files);
        }
    }
    let mut seen = 0;
    let mut unknown = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for id in id_literals(&text) {
            seen += 1;
            if info(id).is_none() && !NOT_IDS.contains(&id) {
                unknown.push(format!("{}: \"{id}\"", file.display()));
            }
        }
    }
    assert!(
        seen > 50,
        "only {seen} id literals found: is the scan broken?"
    );
    assert!(
        unknown.is_empty(),
        "ids outside the catalogue (add them to measurements/, or fix the spelling):\n{}",
        unknown.join("\n")
    );
}

#[test]
fn the_scan_finds_literals_and_only_literals() {
    let text =
        r#"m.insert("load.rps", 1); x("app.cgroup.memory") "\"app.rss\"" "app.* ids" "app.x y""#;
    assert_eq!(id_literals(text), vec!["load.rps", "app.cgroup.memory"]);
}

#[test]
fn each_catalogue_id_is_listed_once_and_named_by_its_constant() {
    let mut listed: Vec<&str> = CATALOGUE.iter().map(|m| m.id).collect();
    listed.sort_unstable();
    listed.dedup();
    assert_eq!(listed.len(), CATALOGUE.len());
    // The constants read as their ids: a constant pointing at another id would mislead.
    let source = include_str!("ids.rs");
    for (name, id) in source.lines().filter_map(|l| {
        let l = l.strip_prefix("pub const ")?;
        let (name, rest) = l.split_once(": &str = \"")?;
        Some((name, rest.strip_suffix("\";")?))
    }) {
        assert_eq!(name, id.to_uppercase().replace('.', "_"), "{name} = {id}");
        assert!(info(id).is_some(), "{id}");
    }
    assert_eq!(info(ids::LOAD_RPS).map(|m| m.unit), Some("1/s"));
}

#[test]
fn flags_accept_a_commands_own_figures_and_runtime_metrics() {
    // Built, so the scan for id literals above does not take them for catalogue ids.
    let metric = format!("app.metric.{}", "hello_requests_total.rate");
    for id in ["cmd.msgs_per_sec", metric.as_str(), "load.rps"] {
        assert!(super::validate(id).is_ok(), "{id}");
    }
    let typo = format!("load.{}", "rsp");
    for id in ["cmd.", "app.metric. ", typo.as_str(), "msgs_per_sec"] {
        let e = super::validate(id).unwrap_err().to_string();
        assert!(e.contains("cmd.NAME"), "{e}");
    }
}

#[test]
fn a_load_hosts_share_reads_as_its_merged_figure_on_that_host() {
    use crate::measurements::{host_share, host_share_id, info, label, validate};
    assert_eq!(
        host_share_id("load1", "load.latency.p99"),
        "load.hosts.load1.latency.p99"
    );
    assert_eq!(
        host_share("load.hosts.load1.latency.p99"),
        Some(("load1", "load.latency.p99".to_string()))
    );
    let share = info("load.hosts.load1.rps").expect("a share of load.rps");
    let merged = info("load.rps").unwrap();
    assert_eq!(
        (share.unit, share.direction),
        (merged.unit, merged.direction)
    );
    assert!(merged.judged && !share.judged);
    assert_eq!(
        label("load.hosts.load1.rps"),
        format!("{} on load1 ({})", merged.name, merged.unit)
    );
    assert!(validate("load.hosts.load1.rps").is_ok());
    let unknown = format!("{}load1.nope", "load.hosts.");
    let e = validate(&unknown).unwrap_err().to_string();
    assert!(e.contains("is not one"), "{e}");
    let no_figure = format!("{}a", "load.hosts.");
    assert!(host_share("load.hosts.").is_none() && host_share(&no_figure).is_none());
}
