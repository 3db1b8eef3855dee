//! Command jobs end to end: the pingpong testbed (a RemotePingPong-shaped benchmark) run by
//! `rigor run`, its figures read from its table by extract rules, from `##rigor` lines and from
//! a crank block, each checked against what the program printed in that iteration's stdout.

use crate::common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{MutexGuard, OnceLock};

/// Held by each test: the runs measure throughput, and two at once on a small machine would
/// each be the other's noise.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    crate::common::one_at_a_time()
}

/// The release pingpong testbed, built once per test binary.
fn pingpong() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--release", "-q", "-p", "pingpong"])
            .current_dir(workspace())
            .status()
            .expect("cargo build pingpong");
        assert!(status.success(), "building pingpong failed");
        workspace().join("target/release/pingpong")
    })
    .clone()
}

/// The extract rule that reads msgs/s per client count from pingpong's table.
const TABLE_RULE: &str = r#"
[jobs.pingpong.extract.msgs_per_sec]
regex = '^\s*(?P<clients>\d+),\s*\d+,\s*(?P<value>\d+),'
unit = "1/s"
direction = "higher"
label = "Msgs/sec"
row = "clients"
"#;

/// A config running pingpong with `args`, plus `extra` (rules, variants).
fn config(args: &str, extra: &str) -> String {
    format!(
        "[jobs.pingpong]\ncommand = \"{} {args}\"\nstop_timeout = \"2s\"\n{extra}\n\
         [scenarios.pp]\ncommand = \"pingpong\"\n",
        pingpong().display()
    )
}

/// The stdout rigor kept for an iteration: beside its log.
fn stdout_of(it: &Value) -> String {
    let log = it["log"]
        .as_str()
        .unwrap_or_else(|| panic!("no log in {it}"));
    let path = Path::new(log).with_extension("stdout");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// msgs/s by client count, read from pingpong's table independently of rigor.
fn table(stdout: &str) -> BTreeMap<String, f64> {
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with("Num clients"));
    assert!(lines.next().is_some(), "no table in {stdout}");
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').map(str::trim).collect();
            assert_eq!(cells.len(), 6, "{l}");
            (cells[0].to_string(), cells[2].parse().unwrap())
        })
        .collect()
}

/// The rows a command made, by their `clients` variable (and variant).
fn client_rows(json: &Value) -> Vec<&Value> {
    json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["variables"].get("clients").is_some())
        .collect()
}

#[test]
fn a_table_becomes_one_row_per_client_count_with_the_printed_values() {
    let _serial = one_at_a_time();
    let dir = temp_dir("cmd-table");
    let toml = config("--clients 1,2,4 --messages 2000", TABLE_RULE);
    let (t, json) = run_exit(&dir, &toml, &["-i", "3"], 0);
    let json = json.expect("a result");
    let rows = client_rows(&json);
    let mut clients: Vec<&str> = rows
        .iter()
        .map(|r| r["variables"]["clients"].as_str().unwrap())
        .collect();
    clients.sort();
    assert_eq!(clients, ["1", "2", "4"], "{t}");
    for row in rows {
        let c = row["variables"]["clients"].as_str().unwrap();
        let its = row["iterations"].as_array().unwrap();
        assert_eq!(its.len(), 3, "{row}");
        for it in its {
            let printed = table(&stdout_of(it))[c];
            assert_eq!(
                it["measurements"]["cmd.msgs_per_sec"].as_f64(),
                Some(printed),
                "clients={c}: {it}"
            );
            assert!(printed > 1000.0, "{printed}");
        }
        assert!(row["summary"]["cmd.msgs_per_sec"].is_object(), "{row}");
    }
    // The rule's declaration is the run's, and the command's own figures stay on its row.
    let m = &json["measurements"]["cmd.msgs_per_sec"];
    assert_eq!(
        (m["direction"].as_str(), m["unit"].as_str()),
        (Some("higher"), Some("1/s"))
    );
    assert_eq!(m["label"], "Msgs/sec");
    let planned = &json["rows"][0];
    assert!(planned["variables"].get("clients").is_none());
    assert!(planned["iterations"][0]["measurements"]["app.elapsed"].as_f64() > Some(0.0));
    assert!(t.contains("Msgs/sec"), "{t}");
}

