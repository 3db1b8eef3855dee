//! The git commands rigor runs itself: finding a folder's repository, resolving a revision to
//! a commit, and keeping a detached worktree per commit (for variants with `ref` and for
//! `rigor bisect`). The user's checkout, index and branches are never changed: worktrees are
//! added detached, under rigor's own cache folder, and removed by their path; the registration
//! of the user's own worktrees is never touched (no `git worktree prune`, which would also drop
//! a worktree whose folder is only missing for the moment).
//!
//! Each command runs in a process group of its own, so the Ctrl-C the terminal sends to rigor
//! does not cut a `git worktree add` in half (it is short; rigor checks for the interrupt once
//! it returns), and the group is registered so no git outlives a rigor that is killed.

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// What the binary's signal handling lends git's process groups: registered, a second signal
/// or an early exit kills them, so no git outlives a rigor that is killed.
pub struct Hooks {
    pub register_group: fn(i32),
    pub unregister_group: fn(i32),
}

static HOOKS: std::sync::OnceLock<Hooks> = std::sync::OnceLock::new();

/// Sets the [`Hooks`] once, as the binary starts.
pub fn set_hooks(hooks: Hooks) {
    let _ = HOOKS.set(hooks);
}

/// Why a git command rigor runs failed: git missing, a command that failed (with git's own
/// words), or a worktree step, naming the commit and folder.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started.
    #[error("cannot run git ({0}); is git installed?")]
    Spawn(std::io::Error),
    /// Waiting for git failed.
    #[error("git {command}: {source}")]
    Wait {
        command: String,
        source: std::io::Error,
    },
    /// git ran and failed: its stderr, or its status when it said nothing.
    #[error("{}", said(.command, .status, .stderr))]
    Failed {
        command: String,
        status: ExitStatus,
        stderr: String,
    },
    /// The folder is in no repository.
    #[error("{} is not inside a git repository", .0.display())]
    NotARepository(PathBuf),
    /// A reused worktree could not be moved to its commit.
    #[error("cannot check out {commit} in {}: {source}", path.display())]
    Checkout {
        commit: String,
        path: PathBuf,
        source: Box<GitError>,
    },
    /// A worktree could not be added.
    #[error("cannot add a worktree of {commit} at {}: {source}", path.display())]
    AddWorktree {
        commit: String,
        path: PathBuf,
        source: Box<GitError>,
    },
    /// A broken worktree's folder could not be removed.
    #[error("cannot remove the broken worktree {}: {source}", path.display())]
    RemoveBroken {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `git worktree remove` failed.
    #[error("cannot remove the worktree {}: {source}", path.display())]
    RemoveWorktree {
        path: PathBuf,
        source: Box<GitError>,
    },
}

/// The arguments of a git command as text, for messages.
fn command(args: &[impl AsRef<OsStr>]) -> String {
    let words: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
    words.join(" ")
}

/// What a failed git command said: its stderr, else the command and its status.
fn said(command: &str, status: &ExitStatus, stderr: &str) -> String {
    if stderr.is_empty() {
        format!("git {command} failed ({status})")
    } else {
        stderr.to_string()
    }
}

