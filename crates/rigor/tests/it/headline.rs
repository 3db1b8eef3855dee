//! The answer first: the headline of `rigor run` and `rigor compare` (one line per compared pair
//! at the top and bottom, parsed here and checked against the result's own comparisons),
//! variants in their declared order everywhere, the load client's CPU never judged as the
//! application's, and figures that move by whole threads or pages judged on their floor.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// One piece of a headline line: `NAME CHANGE [LOW, HIGH] VERDICT`.
#[derive(Debug)]
struct Piece {
    name: String,
    change: String,
    interval: Option<String>,
    verdict: String,
}

/// One headline line: `CANDIDATE vs BASELINE (ROW): PIECE · PIECE`.
#[derive(Debug)]
struct Line {
    candidate: String,
    baseline: String,
    row: Option<String>,
    pieces: Vec<Piece>,
}

/// The verdicts a piece ends with (two words for `no change` and `no verdict`).
const VERDICTS: [&str; 5] = [
    "regression",
    "improvement",
    "no change",
    "inconclusive",
    "no verdict",
];

fn parse_piece(text: &str) -> Piece {
    let verdict = VERDICTS
        .iter()
        .find(|v| text.ends_with(&format!(" {v}")))
        .unwrap_or_else(|| panic!("no verdict at the end of {text:?}"));
    let rest = &text[..text.len() - verdict.len() - 1];
    let (rest, interval) = match rest.find(" [") {
        Some(i) => (&rest[..i], Some(rest[i + 1..].to_string())),
        None => (rest, None),
    };
    // The change is the first word that starts with a sign or a digit after the name.
    let words: Vec<&str> = rest.split(' ').collect();
    let at = words
        .iter()
        .position(|w| w.starts_with(['+', '-']) || w.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or_else(|| panic!("no change in {text:?}"));
    Piece {
        name: words[..at].join(" "),
        change: words[at..].join(" "),
        interval,
        verdict: verdict.to_string(),
    }
}

fn parse_line(text: &str) -> Line {
    let (head, pieces) = text
        .split_once(": ")
        .unwrap_or_else(|| panic!("no `: ` in {text:?}"));
    let (pair, row) = match head.split_once(" (") {
        Some((p, r)) => (p, Some(r.trim_end_matches(')').to_string())),
        None => (head, None),
    };
    let (candidate, baseline) = pair
        .split_once(" vs ")
        .unwrap_or_else(|| panic!("no ` vs ` in {head:?}"));
    Line {
        candidate: candidate.into(),
        baseline: baseline.into(),
        row,
        pieces: pieces.split(" · ").map(parse_piece).collect(),
    }
}

/// The headline items among `lines` starting at `from`: each `• ` line with the indented lines
/// that continue it, joined back into one line.
fn items(lines: &[&str], from: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in &lines[from..] {
        if let Some(text) = l.strip_prefix("• ") {
            out.push(text.to_string());
        } else if let (Some(last), true) = (out.last_mut(), l.starts_with("  ")) {
            last.push(' ');
            last.push_str(l.trim_start());
        } else {
            break;
        }
    }
    out
}

/// The headline right under the first line and the one that ends `stdout`, which must be the
/// same lines; every physical line of both within `width`.
fn headlines(stdout: &str, width: usize) -> Vec<Line> {
    let lines: Vec<&str> = stdout.lines().collect();
    let top = items(&lines, 1);
    assert!(
        !top.is_empty(),
        "no headline under the first line:\n{stdout}"
    );
    let physical = lines[1..]
        .iter()
        .take_while(|l| l.starts_with("• ") || l.starts_with("  "))
        .count();
    for l in &lines[1..1 + physical] {
        assert!(l.chars().count() <= width, "wider than {width}: {l:?}");
    }
    let bottom_start = lines.len() - physical;
    assert_eq!(
        items(&lines, bottom_start),
        top,
        "the last lines repeat the headline:\n{stdout}"
    );
    top.iter().map(|l| parse_line(l)).collect()
}

/// A line of a Markdown or HTML report as text: no tags, emphasis, escapes or line breaks.
fn plain(s: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for ch in s.replace("<br>", " ").chars() {
        match ch {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(ch),
            _ => {}
        }
    }
    let out = out
        .replace("**", "")
        .replace('\\', "")
        .replace("&amp;", "&");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The comparison of `id` of `candidate` in `json`.
fn comparison<'a>(json: &'a Value, candidate: &str, id: &str) -> &'a Value {
    json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["candidate"] == candidate && c["measurement"] == id)
        .unwrap_or_else(|| panic!("no {id} for {candidate}: {}", json["comparisons"]))
}