#[test]
fn a_slowed_variant_is_a_regression_at_every_client_count() {
    let _serial = one_at_a_time();
    let dir = temp_dir("cmd-slow");
    let variants = format!(
        "{TABLE_RULE}\n[scenarios.pp.variants.base]\n\
         [scenarios.pp.variants.slow]\nenv = {{ PINGPONG_DELAY_NS = \"600\" }}\n"
    );
    let toml = config("--clients 1,2,4 --messages 50000", &variants)
        .replace("[scenarios.pp]\ncommand = \"pingpong\"\n", "");
    let toml = toml.replace(
        "[scenarios.pp.variants.base]",
        "[scenarios.pp]\ncommand = \"pingpong\"\n[scenarios.pp.variants.base]",
    );
    // The one extract rule's figure is the primary, so the gate watches it: exit 3.
    let (t, json) = run_exit(&dir, &toml, &["-i", "7", "--fail-on-regression"], 3);
    assert!(t.contains("regression in cmd.msgs_per_sec"), "{t}");
    let json = json.expect("a result");
    let comparisons = json["comparisons"].as_array().unwrap();
    for c in ["1", "2", "4"] {
        let cmp = comparisons
            .iter()
            .find(|x| x["measurement"] == "cmd.msgs_per_sec" && x["row"]["clients"] == c)
            .unwrap_or_else(|| panic!("no comparison for clients={c}: {t}"));
        assert_eq!(cmp["direction"], "higher", "{cmp}");
        assert_eq!(cmp["verdict"], "regression", "clients={c}: {cmp}\n{t}");
        assert!(cmp["change_pct"].as_f64().unwrap() < -15.0, "{cmp}");
    }
}

#[test]
fn rigor_lines_make_rows_without_rules() {
    let _serial = one_at_a_time();
    let dir = temp_dir("cmd-rigor");
    let toml = config("--clients 1,3 --messages 2000 --format rigor", "");
    let (t, json) = run_exit(&dir, &toml, &["-i", "2"], 0);
    let json = json.expect("a result");
    let rows = client_rows(&json);
    assert_eq!(rows.len(), 2, "{t}");
    for row in rows {
        let c = row["variables"]["clients"].as_str().unwrap();
        for it in row["iterations"].as_array().unwrap() {
            // What the program printed, read as plain JSON.
            let mut printed = BTreeMap::new();
            for line in stdout_of(it).lines() {
                let Some(j) = line.strip_prefix("##rigor ") else {
                    continue;
                };
                let v: Value = serde_json::from_str(j).unwrap();
                if v["row"]["clients"].to_string().trim_matches('"') == c {
                    printed.insert(v["name"].as_str().unwrap().to_string(), v["value"].as_f64());
                }
            }
            assert_eq!(printed.len(), 2, "{printed:?}");
            for (name, v) in printed {
                assert_eq!(
                    it["measurements"][format!("cmd.{name}")].as_f64(),
                    v,
                    "{it}"
                );
            }
        }
    }
    assert_eq!(json["measurements"]["cmd.total_ms"]["direction"], "lower");
    assert_eq!(
        json["measurements"]["cmd.msgs_per_sec"]["direction"],
        "higher"
    );
}