/// Runs `git -C dir ARGS…`; its trimmed stdout, or its stderr (or why it did not start).
pub fn run(dir: &Path, args: &[impl AsRef<OsStr>]) -> Result<String, GitError> {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let child = cmd.spawn().map_err(GitError::Spawn)?;
    let pgid = child.id() as i32;
    let hooks = HOOKS.get();
    if let Some(h) = hooks {
        (h.register_group)(pgid);
    }
    let out = child.wait_with_output();
    if let Some(h) = hooks {
        (h.unregister_group)(pgid);
    }
    let out = out.map_err(|source| GitError::Wait {
        command: command(args),
        source,
    })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(GitError::Failed {
            command: command(args),
            status: out.status,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

/// The top folder of the repository holding `dir` (its real path), or why there is none.
pub fn toplevel(dir: &Path) -> Result<PathBuf, GitError> {
    run(dir, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|_| GitError::NotARepository(dir.to_path_buf()))
}

/// The full hash of the commit `rev` names in the repository at `repo`; `None` when it names
/// no commit.
pub fn commit_of(repo: &Path, rev: &str) -> Option<String> {
    if rev.is_empty() || rev.starts_with('-') {
        return None;
    }
    run(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .ok()
    .filter(|s| !s.is_empty())
}

/// Where the worktree of `commit` lives in the cache folder `cache`.
pub fn worktree_path(cache: &Path, commit: &str) -> PathBuf {
    cache.join("worktrees").join(commit)
}

/// Makes `path` a detached worktree of `commit` of the repository at `repo`: an existing one
/// at that commit with no change to a tracked file is reused as it is (so what was built there
/// stays); one at another commit, with changed tracked files or half made, is checked out
/// again or made anew. Untracked files (build outputs) are kept.
pub fn ensure_worktree(repo: &Path, commit: &str, path: &Path) -> Result<(), GitError> {
    if path.join(".git").exists() {
        let head = run(path, &["rev-parse", "--verify", "--quiet", "HEAD"]).unwrap_or_default();
        let changed = run(path, &["status", "--porcelain", "--untracked-files=no"]);
        match changed {
            Ok(c) if c.is_empty() && head == commit => return Ok(()),
            Ok(_) => {
                return run(
                    path,
                    &["checkout", "--quiet", "--force", "--detach", commit],
                )
                .map(|_| ())
                .map_err(|e| GitError::Checkout {
                    commit: commit.to_string(),
                    path: path.to_path_buf(),
                    source: Box::new(e),
                })
            }
            // Not a working worktree (a half-made one, or its repository entry is gone).
            Err(_) => remove(repo, path)?,
        }
    } else if path.exists() {
        remove(repo, path)?;
    }
    if let Some(cache) = path.parent().and_then(Path::parent) {
        hide_from_git(cache);
    }
    // `--force` also adds over a registration of this path whose folder was deleted by hand.
    // The path as it is (not as text), so a non-UTF-8 folder is the one git creates.
    run(
        repo,
        &[
            OsStr::new("worktree"),
            OsStr::new("add"),
            OsStr::new("--quiet"),
            OsStr::new("--detach"),
            OsStr::new("--force"),
            path.as_os_str(),
            OsStr::new(commit),
        ],
    )
    .map(|_| ())
    .map_err(|e| GitError::AddWorktree {
        commit: commit.to_string(),
        path: path.to_path_buf(),
        source: Box::new(e),
    })
}

/// Removes a broken worktree folder and its registration (that of this path only).
fn remove(repo: &Path, path: &Path) -> Result<(), GitError> {
    if remove_worktree(repo, path).is_ok() && !path.exists() {
        return Ok(());
    }
    std::fs::remove_dir_all(path).map_err(|source| GitError::RemoveBroken {
        path: path.to_path_buf(),
        source,
    })
}

/// Removes rigor's worktree at `path` (its folder, build outputs included, and its
/// registration) with `git worktree remove --force PATH`: by its path, so no other worktree's
/// registration is touched.
pub fn remove_worktree(repo: &Path, path: &Path) -> Result<(), GitError> {
    let args = ["worktree", "remove", "--force"].map(OsStr::new);
    run(repo, &[&args[..], &[path.as_os_str()]].concat())
        .map(|_| ())
        .map_err(|e| GitError::RemoveWorktree {
            path: path.to_path_buf(),
            source: Box::new(e),
        })
}

/// A `.gitignore` of `*` in one of rigor's own folders, so what rigor keeps there (worktrees,
/// results) beside a config inside the user's checkout never shows in its `git status`.
pub fn hide_from_git(own: &Path) {
    let ignore = own.join(".gitignore");
    if !ignore.exists() {
        let _ = std::fs::create_dir_all(own);
        let _ = std::fs::write(ignore, "*\n");
    }
}

/// The names of rigor's own folders, hidden from git when rigor creates them.
const OWN_FOLDERS: [&str; 2] = ["rigor-results", ".rigor"];

/// Creates `dir` inside the folder `own` (e.g. a run's folder in `rigor-results`); when rigor
/// creates one of its own folders (`rigor-results`, `.rigor`) itself, it gets a `.gitignore` of
/// `*` (as tools do for their caches). A folder the user made, or named otherwise, is left as
/// it is.
pub fn create_own_dir(own: &Path, dir: &Path) -> std::io::Result<()> {
    let named = own
        .file_name()
        .is_some_and(|n| OWN_FOLDERS.iter().any(|o| n == *o));
    let fresh = named && !own.exists();
    std::fs::create_dir_all(dir)?;
    if fresh {
        hide_from_git(own);
    }
    Ok(())
}

/// The first line of the message of `commit`.
pub fn subject(repo: &Path, commit: &str) -> String {
    run(repo, &["log", "-1", "--format=%s", commit]).unwrap_or_default()
}

/// The first seven characters of a hash, as people quote commits.
pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(7)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_typed_and_say_what_git_said() {
        let outside = std::env::temp_dir().join(format!("rigor-no-repo-{}", std::process::id()));
        std::fs::create_dir_all(&outside).unwrap();
        // GIT_CEILING_DIRECTORIES is not set here: a temp dir inside a repository is not.
        if run(&outside, &["rev-parse", "--show-toplevel"]).is_err() {
            let e = toplevel(&outside).unwrap_err();
            assert!(matches!(e, GitError::NotARepository(_)), "{e:?}");
            assert_eq!(
                e.to_string(),
                format!("{} is not inside a git repository", outside.display())
            );
        }
        let e = run(&outside, &["no-such-subcommand"]).unwrap_err();
        let GitError::Failed {
            command, stderr, ..
        } = &e
        else {
            panic!("{e:?}")
        };
        assert_eq!(command, "no-such-subcommand");
        assert!(!stderr.is_empty() && e.to_string() == *stderr, "{e}");
        let e = remove_worktree(&outside, &outside.join("none")).unwrap_err();
        assert!(matches!(e, GitError::RemoveWorktree { .. }), "{e:?}");
        assert!(
            e.to_string().starts_with("cannot remove the worktree "),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&outside);
    }

    #[test]
    fn a_worktree_in_a_non_utf8_folder_is_made_there_and_removed() {
        use std::os::unix::ffi::OsStrExt;
        let root = std::env::temp_dir().join(format!("rigor-git-bytes-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let repo = root.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        run(&repo, &["init", "--quiet"]).unwrap();
        let who = ["-c", "user.name=rigor", "-c", "user.email=rigor@localhost"];
        run(
            &repo,
            &[
                &who[..],
                &["commit", "--quiet", "--allow-empty", "-m", "one"],
            ]
            .concat(),
        )
        .unwrap();
        let sha = commit_of(&repo, "HEAD").unwrap();
        let wt = root.join(OsStr::from_bytes(b"wt-\xff"));
        ensure_worktree(&repo, &sha, &wt).unwrap();
        assert!(wt.join(".git").exists(), "{}", wt.display());
        // Reused as it is the second time.
        ensure_worktree(&repo, &sha, &wt).unwrap();
        remove_worktree(&repo, &wt).unwrap();
        assert!(!wt.exists());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn short_hashes_are_seven_characters_or_the_whole() {
        assert_eq!(short("0123456789abcdef"), "0123456");
        assert_eq!(short("abc"), "abc");
    }

    #[test]
    fn a_folder_rigor_creates_is_hidden_from_git_and_one_it_did_not_is_left() {
        let root = std::env::temp_dir().join(format!("rigor-own-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let own = root.join("rigor-results");
        create_own_dir(&own, &own.join("run-1")).unwrap();
        assert_eq!(
            std::fs::read_to_string(own.join(".gitignore")).unwrap(),
            "*\n"
        );
        assert!(own.join("run-1").is_dir());
        let users = root.join("a/rigor-results");
        std::fs::create_dir_all(&users).unwrap();
        create_own_dir(&users, &users.join("run-1")).unwrap();
        assert!(!users.join(".gitignore").exists());
        let other = root.join("results");
        create_own_dir(&other, &other.join("run-1")).unwrap();
        assert!(!other.join(".gitignore").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn option_like_revisions_name_no_commit() {
        assert_eq!(commit_of(Path::new("/"), "--all"), None);
        assert_eq!(commit_of(Path::new("/"), ""), None);
    }
}
