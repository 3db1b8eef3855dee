//! The pivot report end to end: a matrix swept across two variants against the testbed, shown as
//! a line per connection count and a column per variant, each cell checked against the result
//! file's own row medians; then `rigor compare` of two such runs, a column per file.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// Two connection counts × a base and a slowed variant (1 ms per request).
fn sweep_config(port: u16) -> String {
    config(port, "", "/plaintext", "")
        + "matrix = { connections = [2, 8] }\n\
           [scenarios.s.variants.base]\n\
           [scenarios.s.variants.slow]\n\
           env = { HELLO_DELAY_US = \"1000\" }\n"
}

/// The Markdown table under the heading that ends with `title`: its header and body lines, each
/// split into trimmed cells.
fn md_table(md: &str, title: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = md.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with('#') && l.ends_with(title))
        .unwrap_or_else(|| panic!("no heading {title}:\n{md}"));
    lines[at + 1..]
        .iter()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter(|l| !l.starts_with("| ---"))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// The figure a cell starts with (`12,345 ±1.0%` → 12345) and how many decimals it shows.
fn figure(cell: &str) -> (f64, i32) {
    let text = cell.split_whitespace().next().unwrap().replace(',', "");
    let decimals = text.split_once('.').map_or(0, |(_, f)| f.len() as i32);
    (text.parse().unwrap_or_else(|_| panic!("{cell}")), decimals)
}

/// The shown figure equals `median` to the digits it shows.
fn assert_shows(cell: &str, median: f64, what: &str) {
    let (shown, decimals) = figure(cell);
    assert!(
        (shown - median).abs() <= 0.5 * 10f64.powi(-decimals) + 1e-9,
        "{what}: cell {cell} vs median {median}"
    );
}

/// The row of `json` with these variables and variant.
fn row<'a>(json: &'a Value, connections: &str, variant: &str) -> &'a Value {
    json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["variables"]["connections"] == connections && r["variant"] == variant)
        .unwrap_or_else(|| panic!("no row {connections} {variant}"))
}

fn median(row: &Value, id: &str) -> f64 {
    row["summary"][id]["median"].as_f64().unwrap()
}

/// The verdict of `id` for the candidate at `connections`, as the result's comparisons say.
fn verdict(json: &Value, connections: &str, id: &str) -> String {
    json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["measurement"] == id && c["row"]["connections"] == connections)
        .unwrap()["verdict"]
        .as_str()
        .unwrap()
        .to_string()
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap()
}