/// Whether `shown` (`-10.8%`, `+6,341.7%`) is `v` as the reports round it, to a tenth.
fn shows(shown: &str, v: f64) -> bool {
    let n: f64 = shown
        .trim_end_matches('%')
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("not a percentage: {shown:?}"));
    shown.ends_with('%') && (n - v).abs() <= 0.05 + 1e-9
}

/// rigor with `args` in `dir` at a terminal `columns` wide; its stdout, after checking the exit.
fn rigor_at(dir: &Path, args: &[&str], columns: usize, code: i32) -> String {
    let out = rigor_command(dir, args)
        .env("COLUMNS", columns.to_string())
        .output()
        .expect("run rigor");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(code), "{t}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_variants_run_opens_and_ends_on_its_headline_in_declared_order() {
    let dir = temp_dir("headline-run");
    let port = free_port();
    // Declared zeta, alpha, mid: neither alphabetic nor the shuffled order they run in.
    let toml = config(port, "", "/plaintext", "")
        + "[scenarios.s.variants.zeta]\n\
           [scenarios.s.variants.alpha]\nenv = { HELLO_DELAY_US = \"1000\" }\n\
           [scenarios.s.variants.mid]\nenv = { SAME = \"1\" }\n";
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let width = 72;
    let args = [
        "-i",
        "5",
        "--markdown",
        "report.md",
        "--html",
        "report.html",
    ];
    let stdout = rigor_at(&dir, &[RUN, &args].concat(), width, 0);
    let json = result(&dir);
    let lines = headlines(&stdout, width);
    // The Markdown and HTML reports open with the same lines, before any table or chart.
    let top = items(&stdout.lines().collect::<Vec<_>>(), 1);
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let first_item = md.lines().find(|l| l.starts_with("- ")).unwrap();
    assert_eq!(plain(first_item.trim_start_matches("- ")), top[0], "{md}");
    assert!(md.find(first_item) < md.find("| "), "{md}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let li = html.find("<li>").expect("a list in the page");
    let item = &html[li + 4..li + html[li..].find("</li>").unwrap()];
    assert_eq!(plain(item), top[0], "{html}");
    assert!(li < html.find("<svg").unwrap() && li < html.find("<table").unwrap());
    // One line per pair, candidates in declared order against the first declared variant.
    let pairs: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| (l.candidate.as_str(), l.baseline.as_str()))
        .collect();
    assert_eq!(pairs, [("alpha", "zeta"), ("mid", "zeta")], "{stdout}");
    assert!(lines.iter().all(|l| l.row.is_none()), "{stdout}");
    // The default key of a load job: the primary, p99, RSS, the application's mean CPU.
    let names: Vec<&str> = lines[0].pieces.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["Requests/sec", "p99", "RSS", "App CPU"], "{stdout}");
    // Each piece says what the result's comparison says.
    for line in &lines {
        for (piece, id) in line.pieces.iter().zip(["load.rps", "load.latency.p99"]) {
            let c = comparison(&json, &line.candidate, id);
            assert_eq!(piece.verdict, c["verdict"].as_str().unwrap(), "{c}");
            assert!(
                shows(&piece.change, c["change_pct"].as_f64().unwrap()),
                "{piece:?} {c}"
            );
            match (c["ci_low_pct"].as_f64(), c["ci_high_pct"].as_f64()) {
                (Some(l), Some(h)) => {
                    let shown = piece.interval.as_deref().unwrap_or_else(|| panic!("{c}"));
                    let (low, high) = shown
                        .trim_matches(['[', ']'])
                        .split_once(", ")
                        .unwrap_or_else(|| panic!("{shown}"));
                    assert!(shows(low, l) && shows(high, h), "{shown} {c}");
                }
                _ => assert_eq!(piece.interval, None, "{c}"),
            }
        }
    }
    // A 1 ms delay per request is a regression of the throughput (as the variants tests find).
    assert_eq!(lines[0].pieces[0].verdict, "regression", "{stdout}");
    // Tables list the variants as declared.
    let variants: Vec<&str> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["variant"].as_str().unwrap())
        .collect();
    assert_eq!(variants, ["zeta", "alpha", "mid"]);
    // The comparison table, split to fit the width or not, names the candidates in that order.
    let at = stdout
        .lines()
        .position(|l| l.contains("measurement") && l.contains("Δ"))
        .unwrap_or_else(|| panic!("no comparison table:\n{stdout}"));
    let table = stdout.lines().skip(at).collect::<Vec<_>>().join("\n");
    let first = |name: &str| {
        table
            .find(&format!(" {name} "))
            .unwrap_or_else(|| panic!("no {name} in the comparisons:\n{table}"))
    };
    // (A table split to fit shows each candidate beside its figures against the baseline.)
    let (a, m) = (first("alpha"), first("mid"));
    assert!(a < m, "{table}");
    // The load client's CPU is shown, never judged as the application's.
    let cmps = json["comparisons"].as_array().unwrap();
    assert!(
        cmps.iter().all(|c| c["measurement"] != "load.cpu"),
        "{json}"
    );
    // (The terminal shows the key figures; the Markdown report every measurement.)
    let client: Vec<&str> = md
        .lines()
        .filter(|l| l.contains("Load Client CPU"))
        .collect();
    assert!(!client.is_empty(), "{md}");
    for l in client {
        for verdict in VERDICTS {
            assert!(!l.contains(verdict), "{l}");
        }
    }
    // A thread count of 2 and a page cache of a few KiB are judged on their floor, and their
    // change is the medians' difference in their unit, never a percentage of a near-zero figure.
    for (id, label, floor) in [
        ("app.threads.end", "Threads at End", 2.0),
        ("app.cgroup.cache", "cgroup Page Cache (MiB)", 1.0),
    ] {
        let Some(c) = cmps
            .iter()
            .find(|c| c["measurement"] == id && c["candidate"] == "alpha")
        else {
            // No cgroup on this machine: no page cache to compare.
            assert_eq!(id, "app.cgroup.cache");
            continue;
        };
        let base = c["baseline_median"].as_f64().unwrap();
        assert!(base < floor * 100.0, "{c}");
        assert_eq!(c["floor"].as_f64(), Some(floor), "{c}");
        assert!(
            ["no change", "inconclusive"].contains(&c["verdict"].as_str().unwrap()),
            "{c}"
        );
        // The terminal shows only the key figures and changes; the Markdown report holds all.
        let row = md
            .lines()
            .find(|l| l.contains(&format!("| {label} |")) && l.contains("floor"))
            .unwrap_or_else(|| panic!("no {label} comparison line:\n{md}"));
        assert!(!row.contains('%'), "{row}");
    }
    // `rigor compare` of the saved result shows the key figures asked for, in that order.
    let out = rigor_at(
        &dir,
        &[
            "compare",
            "result.json",
            "--key",
            "app.threads.end,load.latency.p99",
        ],
        60,
        0,
    );
    assert!(out.starts_with("rigor compare\n"), "{out}");
    // A mistyped id is refused, naming the ids it was probably meant to be.
    let bad = rigor(
        &dir,
        &["compare", "result.json", "--key", "app.threads.edn"],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    let said = text(&bad);
    assert!(
        said.contains("--key: unknown measurement `app.threads.edn`")
            && said.contains("closest known: app.threads.end"),
        "{said}"
    );
    let lines = headlines(&out, 60);
    assert_eq!(lines.len(), 2, "{out}");
    for l in &lines {
        let names: Vec<&str> = l.pieces.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["Threads at End", "p99"], "{out}");
        // The thread count is judged on its floor: its change is in threads, with no interval.
        assert!(!l.pieces[0].change.contains('%'), "{out}");
        assert_eq!(l.pieces[0].interval, None, "{out}");
    }
}