#[test]
fn a_crank_block_is_aggregated_as_crank_does() {
    let _serial = one_at_a_time();
    let dir = temp_dir("cmd-crank");
    let toml = config("--clients 1,2,3 --messages 2000 --format crank", "");
    let (t, json) = run_exit(&dir, &toml, &["-i", "2"], 0);
    let json = json.expect("a result");
    assert!(client_rows(&json).is_empty(), "crank figures have no rows");
    for it in json["rows"][0]["iterations"].as_array().unwrap() {
        let out = stdout_of(it);
        let start = out.find("#StartJobStatistics").unwrap() + "#StartJobStatistics".len();
        let end = out.find("#EndJobStatistics").unwrap();
        let block: Value = serde_json::from_str(&out[start..end]).unwrap();
        let values = |name: &str| -> Vec<f64> {
            block["Measurements"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["Name"] == name)
                .map(|m| m["Value"].as_f64().unwrap())
                .collect()
        };
        let rates = values("pingpong/msgs-per-sec");
        assert_eq!(rates.len(), 3);
        let m = &it["measurements"];
        assert_eq!(
            m["cmd.pingpong/msgs-per-sec"].as_f64(),
            Some(rates.iter().copied().fold(f64::MIN, f64::max)),
            "{t}"
        );
        let total: f64 = values("pingpong/total-ms").iter().sum();
        assert!((m["cmd.pingpong/total-ms"].as_f64().unwrap() - total).abs() < 1e-9);
        assert_eq!(m["cmd.pingpong/rounds"].as_f64(), Some(3.0));
        assert!(
            m.get("cmd.pingpong/runtime").is_none(),
            "a text value is no figure"
        );
    }
    assert_eq!(
        json["measurements"]["cmd.pingpong/msgs-per-sec"]["label"],
        "Max msgs/sec"
    );
}

