//! Paths compared as text: where a path written in a config points once `.` and `..` are
//! resolved, without touching the file system (the path may not exist yet, or be on another
//! host).

use std::path::{Component, Path, PathBuf};

/// `path` with `.` and `..` resolved by text (symbolic links aside); `None` when `..` climbs
/// above where the path starts.
pub fn lexical(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// `path` (relative to `dir`, or absolute) relative to `dir` when it lies inside it: `""` for
/// `dir` itself, `None` outside it.
pub fn relative_inside(path: &Path, dir: &Path) -> Option<String> {
    let (p, d) = (lexical(&dir.join(path))?, lexical(dir)?);
    p.strip_prefix(&d).ok()?.to_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_resolve_by_text_and_what_climbs_out_is_outside() {
        assert_eq!(
            lexical(Path::new("/a/./b/../c")),
            Some(PathBuf::from("/a/c"))
        );
        assert_eq!(lexical(Path::new("a/../..")), None);
        let dir = Path::new("/src/app");
        assert_eq!(
            relative_inside(Path::new("out/bin"), dir).as_deref(),
            Some("out/bin")
        );
        assert_eq!(
            relative_inside(Path::new("/src/app"), dir).as_deref(),
            Some("")
        );
        assert_eq!(relative_inside(Path::new("../x"), dir), None);
        assert_eq!(relative_inside(Path::new("/src/app/../other"), dir), None);
    }
}