/// A command that prints one figure per client count, scaled by `$SCALE`, with a little noise
/// so the iterations differ.
const BENCH: &str = r###"n=$(( $$ % 7 ))
for c in 1 2 4; do
  echo "##rigor {\"name\":\"ops\",\"value\":$(( SCALE * c * 100 + n )),\"direction\":\"higher\",\"row\":{\"clients\":\"$c\"}}"
done
"###;

#[test]
fn a_commands_own_rows_keep_the_declared_variant_order_and_the_report_key() {
    let dir = temp_dir("headline-rows");
    std::fs::write(dir.join("bench.sh"), BENCH).unwrap();
    let toml = "[report]\nkey = [\"cmd.ops\"]\n\
                [jobs.bench]\ncommand = \"sh bench.sh\"\n\
                [scenarios.s]\ncommand = \"bench\"\n\
                [scenarios.s.variants.zeta]\nenv = { SCALE = \"100\" }\n\
                [scenarios.s.variants.alpha]\nenv = { SCALE = \"50\" }\n\
                [scenarios.s.variants.mid]\nenv = { SCALE = \"100\" }\n";
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let stdout = rigor_at(&dir, &[RUN, &["-i", "5"]].concat(), 100, 0);
    let json = result(&dir);
    // The rows the command made follow the planned ones: clients as printed, variants as declared.
    let made: Vec<(String, String)> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| {
            let c = r["variables"]["clients"].as_str()?;
            Some((c.to_string(), r["variant"].as_str().unwrap().to_string()))
        })
        .collect();
    let expected: Vec<(String, String)> = ["1", "2", "4"]
        .iter()
        .flat_map(|c| ["zeta", "alpha", "mid"].map(|v| (c.to_string(), v.to_string())))
        .collect();
    assert_eq!(made, expected, "{stdout}");
    // The pivot's columns too.
    let header = stdout
        .lines()
        .find(|l| l.starts_with("| clients ") && l.contains("zeta"))
        .unwrap_or_else(|| panic!("no pivot:\n{stdout}"));
    let (z, a, m) = (
        header.find("zeta").unwrap(),
        header.find("alpha").unwrap(),
        header.find("mid").unwrap(),
    );
    assert!(z < a && a < m, "{header}");
    // `[report] key`: each client count's pair shows the command's figure only.
    let lines = headlines(&stdout, 100);
    let rows: Vec<(String, &str)> = lines
        .iter()
        .map(|l| (l.row.clone().unwrap_or_default(), l.candidate.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            ("clients=1".to_string(), "alpha"),
            ("clients=1".to_string(), "mid"),
            ("clients=2".to_string(), "alpha"),
            ("clients=2".to_string(), "mid"),
            ("clients=4".to_string(), "alpha"),
            ("clients=4".to_string(), "mid"),
        ],
        "{stdout}"
    );
    for l in &lines {
        assert_eq!(l.pieces.len(), 1, "{stdout}");
        assert_eq!(l.pieces[0].name, "cmd.ops", "{stdout}");
        let c = json["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| {
                c["measurement"] == "cmd.ops"
                    && c["candidate"] == l.candidate.as_str()
                    && Some(format!("clients={}", c["row"]["clients"].as_str().unwrap())) == l.row
            })
            .unwrap();
        assert_eq!(l.pieces[0].verdict, c["verdict"].as_str().unwrap(), "{c}");
    }
    // Half the figure is a regression wherever it was measured.
    assert!(
        lines
            .iter()
            .filter(|l| l.candidate == "alpha")
            .all(|l| l.pieces[0].verdict == "regression"),
        "{stdout}"
    );
}

