//! Saved results as inputs of `rigor compare`: reading one with an error that says what is
//! wrong, and naming each so its column and warnings can refer to it.

use super::matching::COMPARE_SCHEMA;
use crate::error::LoadError;
use rigor_model::result::{RunResult, RunStatus, SCHEMA};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One saved result and the path it was read from.
pub type Saved = (PathBuf, RunResult);

/// The largest result file `rigor compare` and `rigor history import` read: a result of 10,000
/// rows is a few tens of MiB, and a file past this (or a stream that never ends, such as
/// `/dev/zero`) is refused before it can take the machine's memory.
pub const MAX_RESULT_BYTES: u64 = 256 * 1024 * 1024;

/// Just the `schema` field, read without keeping the rest of the document.
#[derive(serde::Deserialize)]
struct SchemaOnly {
    schema: Option<serde_json::Value>,
}

/// Reads one saved result, with an error that names the file and says what is wrong with it;
/// rows the file kept no summary for are summarised here, once. The text is parsed straight
/// into the result (no intermediate JSON tree, which took ten times the file's size), after a
/// first pass that reads the schema alone.
pub fn load(path: &Path) -> Result<RunResult, LoadError> {
    let path_buf = || path.to_path_buf();
    let bytes = read_bounded(path, MAX_RESULT_BYTES)?;
    let head: SchemaOnly = serde_json::from_slice(&bytes).map_err(|e| LoadError::NotJson {
        path: path_buf(),
        source: e,
    })?;
    match head.schema.as_ref().map(|s| s.as_str()) {
        Some(Some(SCHEMA)) => {}
        Some(Some(COMPARE_SCHEMA)) => {
            return Err(LoadError::CompareOutput {
                path: path_buf(),
                schema: COMPARE_SCHEMA,
            })
        }
        Some(Some(other)) => {
            return Err(LoadError::OtherSchema {
                path: path_buf(),
                schema: other.to_string(),
                reads: SCHEMA,
            })
        }
        _ => {
            return Err(LoadError::NoSchema {
                path: path_buf(),
                reads: SCHEMA,
            })
        }
    }
    let mut result: RunResult =
        serde_json::from_slice(&bytes).map_err(|e| LoadError::Mismatch {
            path: path_buf(),
            reads: SCHEMA,
            source: e,
        })?;
    drop(bytes);
    if let Some(why) = impossible_figure(&result) {
        return Err(LoadError::Impossible {
            path: path_buf(),
            why,
        });
    }
    crate::summary::complete(&mut result);
    Ok(result)
}

/// The whole file, refused when it holds more than `limit` bytes: a regular file by its size
/// before anything is read, anything else (a pipe, a device) as soon as it has given more.
fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, LoadError> {
    use std::io::Read;
    let cannot = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => LoadError::NotFound {
            path: path.to_path_buf(),
        },
        _ => LoadError::Unreadable {
            path: path.to_path_buf(),
            source: e,
        },
    };
    let too_big = || LoadError::TooLarge {
        path: path.to_path_buf(),
    };
    let file = std::fs::File::open(path).map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if meta.is_dir() {
        return Err(LoadError::Directory {
            path: path.to_path_buf(),
        });
    }
    if meta.is_file() && meta.len() > limit {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(if meta.is_file() {
        meta.len() as usize
    } else {
        0
    });
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(bytes)
}

/// A figure no run can have measured, named with its row and iteration: rigor's own counts,
/// rates, sizes and times (`load.*`, `app.*` but the application's own `app.metric.*`, which
/// may be negative gauges) are never below zero.
fn impossible_figure(result: &RunResult) -> Option<String> {
    let own = |id: &str| {
        (id.starts_with("load.") || id.starts_with("app.")) && !id.starts_with("app.metric.")
    };
    for (r, row) in result.rows.iter().enumerate() {
        for it in &row.iterations {
            for (id, v) in &it.measurements {
                if !v.is_finite() || (*v < 0.0 && own(id)) {
                    return Some(format!(
                        "row {} iteration {}: `{id}` is {v}, which no run measures (rigor's \
                         counts, rates, sizes and times are finite and never negative)",
                        r + 1,
                        it.number()
                    ));
                }
            }
        }
    }
    None
}

/// Reads every file in order; the first that cannot be read stops it.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Saved>, LoadError> {
    paths.iter().map(|p| Ok((p.clone(), load(p)?))).collect()
}

/// One input file as the JSON output names it.
#[derive(Debug, Clone, Serialize)]
pub struct FileInfo {
    /// The path as given on the command line.
    pub path: String,
    /// The column name: the result's `description`, else the file stem.
    pub name: String,
    /// The result's scenario(s), so a reader sees what was compared.
    pub scenario: String,
    /// The result's `--description`, if any.
    pub description: Option<String>,
    /// When the run started: separately recorded runs may be days apart.
    pub started_at: String,
    /// The rigor that wrote the result (measurement methods can change between versions).
    pub rigor_version: String,
    /// `complete`, `interrupted`, `failed`…
    pub status: RunStatus,
}

/// What the comparison says about each input, under the column `names` it was given.
pub fn file_infos(inputs: &[Saved], names: &[String]) -> Vec<FileInfo> {
    inputs
        .iter()
        .zip(names)
        .map(|((p, r), name)| FileInfo {
            path: p.display().to_string(),
            name: name.clone(),
            scenario: r.scenario.clone(),
            description: r.description.clone(),
            started_at: r.started_at.clone(),
            rigor_version: r.rigor_version.clone(),
            status: r.status.clone(),
        })
        .collect()
}

