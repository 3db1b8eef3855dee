//! Which code was measured: a result without the commit (and whether the tree was dirty) cannot
//! be reproduced or compared honestly.

use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::{Command, Stdio};

/// The state of the git work tree an app was built from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitInfo {
    /// Full hash of HEAD.
    pub commit: String,
    /// Tracked files differ from HEAD (staged or not); untracked files are ignored, like
    /// `git describe --dirty`.
    pub dirty: bool,
    /// Current branch; `None` when HEAD is detached.
    pub branch: Option<String>,
}

/// Asks `git` about `dir`; `None` when git is missing or `dir` is not in a repository.
pub fn git_info(dir: &Path) -> Option<GitInfo> {
    let commit = git(dir, &["rev-parse", "--verify", "HEAD"])?;
    let status = git(dir, &["status", "--porcelain", "--untracked-files=no"])?;
    let branch = git(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"]);
    Some(GitInfo {
        commit,
        dirty: !status.is_empty(),
        branch,
    })
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        // Don't take the index lock: the user may be running git alongside us.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}
