//! Writes the result files after every iteration (atomically), so a crash or Ctrl-C keeps every
//! finished iteration. Requested paths are checked before anything starts; a path that fails
//! anyway at the end sends that format to the run folder instead, and the message says where.
//! The last written result is kept so a second signal can still write the final one.

use crate::result::{RunResult, RunStatus};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where each format goes, and the run folder that takes any format whose path fails.
#[derive(Debug, Clone)]
pub struct Outputs {
    pub json: PathBuf,
    pub markdown: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub run_dir: PathBuf,
    /// What the Markdown and HTML reports show beyond their tables (`--pivot`, `--no-chart`).
    pub view: crate::report::View,
}

/// The formats, their flag and the file name used in the run folder.
#[derive(Clone, Copy)]
enum Format {
    Json,
    Markdown,
    Csv,
    Html,
}

impl Format {
    fn flag(self) -> &'static str {
        match self {
            Format::Json => "--json",
            Format::Markdown => "--markdown",
            Format::Csv => "--csv",
            Format::Html => "--html",
        }
    }

    fn fallback_name(self) -> &'static str {
        match self {
            Format::Json => "result.json",
            Format::Markdown => "report.md",
            Format::Csv => "report.csv",
            Format::Html => "report.html",
        }
    }

    fn render(self, result: &RunResult, view: &crate::report::View) -> anyhow::Result<String> {
        Ok(match self {
            Format::Json => serde_json::to_string_pretty(result)?,

            Format::Markdown => crate::report::markdown::render_with(result, view),
            Format::Csv => crate::report::csv::render(result),
            Format::Html => {
                crate::report::html::render_with_flame_graphs(result, view, &flame_graphs(result))
            }
        })
    }
}

/// The run's flame graphs as the HTML page shows them: each compared pair's differential one,
/// then each row's; a file that cannot be read is left out (the JSON still names it).
fn flame_graphs(result: &RunResult) -> Vec<crate::report::profiles::FlameGraph> {
    let diffs = result.profiles.iter().filter_map(|p| {
        Some((
            format!("{} vs {} (differential)", p.candidate, p.baseline),
            p.diff_flame_graph.as_deref()?,
        ))
    });
    let rows = result.rows.iter().filter_map(|r| {
        Some((
            r.key_in(&result.scenario).label(),
            r.profile.as_ref()?.flame_graph.as_deref()?,
        ))
    });
    diffs
        .chain(rows)
        .filter_map(|(title, path)| {
            Some(crate::report::profiles::FlameGraph {
                title,
                svg: std::fs::read_to_string(path).ok()?,
            })
        })
        .collect()
}

/// The last result written and where, for the second-signal path; `done` once final.
struct Saved {
    outputs: Outputs,
    result: RunResult,
    done: bool,
}

static SAVED: Mutex<Option<Saved>> = Mutex::new(None);

impl Outputs {
    fn targets(&self) -> Vec<(Format, &Path)> {
        let mut t = vec![(Format::Json, self.json.as_path())];
        t.extend(self.markdown.as_deref().map(|p| (Format::Markdown, p)));
        t.extend(self.csv.as_deref().map(|p| (Format::Csv, p)));
        t.extend(self.html.as_deref().map(|p| (Format::Html, p)));
        t
    }

