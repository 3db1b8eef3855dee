//! Variants built from a git `ref`: "this commit against its parent, interleaved" is one
//! `rigor run`, each variant built and run in a worktree of its commit, the result naming the
//! commit each variant ran; the user's checkout is never touched.

use crate::bisect_common;
use crate::common;
use bisect_common::*;
use common::*;

fn with_refs(port: u16, old: &str, new: &str) -> String {
    value_config(port, "repo", "delay_us", "--delay-us")
        + &format!("[scenarios.s.variants.old]\nref = \"{old}\"\n[scenarios.s.variants.new]\nref = \"{new}\"\n")
}

#[test]
fn head_against_its_parent_is_one_interleaved_run_of_two_commits() {
    let _one = crate::common::one_at_a_time();
    if !have_git() {
        return;
    }
    let dir = temp_dir("ref-parent");
    let repo = dir.join("repo");
    // The last commit doubles the delay.
    let shas = step_history(&repo, "delay_us", "1000", "2000", 8, None);
    let status = git(&repo, &["status", "--porcelain"]);
    let port = free_port();
    let (t, json) = run_exit(
        &dir,
        &with_refs(port, "HEAD~1", "HEAD"),
        &["-i", "6", "--threshold", "10%"],
        0,
    );
    let json = json.unwrap();
    let jobs = &json["environment"]["jobs"]["app"];
    assert_eq!(jobs["refs"]["old"]["ref"], "HEAD~1", "{jobs}");
    assert_eq!(jobs["refs"]["old"]["commit"], shas[6].as_str(), "{jobs}");
    assert_eq!(jobs["refs"]["new"]["commit"], shas[7].as_str(), "{jobs}");
    // The job's own git block describes the first row's folder: the old commit, not HEAD.
    assert_eq!(jobs["git"]["commit"], shas[6].as_str(), "{jobs}");
    assert_eq!(jobs["git"]["dirty"], false, "{jobs}");
    for b in json["builds"].as_array().unwrap() {
        let variant = b["variant"].as_str().unwrap();
        let sha = if variant == "old" { &shas[6] } else { &shas[7] };
        let worktree = dir.join(".rigor/worktrees").join(sha);
        assert_eq!(b["dir"], worktree.display().to_string().as_str(), "{b}");
        let value = std::fs::read_to_string(worktree.join("app.value")).unwrap();
        assert_eq!(value.trim(), if variant == "old" { "1000" } else { "2000" });
    }
    let rps = json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["measurement"] == "load.rps")
        .unwrap();
    assert_eq!(rps["baseline"], "old");
    assert_eq!(rps["verdict"], "regression", "{t}");
    let change = rps["change_pct"].as_f64().unwrap();
    assert!((-60.0..=-40.0).contains(&change), "{change}");
    // Nothing changed in the checkout: no file, no branch, HEAD where it was.
    assert_eq!(git(&repo, &["status", "--porcelain"]), status);
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), shas[7]);
    assert_eq!(git(&repo, &["branch", "--list"]), "* main");
    assert!(!repo.join("app.value").exists());
    // A second run reuses both worktrees as they are: what was made in them stays.
    let marker = dir.join(".rigor/worktrees").join(&shas[6]).join("kept");
    std::fs::write(&marker, "").unwrap();
    run_exit(
        &dir,
        &with_refs(port, "HEAD~1", "HEAD"),
        &["-i", "1", "--allow-inconclusive", "--threshold", "10%"],
        0,
    );
    assert!(marker.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unknown_ref_is_a_config_error_naming_the_key() {
    let _one = crate::common::one_at_a_time();
    if !have_git() {
        return;
    }
    let dir = temp_dir("ref-unknown");
    step_history(&dir.join("repo"), "delay_us", "1000", "2000", 8, None);
    let (t, _) = run_exit(
        &dir,
        &with_refs(free_port(), "HEAD~1", "no-such-branch"),
        &["-i", "1"],
        2,
    );
    assert!(
        t.contains(
            "scenarios.s.variants.new.ref: `no-such-branch` is not a commit of the repository at"
        ),
        "{t}"
    );
    assert!(!dir.join(".rigor").exists(), "{t}");
    std::fs::remove_dir_all(&dir).unwrap();
}
