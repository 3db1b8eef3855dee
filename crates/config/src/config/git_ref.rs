//! `ref = "REV"` on a variant: the application (and its build) runs from a detached git
//! worktree of that commit instead of the job's own folder. Planning only resolves the revision
//! and says where the worktree will be (`.rigor/worktrees/SHA` beside the config, the job's
//! folder at the same place inside it); [`ensure_worktrees`] makes them once the run is accepted,
//! so a refused run leaves nothing behind.

use crate::config::ValueError;

use super::problems::Problems;
use super::raw::RawVariant;
use super::{AppJob, Config, Vars};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// A variant's commit: what was asked for, what it resolved to, and where it is checked out.
#[derive(Debug, Clone, PartialEq)]
pub struct GitRef {
    /// The variant that asked for it.
    pub variant: String,
    /// The revision as written (`HEAD~1`, a tag, a hash).
    pub rev: String,
    /// The full hash it named when the config was read.
    pub commit: String,
    /// The top folder of the repository the job's folder is in.
    pub repo: PathBuf,
    /// The worktree of `commit`; the job's folder is the same relative path inside it.
    pub worktree: PathBuf,
}

/// The folder beside the config where rigor keeps what it makes for itself.
pub fn cache_dir(config_dir: &Path) -> PathBuf {
    config_dir.join(".rigor")
}

impl Config {
    /// The job's folder for a row of variant `variant` of `scenario`: with a `ref`, the same
    /// folder inside the worktree of that commit, and the commit; otherwise `dir` as it is.
    pub(super) fn variant_ref(
        &self,
        variant: Option<(&str, &str, &RawVariant)>,
        dir: PathBuf,
        vars: &Vars,
        p: &mut Problems,
    ) -> (PathBuf, Option<GitRef>) {
        let Some((name, scenario, rv)) = variant else {
            return (dir, None);
        };
        let Some(written) = &rv.git_ref else {
            return (dir, None);
        };
        let table = format!("scenarios.{scenario}.variants.{name}");
        let Some(rev) = p.take(self.expand(vars, &table, "ref", written)) else {
            return (dir, None);
        };
        if !dir.is_dir() {
            // Its absence is already said by the check of `dir`.
            return (dir, None);
        }
        match self.locate_ref(&dir, &rev) {
            Ok((git_ref, job_dir)) => (
                job_dir,
                Some(GitRef {
                    variant: name.to_string(),
                    ..git_ref
                }),
            ),
            Err(e) => {
                p.add(self.error_at(&table, Some("ref"), &e.0));
                (dir, None)
            }
        }
    }

    /// The commit `rev` names in the repository holding `dir`, and the folder `dir` becomes
    /// inside that commit's worktree.
    fn locate_ref(&self, dir: &Path, rev: &str) -> Result<(GitRef, PathBuf), ValueError> {
        let repo = crate::git::toplevel(dir).map_err(|e| {
            format!("`{rev}`: the job's folder {e}, so there is no commit to check out")
        })?;
        let commit = crate::git::commit_of(&repo, rev).ok_or_else(|| {
            format!(
                "`{rev}` is not a commit of the repository at {}",
                repo.display()
            )
        })?;
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let inside = real
            .strip_prefix(&repo)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let worktree = crate::git::worktree_path(&cache_dir(&self.dir), &commit);
        // The repository's top folder itself: the worktree, without a trailing `/`.
        let job_dir = if inside.as_os_str().is_empty() {
            worktree.clone()
        } else {
            worktree.join(inside)
        };
        let git_ref = GitRef {
            variant: String::new(),
            rev: rev.to_string(),
            commit,
            repo,
            worktree,
        };
        Ok((git_ref, job_dir))
    }

    /// Replaces the variants of `scenario` with one variant per `(name, rev)`, each built from
    /// that commit and otherwise as the scenario's job is: how `rigor bisect` runs commits
    /// against each other with the run's own machinery.
    pub fn use_ref_variants(&mut self, scenario: &str, refs: &[(String, String)]) {
        if let Some(s) = self.raw.scenarios.get_mut(scenario) {
            s.variants = refs
                .iter()
                .map(|(name, rev)| {
                    let v = RawVariant {
                        git_ref: Some(rev.clone()),
                        ..RawVariant::default()
                    };
                    (name.clone(), v)
                })
                .collect();
        }
    }
}

/// Makes the worktree of every job that runs from a commit (each commit once); the first
/// failure is the error.
pub fn ensure_worktrees<'a>(apps: impl IntoIterator<Item = &'a AppJob>) -> Result<(), ValueError> {
    let mut done: Vec<&Path> = Vec::new();
    for app in apps {
        let Some(r) = &app.git_ref else { continue };
        if done.contains(&r.worktree.as_path()) {
            continue;
        }
        crate::git::ensure_worktree(&r.repo, &r.commit, &r.worktree)
            .map_err(|e| format!("variant `{}` (ref `{}`): {e}", r.variant, r.rev))?;
        done.push(&r.worktree);
    }
    Ok(())
}