/// Column names: each result's description, else its file stem; made unique.
pub fn column_names(inputs: &[Saved]) -> Vec<String> {
    let stem = |p: &Path| {
        p.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| p.display().to_string())
    };
    let mut names: Vec<String> = inputs
        .iter()
        .map(|(p, r)| {
            r.description
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| stem(p))
        })
        .collect();
    // Two files with the same description: fall back to their stems, then number them.
    for i in 0..names.len() {
        if names.iter().filter(|n| **n == names[i]).count() > 1 {
            let dup = names[i].clone();
            for (j, n) in names.iter_mut().enumerate() {
                if *n == dup {
                    *n = stem(&inputs[j].0);
                }
            }
        }
    }
    // The same stem twice (`rigor-results/*/result.json`): the folder tells them apart.
    let folder = |p: &Path| {
        let stem = stem(p);
        match p.parent().and_then(Path::file_name) {
            Some(d) if stem == "result" => d.to_string_lossy().into_owned(),
            Some(d) => format!("{}/{stem}", d.to_string_lossy()),
            None => stem,
        }
    };
    for i in 0..names.len() {
        if names.iter().filter(|n| **n == names[i]).count() > 1 {
            let dup = names[i].clone();
            for (j, n) in names.iter_mut().enumerate() {
                if *n == dup && dup == stem(&inputs[j].0) {
                    *n = folder(&inputs[j].0);
                }
            }
        }
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for n in names.iter_mut() {
        let count = seen.entry(n.clone()).or_insert(0);
        *count += 1;
        if *count > 1 {
            *n = format!("{n} ({count})");
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(path: &str, description: Option<&str>) -> Saved {
        let mut r: RunResult = serde_json::from_value(serde_json::json!({
            "schema": SCHEMA, "rigor_version": "0", "scenario": "s", "profile": "local",
            "started_at": "", "rows": []
        }))
        .unwrap();
        r.description = description.map(str::to_string);
        (PathBuf::from(path), r)
    }

    #[test]
    fn columns_are_descriptions_else_stems_and_always_unique() {
        let names = column_names(&[
            saved("/tmp/net5.json", None),
            saved("/tmp/x.json", Some(" this PR ")),
            saved("/tmp/y.json", Some("   ")),
        ]);
        assert_eq!(names, vec!["net5", "this PR", "y"]);
        // The same description twice: the stems tell them apart.
        let names = column_names(&[saved("a/r.json", Some("pr")), saved("b/s.json", Some("pr"))]);
        assert_eq!(names, vec!["r", "s"]);
        // The same stem twice: the folder names them, alone for rigor's own `result.json`.
        let names = column_names(&[saved("a/r.json", None), saved("b/r.json", None)]);
        assert_eq!(names, vec!["a/r", "b/r"]);
        let names = column_names(&[
            saved("rigor-results/20261202-061447/result.json", None),
            saved("rigor-results/20261203-101010/result.json", None),
        ]);
        assert_eq!(names, vec!["20261202-061447", "20261203-101010"]);
        // The same file twice: numbered.
        let names = column_names(&[saved("a/r.json", None), saved("a/r.json", None)]);
        assert_eq!(names, vec!["a/r", "a/r (2)"]);
    }

    #[test]
    fn load_names_the_file_and_the_problem() {
        let dir = std::env::temp_dir().join(format!("rigor-cmp-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.json");
        let err = load(&missing).unwrap_err().to_string();
        assert!(err.contains("missing.json: no such file"), "{err}");
        let not_json = dir.join("bad.json");
        std::fs::write(&not_json, "hello").unwrap();
        let err = load(&not_json).unwrap_err().to_string();
        assert!(err.contains("bad.json is not JSON"), "{err}");
        let other = dir.join("other.json");
        std::fs::write(&other, r#"{"schema":"something.else"}"#).unwrap();
        let err = load(&other).unwrap_err().to_string();
        assert!(
            err.contains("other.json has schema `something.else`"),
            "{err}"
        );
        let compared = dir.join("compared.json");
        std::fs::write(&compared, r#"{"schema":"rigor.compare.v1"}"#).unwrap();
        let err = load(&compared).unwrap_err().to_string();
        assert!(err.contains("is a `rigor compare` output"), "{err}");
        let no_schema = dir.join("noschema.json");
        std::fs::write(&no_schema, r#"{"rows":[]}"#).unwrap();
        let err = load(&no_schema).unwrap_err().to_string();
        assert!(err.contains("no \"schema\" field"), "{err}");
        let broken = dir.join("broken.json");
        std::fs::write(&broken, r#"{"schema":"rigor.run.v1"}"#).unwrap();
        let err = load(&broken).unwrap_err().to_string();
        assert!(
            err.contains("does not match the `rigor.run.v1` schema"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_result_kept_without_summaries_is_summarised_once_as_it_loads() {
        use crate::summary::tests::row_with;
        let dir = std::env::temp_dir().join(format!("rigor-cmp-sum-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (_, mut r) = saved("x.json", None);
        let mut bare = row_with(&[("c", "1")], None, "load.rps", &[100.0, 110.0, 120.0]);
        bare.summary.clear();
        let mut kept = row_with(&[("c", "2")], None, "load.rps", &[1.0, 2.0, 3.0]);
        // A summary the file kept is the writer's and stays as written, even where the
        // iterations would say otherwise.
        kept.summary.insert(
            "load.rps".into(),
            rigor_stats::summarize(&[7.0, 7.0, 7.0]).unwrap(),
        );
        r.rows = vec![bare, kept];
        let path = dir.join("x.json");
        std::fs::write(&path, serde_json::to_string(&r).unwrap()).unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.rows[0].summary["load.rps"].median, 110.0);
        assert_eq!(loaded.rows[0].summary["load.rps"].n, 3);
        assert_eq!(loaded.rows[1].summary["load.rps"].median, 7.0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