    /// Creates each requested file's folder and proves it writable (a probe file written and
    /// removed), so an unwritable path is found before an hour of measuring.
    pub fn check(&self) -> anyhow::Result<()> {
        let mut problems = Vec::new();
        let targets = self.targets();
        for (i, (format, path)) in targets.iter().enumerate() {
            if let Some((first, _)) = targets[..i].iter().find(|(_, p)| p == path) {
                problems.push(format!(
                    "{} and {} both name {}: one would overwrite the other",
                    first.flag(),
                    format.flag(),
                    path.display()
                ));
            }
        }
        for (format, path) in self.targets() {
            if let Err(e) = probe(path) {
                problems.push(format!("{} {}: {e}", format.flag(), path.display()));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(anyhow::anyhow!(
                "cannot write the results: {}",
                problems.join("; ")
            ))
        }
    }

    /// Writes every requested format. A path that fails sends its format to the run folder;
    /// the error names what failed and where the results went instead.
    pub fn write(&self, result: &RunResult) -> anyhow::Result<()> {
        let mut problems = Vec::new();
        for (format, path) in self.targets() {
            let text = format.render(result, &self.view)?;
            if let Err(e) = write_atomic(path, &text) {
                let fallback = self.run_dir.join(format.fallback_name());
                let saved = if fallback != path {
                    match write_atomic(&fallback, &text) {
                        Ok(()) => format!("saved to {} instead", fallback.display()),
                        Err(e2) => format!("and the run folder failed too: {e2}"),
                    }
                } else {
                    "no other place to put it".to_string()
                };
                problems.push(format!("{}: {e}; {saved}", format.flag()));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(anyhow::anyhow!(problems.join("\n")))
        }
    }

    /// Keeps the result for [`write_last_words`] without writing it (nothing measured yet; a
    /// file written now would look like a source newer than the artifact to the build check).
    pub fn remember(&self, result: &RunResult) {
        let mut saved = SAVED.lock().unwrap_or_else(|e| e.into_inner());
        *saved = Some(Saved {
            outputs: self.clone(),
            result: result.clone(),
            done: false,
        });
    }

    /// Writes the result and keeps it for [`write_last_words`]; `last` marks the final write.
    pub fn save(&self, result: &RunResult, last: bool) -> anyhow::Result<()> {
        let mut saved = SAVED.lock().unwrap_or_else(|e| e.into_inner());
        if saved.as_ref().is_some_and(|s| s.done) {
            return Ok(());
        }
        let outcome = self.write(result);
        *saved = Some(Saved {
            outputs: self.clone(),
            result: result.clone(),
            done: last,
        });
        if last {
            crate::interrupt::final_written();
        }
        outcome
    }
}

/// After a second signal, when the run could not finish: the last saved result, marked
/// interrupted and summarised, is written as the final one.
pub fn write_last_words() {
    let mut saved = SAVED.lock().unwrap_or_else(|e| e.into_inner());
    finish_saved(saved.as_mut(), RunStatus::Interrupted);
}

/// After a panic of the run itself: the last saved result is written, marked failed. Never
/// waits for the lock (the panic may have happened while holding it).
pub fn write_after_panic() {
    let mut saved = match SAVED.try_lock() {
        Ok(s) => s,
        Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return,
    };
    finish_saved(saved.as_mut(), RunStatus::Failed);
}

fn finish_saved(saved: Option<&mut Saved>, status: RunStatus) {
    let Some(s) = saved else {
        return;
    };
    if s.done {
        return;
    }
    s.result.status = status;
    s.result.finished_at = Some(crate::clock::now_rfc3339());
    for row in &mut s.result.rows {
        // A slot's excluded iteration stays before its replacement (they share the index).
        row.iterations.sort_by_key(|i| (i.index, i.sequence));
        crate::analysis::summary::summarize_row(row);
    }
    let msg = match s.outputs.write(&s.result) {
        Ok(()) => format!(
            "rigor: stopped early; finished iterations are kept in {}",
            s.outputs.json.display()
        ),
        Err(e) => format!("error: {e}"),
    };
    s.done = true;
    crate::console::err(&msg);
}

/// Creates `path`'s folder and writes then removes a probe file beside it (beside what a
/// symlink names). A path written in place (see [`write_atomic`]) is checked for write access.
pub(crate) fn probe(path: &Path) -> anyhow::Result<()> {
    if path.is_dir() {
        anyhow::bail!("is a folder");
    }
    let path = match destination(path) {
        Destination::InPlace(p) => {
            if p.exists() {
                nix::unistd::access(&p, nix::unistd::AccessFlags::W_OK)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))?;
            }
            return Ok(());
        }
        Destination::Replace(p) => p,
    };
    let path = path.as_path();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = tmp_path(path);
    std::fs::write(&tmp, b"")
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", tmp.display()))?;
    let _ = std::fs::remove_file(&tmp);
    Ok(())
}

/// `report.md` → `report.md.rigor-tmp`, beside the target so the rename stays on one filesystem.
fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".rigor-tmp");
    PathBuf::from(name)
}

/// How a result reaches `path`: a regular file (or none yet) is replaced whole; anything else
/// (`/dev/stdout`, a pipe, a FIFO, a terminal) is written in place, since a rename would put a
/// file where the node was. A symlink is followed to what it names.
enum Destination {
    Replace(PathBuf),
    InPlace(PathBuf),
}

fn destination(path: &Path) -> Destination {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let path = match is_link {
        // A link to nothing (yet) is written through: the write creates what it names.
        true => match std::fs::canonicalize(path) {
            Ok(p) => p,
            Err(_) => return Destination::InPlace(path.to_path_buf()),
        },
        false => path.to_path_buf(),
    };
    match std::fs::metadata(&path) {
        Ok(m) if !m.is_file() && !m.is_dir() => Destination::InPlace(path),
        _ => Destination::Replace(path),
    }
}

/// Writes `text` beside `path` and renames it in place, so a reader never sees half a file;
/// what is not a regular file is written in place instead (see [`Destination`]).
pub(crate) fn write_atomic(path: &Path, text: &str) -> anyhow::Result<()> {
    let path = match destination(path) {
        Destination::InPlace(p) => {
            return std::fs::write(&p, text)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))
        }
        Destination::Replace(p) => p,
    };
    let path = path.as_path();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = tmp_path(path);
    if let Err(e) = std::fs::write(&tmp, text) {
        // A full disk leaves the file empty or cut short: never left behind.
        let _ = std::fs::remove_file(&tmp);
        return Err(anyhow::anyhow!("cannot write {}: {e}", path.display()));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::anyhow!("cannot write {}: {e}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::Outputs;

    #[test]
    fn a_symlink_or_a_fifo_is_written_through_not_replaced() {
        let dir = std::env::temp_dir().join(format!("rigor-through-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("target.json");
        std::fs::write(&target, "old").unwrap();
        let link = dir.join("link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        super::probe(&link).unwrap();
        super::write_atomic(&link, "new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");

        let fifo = dir.join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        super::probe(&fifo).unwrap();
        super::write_atomic(&fifo, "through").unwrap();
        assert_eq!(reader.join().unwrap(), "through");
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn two_formats_naming_one_file_are_refused_before_the_run() {
        let dir = std::env::temp_dir().join(format!("rigor-outputs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let same = dir.join("j.json");
        let outputs = Outputs {
            json: same.clone(),
            markdown: Some(same.clone()),
            csv: Some(dir.join("r.csv")),
            html: None,
            run_dir: dir.clone(),
            view: crate::report::View::default(),
        };
        let err = outputs.check().unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot write the results: --json and --markdown both name {}: one would overwrite the other",
                same.display()
            )
        );
        let apart = Outputs {
            markdown: Some(dir.join("j.md")),
            ..outputs
        };
        apart.check().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