/// `jobs.NAME.refs.VARIANT` in a result's environment: the revision each variant asked for, the
/// commit it ran, and the folder it ran in (the job's `git` block describes the first row's
/// folder only).
pub fn record_refs(jobs: &mut Map<String, Value>, apps: &[&AppJob]) {
    for app in apps {
        let Some(r) = &app.git_ref else { continue };
        let job = jobs
            .entry(app.name.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(job) = job else { continue };
        let refs = job
            .entry("refs")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(refs) = refs {
            refs.insert(
                r.variant.clone(),
                json!({
                    "ref": r.rev,
                    "commit": r.commit,
                    "dir": app.dir.display().to_string(),
                }),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(ok, "git {args:?}");
    }

    /// A repository with two commits of `app/v`, and a config beside it using `ref`.
    fn repo(name: &str) -> Option<PathBuf> {
        if Command::new("git").arg("--version").output().is_err() {
            eprintln!("skipped: git is not installed");
            return None;
        }
        let root = std::env::temp_dir().join(format!("rigor-ref-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let repo = root.join("repo");
        std::fs::create_dir_all(repo.join("app")).unwrap();
        git(&repo, &["init", "-q"]);
        for v in ["one", "two"] {
            std::fs::write(repo.join("app/v"), v).unwrap();
            git(&repo, &["add", "."]);
            git(&repo, &["commit", "-q", "-m", v]);
        }
        Some(root)
    }

    fn config(rev: &str) -> String {
        format!(
            "[jobs.app]\ndir = \"repo/app\"\ncommand = \"cat v\"\nrole = \"command\"\n\
             [scenarios.s]\ncommand = \"app\"\n[scenarios.s.variants.old]\nref = \"{rev}\"\n\
             [scenarios.s.variants.now]\n"
        )
    }

    fn plan(root: &Path, text: String) -> Result<super::super::model::ScenarioPlan, Problems> {
        let c = Config::parse(&root.join("rigor.toml"), text)?;
        let req = super::super::PlanRequest {
            profile: "local".into(),
            ..Default::default()
        };
        c.plan("s", &req)
    }

    #[test]
    fn a_ref_moves_the_job_into_the_worktree_of_its_commit() {
        let Some(root) = repo("moves") else { return };
        let plan = plan(&root, config("HEAD~1")).expect("plans");
        let old = &plan.rows[0].app;
        let r = old.git_ref.as_ref().expect("a ref");
        let first = crate::git::commit_of(&root.join("repo"), "HEAD~1").unwrap();
        assert_eq!(r.commit, first);
        assert_eq!(r.rev, "HEAD~1");
        assert_eq!(r.variant, "old");
        assert_eq!(
            old.dir,
            root.join(".rigor/worktrees").join(&first).join("app")
        );
        // The variant without a ref keeps the job's own folder; nothing was made yet.
        assert_eq!(plan.rows[1].app.git_ref, None);
        assert!(!root.join(".rigor").exists());
        ensure_worktrees(plan.rows.iter().map(|r| &r.app)).expect("worktree made");
        assert_eq!(std::fs::read_to_string(old.dir.join("v")).unwrap(), "one");
        // The user's checkout is as it was.
        assert_eq!(
            std::fs::read_to_string(root.join("repo/app/v")).unwrap(),
            "two"
        );
        // A worktree with a changed tracked file is put back; a second call reuses it.
        std::fs::write(old.dir.join("v"), "edited").unwrap();
        ensure_worktrees(plan.rows.iter().map(|r| &r.app)).expect("repaired");
        assert_eq!(std::fs::read_to_string(old.dir.join("v")).unwrap(), "one");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn an_unknown_rev_or_a_folder_outside_git_is_a_config_error() {
        let Some(root) = repo("unknown") else { return };
        let e = plan(&root, config("no-such-rev")).unwrap_err();
        let text = e.messages().join("\n");
        assert!(
            text.contains("scenarios.s.variants.old.ref")
                && text.contains("`no-such-rev` is not a commit"),
            "{text}"
        );
        let outside = std::env::temp_dir().join(format!("rigor-ref-out-{}", std::process::id()));
        std::fs::create_dir_all(outside.join("repo/app")).unwrap();
        let e = plan(&outside, config("HEAD")).unwrap_err();
        let text = e.messages().join("\n");
        assert!(
            text.contains("scenarios.s.variants.old.ref")
                && text.contains("is not inside a git repository"),
            "{text}"
        );
        std::fs::remove_dir_all(&root).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }
}
