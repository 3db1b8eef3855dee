//! The commits a bisection searches: good and bad resolved in the repository of the scenario's
//! job, and the first-parent path from good to bad (merges are tested as one commit each, the
//! way a project's main line records them).

use crate::git;
use std::path::Path;

/// One commit of the path: its full hash and subject.
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    pub sha: String,
    pub subject: String,
}

impl Commit {
    /// `abc1234 "subject"`, as progress and the report name a commit.
    pub fn label(&self) -> String {
        format!("{} \"{}\"", git::short(&self.sha), self.subject)
    }
}

/// `rev`, given as `--flag`, resolved to a full hash in `repo`.
pub fn resolve(repo: &Path, flag: &str, rev: &str) -> Result<String, String> {
    git::commit_of(repo, rev).ok_or_else(|| {
        format!(
            "{flag} `{rev}` is not a commit of the repository at {}",
            repo.display()
        )
    })
}

/// The commits from good to bad along bad's first parents, good first and bad last; refused
/// when good is not on that path.
pub fn path(repo: &Path, good: &str, bad: &str) -> Result<Vec<Commit>, String> {
    if good == bad {
        return Err(format!(
            "--good and --bad are the same commit ({}): nothing to search",
            git::short(good)
        ));
    }
    let range = format!("{good}..{bad}");
    let listed = git::run(
        repo,
        &[
            "rev-list",
            "--first-parent",
            "--ancestry-path",
            "--reverse",
            "--format=%H %s",
            &range,
        ],
    )?;
    let mut commits = vec![Commit {
        sha: good.to_string(),
        subject: git::subject(repo, good),
    }];
    // `--format` puts a `commit SHA` line before each formatted one.
    for line in listed.lines().filter(|l| !l.starts_with("commit ")) {
        let (sha, subject) = line.split_once(' ').unwrap_or((line, ""));
        commits.push(Commit {
            sha: sha.to_string(),
            subject: subject.to_string(),
        });
    }
    let not_on_path = || {
        format!(
            "--good {} is not an ancestor of --bad {} along its first parents: give a good \
             commit of the bad one's own history (e.g. `git merge-base` of the two)",
            git::short(good),
            git::short(bad)
        )
    };
    if commits.len() < 2 || commits.last().map(|c| c.sha.as_str()) != Some(bad) {
        return Err(not_on_path());
    }
    let parent = git::run(repo, &["rev-parse", &format!("{}^", commits[1].sha)])?;
    if parent != good {
        return Err(not_on_path());
    }
    Ok(commits)
}
