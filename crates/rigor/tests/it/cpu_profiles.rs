//! CPU profiles end to end: a C program whose candidate does 3× the work in one function has
//! that function first in `profile_diff` (the samples checked against perf's own count of the
//! recording), a server under load gets flame graphs drawn in the HTML page (headless
//! Chromium), a Python 3.12 `-X perf` command shows Python function names, and a perf that
//! may not sample is a warning with the fix while the run still measures.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A program whose `hot` does `HOT` units of work per round and `cold` one, each in its own
/// loop (a leaf function has no frame of its own, so a helper they both called would hide
/// them from a frame-pointer walk).
const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) void hot(int k) { for (unsigned long i = 0; i < 4000000UL * k; i++) sink += i; }
__attribute__((noinline)) void cold(void) { for (unsigned long i = 0; i < 4000000UL; i++) sink += i; }
int main(void) {
    const char *h = getenv("HOT");
    int k = h ? atoi(h) : 1;
    for (int r = 0; r < 1200 / (k + 1); r++) { hot(k); cold(); }
    printf("done %lu\n", sink);
    return 0;
}
"#;

/// Whether perf can record here (else the skip is said).
fn perf_works() -> bool {
    match rigor_profile::check("perf") {
        Ok(()) => true,
        Err(u) => {
            skip(&format!("needs perf ({}: {})", u.reason, u.fix));
            false
        }
    }
}

/// The C program built with frame pointers and debug info in `dir`.
fn build(dir: &Path) -> Option<PathBuf> {
    let src = dir.join("spin.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let bin = dir.join("spin");
    let built = Command::new("cc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-o"])
        .arg(&bin)
        .arg(&src)
        .status();
    match built {
        Ok(s) if s.success() => Some(bin),
        _ => {
            skip("needs cc (a C compiler)");
            None
        }
    }
}

/// Samples in a perf recording, counted by perf itself.
fn perf_samples(data: &Path) -> u64 {
    let out = Command::new("perf")
        .args(["script", "-F", "period", "-i"])
        .arg(data)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count() as u64
}

fn profile_of<'a>(json: &'a Value, variant: &str) -> &'a Value {
    let row = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["variant"] == variant)
        .unwrap_or_else(|| panic!("no row {variant}"));
    &row["profile"]
}