#[test]
fn a_rule_that_never_matches_fails_the_iteration_naming_it() {
    let _serial = one_at_a_time();
    let dir = temp_dir("cmd-nomatch");
    let rule = TABLE_RULE.replace(r"^\s*(?P<clients>", r"^never (?P<clients>");
    let toml = config("--clients 1 --messages 100", &rule);
    let (t, json) = run_exit(&dir, &toml, &["-i", "1"], 1);
    let want = "extract rule `msgs_per_sec` (cmd.msgs_per_sec) matched no line of the output";
    assert!(t.contains(want), "{t}");
    let err = json.expect("a result")["rows"][0]["iterations"][0]["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(err.contains(want) && err.contains(".stdout"), "{err}");
}

#[test]
fn a_malformed_rigor_line_fails_the_iteration_naming_the_line() {
    let _serial = one_at_a_time();
    let dir = temp_dir("cmd-badline");
    let toml = "[jobs.p]\ncommand = \"echo start; echo '##rigor {\\\"name\\\":\\\"x\\\"}'\"\n\
                [scenarios.s]\ncommand = \"p\"\n";
    let (t, _) = run_exit(&dir, toml, &["-i", "1"], 1);
    assert!(
        t.contains("line 2 of the output is a malformed ##rigor line: `value` is missing"),
        "{t}"
    );
}

#[test]
fn bad_rules_are_config_errors_naming_file_line_and_key() {
    let _serial = one_at_a_time();
    let dir = temp_dir("cmd-badrule");
    let no_value = TABLE_RULE.replace("(?P<value>", "(");
    let (t, _) = run_exit(&dir, &config("", &no_value), &["-i", "1"], 2);
    assert!(
        t.contains("rigor.toml:") && t.contains("regex") && t.contains("named capture `value`"),
        "{t}"
    );
    let no_direction = TABLE_RULE.replace("direction = \"higher\"\n", "");
    let (t, _) = run_exit(&dir, &config("", &no_direction), &["-i", "1"], 2);
    assert!(
        t.contains("rigor.toml:")
            && t.contains("jobs.pingpong.extract.msgs_per_sec")
            && t.contains("missing `direction`"),
        "{t}"
    );
}

#[test]
fn a_command_that_exits_non_zero_fails_with_its_output_tail() {
    let _serial = one_at_a_time();
    let dir = temp_dir("cmd-exit");
    let toml = config("--clients 1,2 --messages 100 --exit 3", TABLE_RULE);
    let (t, json) = run_exit(&dir, &toml, &["-i", "1"], 1);
    let json = json.expect("a result");
    let err = json["rows"][0]["iterations"][0]["error"]
        .as_str()
        .unwrap_or_default();
    assert!(err.contains("exit"), "{err}");
    assert!(err.contains("          2,"), "stdout tail: {err}");
    assert!(
        err.contains("exiting with 3 as asked"),
        "stderr tail: {err}"
    );
    assert!(client_rows(&json).is_empty(), "{t}");
}

/// A one-job config running `line` with `extra` job keys.
fn job(line: &str, extra: &str) -> String {
    format!(
        "[jobs.f]\ncommand = {}\n{extra}\n[scenarios.s]\ncommand = \"f\"\n",
        toml_string(line)
    )
}

/// The log and stdout of the only iteration, with its size on disk.
fn sizes(it: &Value) -> (u64, u64) {
    let log = PathBuf::from(
        it["log"]
            .as_str()
            .unwrap_or_else(|| panic!("no log in {it}")),
    );
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    (size(&log), size(&log.with_extension("stdout")))
}

const LIMIT: u64 = 64 * 1024 * 1024;

#[test]
fn a_flood_on_stderr_is_kept_to_64_mib_with_a_note_and_the_figures_still_read() {
    let _serial = one_at_a_time();
    let dir = temp_dir("cmd-flood-err");
    let printed: u64 = 100_000_000;
    let line =
        format!("yes | head -c {printed} >&2; echo '##rigor {{\"name\":\"done\",\"value\":7}}'");
    let (t, json) = run_exit(&dir, &job(&line, ""), &["-i", "1"], 0);
    let json = json.expect("a result");
    let it = &iterations(&json)[0];
    assert_eq!(m(it, "cmd.done"), Some(7.0), "{it}");
    let note = format!(
        "[rigor: output cut at 64 MiB: {} more bytes were read and discarded]\n",
        printed - LIMIT
    );
    let (log, stdout) = sizes(it);
    assert_eq!(log, LIMIT + note.len() as u64, "{t}");
    assert!(stdout < 1024, "{stdout}");
    let text = std::fs::read(it["log"].as_str().unwrap()).unwrap();
    assert!(text.ends_with(note.as_bytes()), "{t}");
    assert!(text[..LIMIT as usize].chunks(2).all(|c| c == b"y\n"));
    let said = message(&it["warnings"], "output_cut");
    assert!(
        said.contains("stderr") && said.contains("kept the first 64 MiB"),
        "{said}"
    );
}

#[test]
fn a_command_printing_without_end_keeps_64_mib_and_the_run_completes() {
    // 70 MB first, then `yes` until the job's timeout stops it: the stdout is cut at the
    // limit however fast the command writes, and rigor keeps reading so it never blocks.
    let _serial = one_at_a_time();
    let dir = temp_dir("cmd-flood-out");
    let line = "head -c 70000000 /dev/zero; yes";
    let (t, json) = run_exit(&dir, &job(line, "timeout = \"3s\""), &["-i", "1"], 1);
    let json = json.expect("a result");
    let it = &iterations(&json)[0];
    let err = it["error"].as_str().unwrap_or_default();
    assert!(
        err.contains("still running after its timeout of 3.0s"),
        "{err}"
    );
    let (_, stdout) = sizes(it);
    let note = "[rigor: output cut at 64 MiB: ";
    assert!(stdout > LIMIT && stdout < LIMIT + 100, "{stdout}: {t}");
    let log = PathBuf::from(it["log"].as_str().unwrap()).with_extension("stdout");
    let kept = std::fs::read(&log).unwrap();
    let tail = String::from_utf8_lossy(&kept[LIMIT as usize..]).to_string();
    assert!(tail.starts_with(&format!("\n{note}")), "{tail}");
    let discarded: u64 = tail[1 + note.len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{tail}"));
    assert!(discarded >= 70_000_000 - LIMIT, "{tail}");
    let said = message(&it["warnings"], "output_cut");
    assert!(said.contains("on stdout"), "{said}");
}

#[test]
#[ignore = "needs root"]
fn a_full_disk_is_said_not_taken_for_a_command_that_printed_nothing() {
    // Root mounts a small filesystem for the results and fills it: the command's output
    // cannot be written at all.
    testkit::require_root();
    let _serial = one_at_a_time();
    let dir = temp_dir("cmd-full-disk");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(mounted.success());
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(out.clone());
    std::fs::write(out.join("filler"), vec![0u8; 64 << 10]).ok();
    std::fs::write(
        dir.join("rigor.toml"),
        job("yes | head -c 1000000 >&2; exit 3", ""),
    )
    .unwrap();
    let o = rigor(&dir, &["run", "--out-dir", "out", "-i", "1"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("the command's stderr could not be written to"),
        "{t}"
    );
    assert!(t.contains("No space left on device"), "{t}");
    assert!(!t.contains("printed nothing"), "{t}");
}