/// `--key` and `[report] key` name ids the run can show: a typo is refused before anything
/// runs, with the closest known ids; a declared id and a command job's own `cmd.*` are fine.
#[test]
fn an_unknown_key_is_refused_with_the_closest_ids() {
    let dir = temp_dir("headline-unknown-key");
    std::fs::write(
        dir.join("rigor.toml"),
        "[jobs.j]\nrole = \"command\"\ncommand = \"echo\"\n\n\
         [scenarios.s]\ncommand = \"j\"\niterations = 1\n\n\
         [measurements.\"my.score\"]\ndirection = \"higher\"\n\n\
         [report]\nkey = [\"app.elapsd\", \"my.score\"]\n",
    )
    .unwrap();
    let out = rigor(&dir, &["run", "--no-store", "--key", "load.rsp,cmd.x"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("--key: unknown measurement `load.rsp`; closest known: load.rps"),
        "{said}"
    );
    assert!(
        said.contains("[report] key in rigor.toml: unknown measurement `app.elapsd`")
            && said.contains("closest known: app.elapsed"),
        "{said}"
    );
    // The declared id and the command's own figure are not refused; nothing ran.
    assert!(
        !said.contains("my.score") && !said.contains("`cmd.x`"),
        "{said}"
    );
    assert!(!dir.join("rigor-results").exists(), "{said}");
    // The same file and flags with the typos fixed run.
    std::fs::write(
        dir.join("rigor.toml"),
        std::fs::read_to_string(dir.join("rigor.toml"))
            .unwrap()
            .replace("app.elapsd", "app.elapsed"),
    )
    .unwrap();
    let out = rigor(&dir, &["run", "--no-store", "--key", "load.rps,cmd.x"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn a_bad_key_is_a_usage_error_naming_it() {
    let dir = temp_dir("headline-bad-key");
    let out = rigor(
        &dir,
        &["compare", "a.json", "b.json", "--key", "load.rps,,app.rss"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("--key: an empty measurement id"),
        "{}",
        text(&out)
    );
    std::fs::write(
        dir.join("rigor.toml"),
        "[report]\nkey = [\"load.rps\", \"load.rps\"]\n",
    )
    .unwrap();
    let out = rigor(&dir, &["run"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("rigor.toml:2: report.key: `load.rps` is named twice"),
        "{}",
        text(&out)
    );
}
