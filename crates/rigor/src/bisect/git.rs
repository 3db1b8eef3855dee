//! The commits a bisection searches: good and bad resolved in the repository of the scenario's
//! job, and the first-parent path from good to bad (merges are tested as one commit each, the
//! way a project's main line records them).

use crate::git;
use std::path::Path;

/// One candidate of the search: a commit of the path (its full hash and subject), or, when
/// bisecting over values, a value (`sha` is the value, `subject` says `NAME=value`).
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    pub sha: String,
    pub subject: String,
    /// A value of a variable rather than a commit.
    pub value: bool,
}

impl Commit {
    /// A commit of the path.
    pub fn on_path(sha: &str, subject: &str) -> Commit {
        Commit {
            sha: sha.to_string(),
            subject: subject.to_string(),
            value: false,
        }
    }

    /// The value `value` of the variable `name`.
    pub fn value(name: &str, value: &str) -> Commit {
        Commit {
            sha: value.to_string(),
            subject: format!("{name}={value}"),
            value: true,
        }
    }

    /// How progress names it: a short hash, or the whole value.
    pub fn short(&self) -> &str {
        if self.value {
            &self.sha
        } else {
            git::short(&self.sha)
        }
    }

    /// `abc1234 "subject"`, or `NAME=value`, as progress and the report name a candidate.
    pub fn label(&self) -> String {
        if self.value {
            self.subject.clone()
        } else {
            format!("{} \"{}\"", self.short(), self.subject)
        }
    }
}

/// `rev`, given as `--flag`, resolved to a full hash in `repo`.
pub fn resolve(repo: &Path, flag: &str, rev: &str) -> anyhow::Result<String> {
    git::commit_of(repo, rev).ok_or_else(|| {
        anyhow::anyhow!(
            "{flag} `{rev}` is not a commit of the repository at {}",
            repo.display()
        )
    })
}

/// The commits from good to bad along bad's first parents, good first and bad last; refused
/// when good is not on that path.
pub fn path(repo: &Path, good: &str, bad: &str) -> anyhow::Result<Vec<Commit>> {
    if good == bad {
        anyhow::bail!(
            "--good and --bad are the same commit ({}): nothing to search",
            git::short(good)
        );
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
    )
    .map_err(anyhow::Error::msg)?;
    let mut commits = vec![Commit::on_path(good, &git::subject(repo, good))];
    // `--format` puts a `commit SHA` line before each formatted one.
    for line in listed.lines().filter(|l| !l.starts_with("commit ")) {
        let (sha, subject) = line.split_once(' ').unwrap_or((line, ""));
        commits.push(Commit::on_path(sha, subject));
    }
    let not_on_path = || {
        anyhow::anyhow!(
            "--good {} is not an ancestor of --bad {} along its first parents: give a good \
             commit of the bad one's own history (e.g. `git merge-base` of the two)",
            git::short(good),
            git::short(bad)
        )
    };
    if commits.len() < 2 || commits.last().map(|c| c.sha.as_str()) != Some(bad) {
        return Err(not_on_path());
    }
    let parent = git::run(repo, &["rev-parse", &format!("{}^", commits[1].sha)])
        .map_err(anyhow::Error::msg)?;
    if parent != good {
        return Err(not_on_path());
    }
    Ok(commits)
}