#[test]
fn the_function_doing_three_times_the_work_comes_first_in_profile_diff() {
    let _one = common::one_at_a_time();
    if !perf_works() {
        return;
    }
    let dir = temp_dir("cpu-profile-c");
    let Some(bin) = build(&dir) else { return };
    let toml = format!(
        "[jobs.spin]\ncommand = \"{}\"\n\n[scenarios.c]\ncommand = \"spin\"\ncpu_profile = true\n\
         [scenarios.c.variants.base]\nenv = {{ HOT = \"1\" }}\n\
         [scenarios.c.variants.heavy]\nenv = {{ HOT = \"3\" }}\n",
        bin.display()
    );
    let (t, json) = run_exit(&dir, &toml, &["-i", "3", "--allow-inconclusive"], 0);
    let json = json.unwrap();
    let p = &json["profiles"][0];
    assert_eq!(
        (p["baseline"].as_str(), p["candidate"].as_str()),
        (Some("base"), Some("heavy")),
        "{t}"
    );
    let diff = p["profile_diff"].as_array().unwrap();
    assert_eq!(diff[0]["function"], "hot", "{diff:?}\n{t}");
    // hot holds half the work in the baseline and three quarters in the candidate.
    let (b, c) = (
        diff[0]["baseline_pct"].as_f64().unwrap(),
        diff[0]["candidate_pct"].as_f64().unwrap(),
    );
    assert!(
        (35.0..65.0).contains(&b) && (60.0..90.0).contains(&c),
        "hot {b}% → {c}%"
    );
    let cold = diff.iter().find(|f| f["function"] == "cold").expect("cold");
    assert!(
        cold["candidate_pct"].as_f64() < cold["baseline_pct"].as_f64(),
        "{cold}"
    );
    // Each row's samples are perf's own count of its iterations' recordings.
    for variant in ["base", "heavy"] {
        let prof = profile_of(&json, variant);
        assert_eq!(prof["iterations"], 3, "{prof}");
        let row = json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["variant"] == variant)
            .unwrap();
        let counted: u64 = row["iterations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|it| {
                perf_samples(&Path::new(it["log"].as_str().unwrap()).with_extension("perf.data"))
            })
            .sum();
        assert_eq!(prof["samples"].as_u64(), Some(counted), "{variant}");
        let svg = std::fs::read_to_string(prof["flame_graph"].as_str().unwrap()).unwrap();
        assert!(svg.contains("<svg") && svg.contains("hot"), "{variant}");
    }
    let diff_svg = std::fs::read_to_string(p["diff_flame_graph"].as_str().unwrap()).unwrap();
    assert!(
        diff_svg.contains("hot") && diff_svg.contains("fill=\"rgb(255,"),
        "no red frame"
    );
    // The terminal's top five under the comparison, hot first.
    let section = t
        .split("CPU profile")
        .nth(1)
        .unwrap_or_else(|| panic!("{t}"));
    let first = section
        .lines()
        .find(|l| l.contains("pts"))
        .unwrap_or_else(|| panic!("{t}"));
    assert!(first.contains("hot"), "{first}\n{t}");
    compare_diffs_the_saved_profiles_again(&dir, p);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `rigor compare` of the saved result finds what the run found (the same functions at the same
/// shares, from the run folder's stacks) and draws its differential flame graph beside its
/// report; two copies of the result compare each variant with itself: no function moved.
fn compare_diffs_the_saved_profiles_again(dir: &Path, run_found: &Value) {
    let compare = |args: &[&str]| {
        let out = common::rigor_command(dir, args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        text(&out)
    };
    std::fs::create_dir_all(dir.join("cmp")).unwrap();
    let t = compare(&["compare", "result.json", "--json", "cmp/one.json"]);
    let one: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cmp/one.json")).unwrap()).unwrap();
    let again = &one["profiles"][0];
    assert_eq!(again["profile_diff"], run_found["profile_diff"], "{t}");
    assert_eq!(again["baseline_samples"], run_found["baseline_samples"]);
    let svg = again["diff_flame_graph"]
        .as_str()
        .expect("a diff flame graph");
    assert!(svg.ends_with("cmp/one.profile1.diff.svg"), "{svg}");
    assert!(std::fs::read_to_string(dir.join(svg))
        .unwrap()
        .contains("hot"));
    assert!(t.contains("CPU profile") && t.contains("hot"), "{t}");
    for side in ["a", "b"] {
        std::fs::create_dir_all(dir.join(side)).unwrap();
        std::fs::copy(dir.join("result.json"), dir.join(side).join("result.json")).unwrap();
    }
    compare(&[
        "compare",
        "a/result.json",
        "b/result.json",
        "--json",
        "cmp/two.json",
    ]);
    let two: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cmp/two.json")).unwrap()).unwrap();
    let pairs = two["profiles"].as_array().expect("profiles");
    assert_eq!(pairs.len(), 2, "one per variant: {pairs:?}");
    for p in pairs {
        for f in p["profile_diff"].as_array().unwrap() {
            assert_eq!(f["baseline_pct"], f["candidate_pct"], "{f}");
        }
    }
}

/// Debian's `chromium` (or `chromium-browser`) on the PATH.
fn browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

#[test]
fn a_server_under_load_gets_flame_graphs_drawn_in_the_html_page() {
    let _one = common::one_at_a_time();
    if !perf_works() {
        return;
    }
    let dir = temp_dir("cpu-profile-html");
    let port = free_port();
    let toml = config(port, "", "/plaintext", "")
        + "[scenarios.s.variants.base]\n[scenarios.s.variants.slow]\n\
           env = { HELLO_DELAY_US = \"200\" }\n";
    let (t, json) = run_exit(
        &dir,
        &toml,
        &[
            "-i",
            "2",
            "--allow-inconclusive",
            "--cpu-profile",
            "--html",
            "report.html",
        ],
        0,
    );
    let json = json.unwrap();
    for variant in ["base", "slow"] {
        let prof = profile_of(&json, variant);
        assert!(
            prof["samples"].as_u64().unwrap_or(0) > 0,
            "{variant}: {prof}\n{t}"
        );
    }
    assert!(json["profiles"][0]["profile_diff"].is_array(), "{t}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    // Two rows' graphs and the pair's differential one, each a data: URI, nothing fetched.
    assert_eq!(html.matches("<img class=\"flame-graph\"").count(), 3);
    assert_eq!(
        html.matches("src=").count(),
        html.matches("src=\"data:image/svg+xml;base64,").count()
    );
    assert!(!html.to_lowercase().contains("<script"));
    let Some(bin) = browser() else {
        skip("needs chromium (Debian: apt-get install chromium)");
        return;
    };
    // The browser decoded every graph: their natural widths, written into the DOM by a line
    // of script added to a copy of the page once it loaded.
    let probe = dir.join("probe.html");
    let script = "<script>window.addEventListener('load', () => document.body.setAttribute(\
                  'data-widths', Array.from(document.querySelectorAll('img.flame-graph'))\
                  .map(i => i.naturalWidth).join(',')));</script>";
    std::fs::write(&probe, html.replace("</body>", &format!("{script}</body>"))).unwrap();
    let out = Command::new(&bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=5000",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.join("chromium-profile").display()
        ))
        .arg("--dump-dom")
        .arg(format!("file://{}", probe.display()))
        .output()
        .expect("chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    let widths: Vec<u64> = dom
        .split("data-widths=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or_else(|| panic!("no widths in the DOM:\n{dom}"))
        .split(',')
        .map(|w| w.parse().unwrap())
        .collect();
    assert_eq!(widths.len(), 3, "{widths:?}");
    assert!(
        widths.iter().all(|w| *w > 100),
        "a flame graph not drawn: {widths:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Python 3.12 or later, which has `-X perf`.
fn python_with_perf_maps() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let on_path = std::env::split_paths(&path)
        .flat_map(|d| ["python3.13", "python3.12"].map(|n| d.join(n)))
        .chain(
            std::fs::read_dir("/root/.pyenv/versions")
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path().join("bin/python3")),
        );
    on_path.into_iter().find(|p| {
        Command::new(p)
            .args([
                "-X",
                "perf",
                "-c",
                "import sys; assert sys.version_info >= (3, 12)",
            ])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn a_python_command_with_x_perf_shows_python_function_names() {
    let _one = common::one_at_a_time();
    if !perf_works() {
        return;
    }
    let Some(python) = python_with_perf_maps() else {
        skip(
            "needs Python 3.12 or later (its -X perf writes /tmp/perf-PID.map; Debian 12 has 3.11)",
        );
        return;
    };
    let dir = temp_dir("cpu-profile-python");
    let script = dir.join("busy.py");
    std::fs::write(
        &script,
        "def busy_python_function(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n    return s\n\
         \nfor _ in range(80):\n    busy_python_function(200000)\n",
    )
    .unwrap();
    let toml = format!(
        "[jobs.py]\ncommand = \"{} -X perf {}\"\n\n[scenarios.p]\ncommand = \"py\"\n",
        python.display(),
        script.display()
    );
    // CPython is built without frame pointers: its stacks need DWARF unwinding.
    let (t, json) = run_exit(&dir, &toml, &["-i", "1", "--cpu-profile=dwarf"], 0);
    let json = json.unwrap();
    let folded = json["rows"][0]["profile"]["folded"]
        .as_str()
        .unwrap_or_else(|| panic!("no profile\n{t}"));
    let text = std::fs::read_to_string(folded).unwrap();
    assert!(
        text.lines().any(|l| l.contains("busy_python_function")),
        "no Python function in the stacks:\n{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perf_that_may_not_sample_is_a_warning_with_the_fix_and_the_run_still_measures() {
    let dir = temp_dir("cpu-profile-forbidden");
    // A perf that answers as a kernel with perf_event_paranoid=3 makes it answer.
    let fake = dir.join("bin");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::write(
        fake.join("perf"),
        "#!/bin/sh\necho 'Error:' >&2\necho 'Access to performance monitoring and observability \
         operations is limited.' >&2\necho 'Consider adjusting /proc/sys/kernel/perf_event_paranoid \
         setting' >&2\nexit 255\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(fake.join("perf"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("rigor.toml"),
        "[jobs.t]\ncommand = \"sh -c 'echo hi'\"\n[scenarios.t]\ncommand = \"t\"\ncpu_profile = \"dwarf\"\n",
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = rigor_command(&dir, &[RUN, &["-i", "1"]].concat())
        .env("PATH", path)
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let json = result(&dir);
    let w = warning(&json["warnings"], "cpu_profile");
    assert!(
        w["message"]
            .as_str()
            .unwrap()
            .contains("perf_event_paranoid"),
        "{w}"
    );
    assert!(
        w["advice"]
            .as_str()
            .unwrap()
            .contains("sysctl kernel.perf_event_paranoid=1"),
        "{w}"
    );
    assert!(t.contains("sysctl kernel.perf_event_paranoid=1"), "{t}");
    assert!(json["rows"][0]["iterations"][0]["measurements"]["app.elapsed"].is_number());
    assert!(json["rows"][0]["profile"].is_null());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_profile_without_a_sample_is_said_not_shown_empty() {
    let _one = common::one_at_a_time();
    if !perf_works() {
        return;
    }
    let dir = temp_dir("cpu-profile-empty");
    // A command that exits at once, sampled once a second: perf has nothing to take.
    std::fs::write(
        dir.join("rigor.toml"),
        "[jobs.t]\ncommand = \"true\"\n[scenarios.t]\ncommand = \"t\"\ncpu_profile = true\n",
    )
    .unwrap();
    let out = rigor_command(&dir, &[RUN, &["-i", "1", "--cpu-profile-hz", "1"]].concat())
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let json = result(&dir);
    let w = warning(&json["rows"][0]["iterations"][0]["warnings"], "cpu_profile");
    let message = w["message"].as_str().unwrap();
    assert!(message.contains("holds no sample"), "{w}");
    assert!(message.contains("(1/1 s)"), "{w}");
    assert!(
        w["advice"].as_str().unwrap().contains("--cpu-profile-hz"),
        "{w}"
    );
    assert_eq!(json["rows"][0]["profile"]["samples"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sampling_rate_for_profiles_no_row_takes_is_a_usage_error() {
    let _one = common::one_at_a_time();
    let dir = temp_dir("cpu-profile-hz-alone");
    let unprofiled = "[jobs.t]\ncommand = \"true\"\n[scenarios.t]\ncommand = \"t\"\n";
    std::fs::write(dir.join("rigor.toml"), unprofiled).unwrap();
    let refused = |flags: &[&str], needle: &str| {
        let out = rigor_command(&dir, &[RUN, &["-i", "1"], flags].concat())
            .output()
            .unwrap();
        let t = text(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {t}");
        assert!(t.contains(needle), "{flags:?}: {t}");
        assert!(!dir.join("result.json").exists(), "{flags:?} ran: {t}");
    };
    refused(
        &["--cpu-profile-hz", "199"],
        "--cpu-profile-hz 199 needs --cpu-profile: no row of this run is profiled",
    );
    for hz in ["0", "10001"] {
        refused(
            &["--cpu-profile", "--cpu-profile-hz", hz],
            &format!("--cpu-profile-hz {hz}: must be from 1 to 10000 samples per second"),
        );
    }
    // With a row the config profiles, the rate is taken (a perf that cannot record is a
    // warning, never a usage error).
    std::fs::write(
        dir.join("rigor.toml"),
        format!("{unprofiled}cpu_profile = true\n"),
    )
    .unwrap();
    let out = rigor_command(
        &dir,
        &[RUN, &["-i", "1", "--cpu-profile-hz", "199"]].concat(),
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let _ = std::fs::remove_dir_all(&dir);
}