#[test]
fn run_pivot_cells_are_the_rows_medians_and_compare_pivots_the_files() {
    let dir = temp_dir("pivot-report");
    let port = free_port();
    let toml = sweep_config(port);
    let (t, json) = run_exit(
        &dir,
        &toml,
        &[
            "-i",
            "2",
            "--allow-inconclusive",
            "--pivot",
            "load.rps",
            "--markdown",
            "pivot.md",
            // The timelines on the terminal too.
            "--verbose",
        ],
        0,
    );
    let json = json.unwrap();
    let md = read(&dir, "pivot.md");
    let table = md_table(&md, "Requests/sec (1/s) by connections");
    assert_eq!(table[0], ["connections", "base", "slow", "Δ"], "{md}");
    let values: Vec<&str> = table[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(values, ["2", "8", "trend"], "{md}");
    for line in &table[1..3] {
        let c = line[0].as_str();
        let (base, slow) = (
            median(row(&json, c, "base"), "load.rps"),
            median(row(&json, c, "slow"), "load.rps"),
        );
        assert_shows(&line[1], base, &format!("base at {c}"));
        assert_shows(&line[2], slow, &format!("slow at {c}"));
        // Δ: the medians' change, one decimal, then the comparison's own verdict.
        let delta = line[3].trim_matches('*');
        let (pct, word) = delta.split_once("% ").unwrap_or_else(|| panic!("{delta}"));
        let pct: f64 = pct.parse().unwrap();
        assert!(
            (pct - (slow / base - 1.0) * 100.0).abs() <= 0.05 + 1e-9,
            "{delta}"
        );
        assert_eq!(word, verdict(&json, c, "load.rps"), "{md}");
    }
    // The trend line draws each column's medians on one scale: two characters each.
    assert_eq!(table[3][1].chars().count(), 2, "{md}");
    assert_eq!(table[3][2].chars().count(), 2, "{md}");
    // On stdout (not a terminal, NO_COLOR): the same table, no colour codes.
    assert!(t.contains("Requests/sec (1/s) by connections"), "{t}");
    assert!(t.contains("| trend"), "{t}");
    assert!(!t.contains('\x1b'), "{t}");
    // Each row's timeline is its median iteration's by the primary (load.rps), the lower middle
    // one of an even count: the label says which.
    let lines: Vec<&str> = t.lines().collect();
    for c in ["2", "8"] {
        for variant in ["base", "slow"] {
            let label = format!("| connections={c} {variant} ");
            let at = lines
                .iter()
                .position(|l| l.starts_with(&label) && l.contains("CPU (%)"))
                .unwrap_or_else(|| panic!("no timeline for {label}: {t}"));
            let number: usize = lines[at + 1]
                .trim_start_matches("| iteration ")
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{}", lines[at + 1]));
            assert!(lines[at + 2].starts_with("| median load.rps "), "{t}");
            let r = row(&json, c, variant);
            let mut values: Vec<f64> = r["iterations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|it| it["measurements"]["load.rps"].as_f64().unwrap())
                .collect();
            values.sort_by(f64::total_cmp);
            let lower_middle = values[(values.len() - 1) / 2];
            let it = &r["iterations"][number - 1];
            assert_eq!(
                it["measurements"]["load.rps"].as_f64(),
                Some(lower_middle),
                "{t}"
            );
        }
    }
    std::fs::copy(dir.join("result.json"), dir.join("a.json")).unwrap();

    // A second run: --no-chart leaves the table without its trend line; a --pivot no row has
    // is named after the run, with the ids that exist, and exits 2 (the result is still kept).
    let (out, second) = run(
        &dir,
        &toml,
        &[
            "-i",
            "2",
            "--allow-inconclusive",
            "--pivot",
            "load.nope",
            "--no-chart",
        ],
    );
    let t2 = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t2}");
    assert!(
        t2.contains("error: --pivot load.nope: no row measured it; measured: ")
            && t2.contains("load.rps"),
        "{t2}"
    );
    assert!(
        !t2.contains("by connections") && !t2.contains("trend"),
        "{t2}"
    );
    let b = second.expect("the second result is kept");
    std::fs::copy(dir.join("result.json"), dir.join("b.json")).unwrap();

    // rigor compare: a column per file; each variant is a table of its own.
    let out = rigor(
        &dir,
        &[
            "compare",
            "a.json",
            "b.json",
            "--pivot",
            "load.rps",
            "--markdown",
            "cmp.md",
        ],
    );
    let t3 = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t3}");
    let cmp = read(&dir, "cmp.md");
    for variant in ["base", "slow"] {
        let table = md_table(&cmp, &format!("variant={variant}"));
        assert_eq!(table[0], ["connections", "a", "b", "Δ"], "{cmp}");
        for line in &table[1..3] {
            let c = line[0].as_str();
            assert_shows(&line[1], median(row(&json, c, variant), "load.rps"), "a");
            assert_shows(&line[2], median(row(&b, c, variant), "load.rps"), "b");
        }
    }
    assert!(t3.contains("Requests/sec (1/s) by connections"), "{t3}");
    // An id neither file has: refused when the files are read, naming the ids they have.
    let out = rigor(&dir, &["compare", "a.json", "b.json", "--pivot", "cmd.x"]);
    let t4 = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t4}");
    assert!(
        t4.contains("--pivot cmd.x: no row measured it; measured: "),
        "{t4}"
    );
    assert!(!t4.contains("Δ median"), "nothing compared: {t4}");
    let out = rigor(
        &dir,
        &[
            "compare",
            "a.json",
            "b.json",
            "--pivot-by",
            "gc",
            "--pivot",
            "load.rps",
        ],
    );
    let t5 = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t5}");
    assert!(
        t5.contains("--pivot-by gc: no row with load.rps has it; variables: connections, variant"),
        "{t5}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
