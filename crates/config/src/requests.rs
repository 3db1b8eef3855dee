//! Request mixes as users write them: `[[jobs.NAME.requests]]` entries (in rigor.toml, or a
//! file of `[[requests]]` for `rigor load --requests`), or a vegeta-style targets file; each
//! resolved against the job's URL (same origin only) into the engine's [`RequestMix`].

use indexmap::IndexMap;
use rigor_load::{MixRequest, RequestMix};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One `[[requests]]` entry as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRequest {
    /// Names its figures, `load.req.NAME.*`.
    pub name: Option<String>,
    /// Path (and query) on the job's URL's origin, e.g. `/users?id=1`.
    pub path: Option<String>,
    /// A full URL on the job's URL's origin (scheme, host and port the same).
    pub url: Option<String>,
    pub method: Option<String>,
    #[serde(default)]
    pub headers: IndexMap<String, String>,
    pub body: Option<String>,
    /// A file whose contents are the body (relative to the file that names it).
    pub body_file: Option<String>,
    /// A file of bodies, one per line: each request sends the next line.
    pub body_lines: Option<String>,
    /// Relative share of the requests (default 1).
    pub weight: Option<u32>,
}

/// A request mix that cannot be used: what is wrong and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RequestsError(pub String);

fn err<T>(m: String) -> Result<T, RequestsError> {
    Err(RequestsError(m))
}

/// The scheme, host and port of an http(s) URL, lowercased, and its path and query.
fn origin_and_path(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(split);
    let default = match scheme.as_str() {
        "http" => "80",
        "https" => "443",
        _ => return None,
    };
    let authority = authority.to_ascii_lowercase();
    let with_port = match authority.rsplit_once(':') {
        Some((_, p)) if !p.contains(']') => authority.clone(),
        _ => format!("{authority}:{default}"),
    };
    let path = match tail {
        "" => "/".to_string(),
        t if t.starts_with('?') => format!("/{t}"),
        t => t.to_string(),
    };
    let path = path.split('#').next().unwrap_or("/").to_string();
    Some((format!("{scheme}://{with_port}"), path))
}

/// The mix `raw` describes for a job loading `base_url`; files are read relative to `dir`.
/// `at` names where the entries were written (`jobs.api.requests`, a file) for the errors.
pub fn resolve(
    raw: &[RawRequest],
    base_url: &str,
    dir: &Path,
    at: &str,
) -> Result<RequestMix, RequestsError> {
    let Some((origin, _)) = origin_and_path(base_url) else {
        return err(format!(
            "{at}: the job's url `{base_url}` is not an http(s) URL"
        ));
    };
    let mut requests = Vec::with_capacity(raw.len());
    for (i, r) in raw.iter().enumerate() {
        let here = format!("{at}[{}]", i + 1);
        let path = match (&r.path, &r.url) {
            (Some(_), Some(_)) => return err(format!("{here}: give `path` or `url`, not both")),
            (None, None) => return err(format!("{here}: needs a `path` or a `url`")),
            (Some(p), None) if !p.starts_with('/') => {
                return err(format!("{here}: path `{p}` must start with `/`"))
            }
            (Some(p), None) => p.clone(),
            (None, Some(u)) => match origin_and_path(u) {
                Some((o, p)) if o == origin => p,
                Some((o, _)) => {
                    return err(format!(
                        "{here}: url `{u}` is on {o}, not on the job's origin {origin}: a mix \
                         loads one origin"
                    ))
                }
                None => return err(format!("{here}: url `{u}` is not an http(s) URL")),
            },
        };
        let name = match &r.name {
            Some(n) => n.clone(),
            None => derived_name(r.method.as_deref().unwrap_or("GET"), &path),
        };
        if !rigor_load::valid_request_name(&name) {
            return err(format!(
                "{here}: name `{name}` must be 1 to 64 letters, digits, `_` or `-` (it names \
                 the figures load.req.NAME.*)"
            ));
        }
        let sources = [
            r.body.is_some(),
            r.body_file.is_some(),
            r.body_lines.is_some(),
        ];
        if sources.iter().filter(|&&b| b).count() > 1 {
            return err(format!(
                "{here}: give one of `body`, `body_file` and `body_lines`"
            ));
        }
        let bodies = if let Some(b) = &r.body {
            vec![b.clone().into_bytes()]
        } else if let Some(f) = &r.body_file {
            vec![read(&dir.join(f), &here, "body_file")?]
        } else if let Some(f) = &r.body_lines {
            let text = read(&dir.join(f), &here, "body_lines")?;
            let lines: Vec<Vec<u8>> = text
                .split(|&b| b == b'\n')
                .map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec())
                .filter(|l| !l.is_empty())
                .collect();
            if lines.is_empty() {
                return err(format!("{here}: body_lines `{f}` has no line"));
            }
            lines
        } else {
            Vec::new()
        };
        let weight = r.weight.unwrap_or(1);
        if weight == 0 {
            return err(format!("{here}: weight must be at least 1, got 0"));
        }
        requests.push(MixRequest {
            name,
            path,
            method: r.method.clone().unwrap_or_else(|| "GET".into()),
            headers: r
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            bodies,
            weight,
        });
    }
    let mut names: Vec<&str> = requests.iter().map(|r| r.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return err(format!("{at}: request name `{}` is used twice", w[0]));
    }
    if requests.is_empty() {
        return err(format!("{at}: a mix needs at least one request"));
    }
    Ok(RequestMix { requests, seed: 0 })
}

/// The most bytes a file a mix reads (`body_file`, `body_lines`, `--requests`) may hold: the
/// engine keeps every body serialised in memory, so a larger file is a mistake to name, not
/// one to read whole and fail on.
pub const MAX_REQUESTS_FILE_BYTES: u64 = 64 << 20;

fn read(path: &Path, here: &str, key: &str) -> Result<Vec<u8>, RequestsError> {
    read_capped(path).map_err(|e| RequestsError(format!("{here}: {key} `{}`: {e}", path.display())))
}

/// The file's bytes, refused before reading when its size is over
/// [`MAX_REQUESTS_FILE_BYTES`] (and, for a file whose size is not known ahead, such as a pipe
/// or a device, once that many bytes were read).
fn read_capped(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let too_big = |size: String| {
        format!(
            "{size} is more than the {} MiB a request file may hold",
            MAX_REQUESTS_FILE_BYTES >> 20
        )
    };
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    if len > MAX_REQUESTS_FILE_BYTES {
        return Err(too_big(format!(
            "{:.1} MiB",
            len as f64 / (1u64 << 20) as f64
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_REQUESTS_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_REQUESTS_FILE_BYTES {
        return Err(too_big("its content".into()));
    }
    Ok(bytes)
}

/// A name for a request that has none: its method and path in letters, digits and `_`.
fn derived_name(method: &str, path: &str) -> String {
    let mut n = format!(
        "{}_{}",
        method.to_ascii_lowercase(),
        path.trim_start_matches('/')
    );
    n = n
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let n = n.trim_end_matches('_').to_string();
    n.chars().take(64).collect()
}

/// `rigor load --requests FILE`: a TOML file of `[[requests]]`, or (any other content) a
/// vegeta-style targets file, resolved against `base_url`.
pub fn read_file(path: &Path, base_url: &str) -> Result<RequestMix, RequestsError> {
    let text = read_capped(path)
        .and_then(|b| String::from_utf8(b).map_err(|_| "it is not UTF-8 text".to_string()))
        .map_err(|e| RequestsError(format!("--requests `{}`: {e}", path.display())))?;
    let dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
    let at = path.display().to_string();
    let raw = if looks_like_toml(&text) {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            requests: Vec<RawRequest>,
        }
        let f: File = toml::from_str(&text)
            .map_err(|e| RequestsError(format!("{at}: {}", e.to_string().trim_end())))?;
        f.requests
    } else {
        targets(&text, &at)?
    };
    resolve(&raw, base_url, &dir, &format!("{at}: requests"))
}

/// Whether the file is TOML (`[[requests]]` tables) rather than targets (`GET URL` lines).
fn looks_like_toml(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with('['))
}

/// Whether a line of a targets file begins a target, as vegeta tells it: an upper-case word
/// and a space (`GET http://…`), which no `Name: value` header line is. Targets may follow
/// one another without a blank line.
fn starts_target(line: &str) -> bool {
    let word = line.len()
        - line
            .trim_start_matches(|c: char| c.is_ascii_uppercase())
            .len();
    word > 0 && line[word..].starts_with(char::is_whitespace)
}

/// Vegeta's targets format: `METHOD URL`, then `Name: value` headers, then an optional
/// `@body-file`, targets separated by blank lines or not at all (a line `METHOD URL` starts
/// the next); `#` starts a comment line. Every target
/// counts once (vegeta takes them in turn), so repeating a target weighs it more.
fn targets(text: &str, at: &str) -> Result<Vec<RawRequest>, RequestsError> {
    let mut out: Vec<RawRequest> = Vec::new();
    let mut current: Option<RawRequest> = None;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        let here = || format!("{at}:{}", n + 1);
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            out.extend(current.take());
            continue;
        }
        if starts_target(line) {
            out.extend(current.take());
        }
        match current.as_mut() {
            None => {
                let Some((method, url)) = line.split_once(char::is_whitespace) else {
                    return err(format!(
                        "{}: expected `METHOD URL` (a vegeta target), got `{line}`",
                        here()
                    ));
                };
                current = Some(RawRequest {
                    method: Some(method.to_string()),
                    url: Some(url.trim().to_string()),
                    ..Default::default()
                });
            }
            Some(r) => {
                if let Some(file) = line.strip_prefix('@') {
                    r.body_file = Some(file.trim().to_string());
                } else if let Some((k, v)) = line.split_once(':') {
                    r.headers.insert(k.trim().to_string(), v.trim().to_string());
                } else {
                    return err(format!(
                        "{}: expected a header `Name: value` or `@body-file`, got `{line}`",
                        here()
                    ));
                }
            }
        }
    }
    out.extend(current);
    // Repeated targets weigh more (vegeta sends each in turn): merge identical ones.
    let mut merged: Vec<RawRequest> = Vec::new();
    for r in out {
        let key = |x: &RawRequest| {
            (
                x.method.clone(),
                x.url.clone(),
                x.body_file.clone(),
                x.headers.clone(),
            )
        };
        match merged.iter_mut().find(|m| key(m) == key(&r)) {
            Some(m) => m.weight = Some(m.weight.unwrap_or(1) + 1),
            None => merged.push(r),
        }
    }
    // Names from method and path, made distinct where two would collide.
    let mut used: Vec<String> = Vec::new();
    for r in &mut merged {
        let path = r
            .url
            .as_deref()
            .and_then(origin_and_path)
            .map_or_else(|| "/".to_string(), |(_, p)| p);
        let base = derived_name(r.method.as_deref().unwrap_or("GET"), &path);
        let base = if base.is_empty() {
            "req".to_string()
        } else {
            base
        };
        let mut name = base.clone();
        let mut k = 2;
        while used.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        used.push(name.clone());
        r.name = Some(name);
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_resolve_on_the_jobs_origin() {
        let raw = vec![
            RawRequest {
                name: Some("list".into()),
                path: Some("/items?page=1".into()),
                weight: Some(3),
                ..Default::default()
            },
            RawRequest {
                url: Some("http://127.0.0.1:8080/items/1".into()),
                method: Some("PUT".into()),
                body: Some("{}".into()),
                ..Default::default()
            },
        ];
        let m = resolve(
            &raw,
            "http://127.0.0.1:8080/",
            Path::new("."),
            "jobs.api.requests",
        )
        .unwrap();
        assert_eq!(m.requests[0].path, "/items?page=1");
        assert_eq!(m.requests[0].weight, 3);
        assert_eq!(m.requests[1].name, "put_items_1");
        assert_eq!(m.requests[1].bodies, vec![b"{}".to_vec()]);
        let other = vec![RawRequest {
            url: Some("http://127.0.0.1:9999/x".into()),
            ..Default::default()
        }];
        let e = resolve(
            &other,
            "http://127.0.0.1:8080/",
            Path::new("."),
            "jobs.api.requests",
        )
        .unwrap_err()
        .0;
        assert!(
            e.contains("jobs.api.requests[1]") && e.contains("not on the job's origin"),
            "{e}"
        );
        let both = vec![RawRequest {
            path: Some("/a".into()),
            body: Some("x".into()),
            body_lines: Some("f".into()),
            ..Default::default()
        }];
        let e = resolve(&both, "http://h/", Path::new("."), "r")
            .unwrap_err()
            .0;
        assert!(e.contains("one of `body`"), "{e}");
    }

    #[test]
    fn targets_files_read_like_vegetas() {
        let dir = std::env::temp_dir().join(format!("rigor-targets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("body.json"), "{\"a\":1}").unwrap();
        let file = dir.join("targets.txt");
        std::fs::write(
            &file,
            "# reads\nGET http://127.0.0.1:8080/a\n\nGET http://127.0.0.1:8080/a\n\n\
             POST http://127.0.0.1:8080/b\nContent-Type: application/json\n@body.json\n",
        )
        .unwrap();
        let m = read_file(&file, "http://127.0.0.1:8080/").unwrap();
        assert_eq!(m.requests.len(), 2);
        assert_eq!(
            (m.requests[0].name.as_str(), m.requests[0].weight),
            ("get_a", 2)
        );
        assert_eq!(m.requests[1].bodies, vec![b"{\"a\":1}".to_vec()]);
        assert_eq!(m.requests[1].headers[0].0, "Content-Type");
        std::fs::write(
            &file,
            "[[requests]]\npath = \"/x\"\nbody_lines = \"lines\"\n",
        )
        .unwrap();
        std::fs::write(dir.join("lines"), "1\n2\n\n3\n").unwrap();
        let m = read_file(&file, "http://127.0.0.1:8080/").unwrap();
        assert_eq!(m.requests[0].bodies.len(), 3);
        // One target a line, without blank lines between them, as vegeta reads them.
        std::fs::write(
            &file,
            "GET http://127.0.0.1:8080/a\nGET http://127.0.0.1:8080/b\nX-A: 1\nGET http://127.0.0.1:8080/a\n",
        )
        .unwrap();
        let m = read_file(&file, "http://127.0.0.1:8080/").unwrap();
        let got: Vec<_> = m
            .requests
            .iter()
            .map(|r| (r.name.as_str(), r.weight, r.headers.len()))
            .collect();
        assert_eq!(got, vec![("get_a", 2, 0), ("get_b", 1, 1)]);
        std::fs::write(&file, "GET\n").unwrap();
        let e = read_file(&file, "http://127.0.0.1:8080/").unwrap_err().0;
        assert!(e.contains(":1: expected `METHOD URL`"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_body_file_over_the_cap_is_refused_by_its_size_naming_file_and_key() {
        let dir = std::env::temp_dir().join(format!("rigor-big-body-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Sparse: 300 MiB by its size, nothing on disk, and never read.
        let big = std::fs::File::create(dir.join("big.lines")).unwrap();
        big.set_len(300 << 20).unwrap();
        let file = dir.join("mix.toml");
        std::fs::write(
            &file,
            "[[requests]]\npath = \"/x\"\nbody_lines = \"big.lines\"\n",
        )
        .unwrap();
        let e = read_file(&file, "http://127.0.0.1:8080/").unwrap_err().0;
        let at = format!(
            "{}: requests[1]: body_lines `{}`",
            file.display(),
            dir.join("big.lines").display()
        );
        assert!(e.starts_with(&at), "{e}");
        assert!(
            e.ends_with("300.0 MiB is more than the 64 MiB a request file may hold"),
            "{e}"
        );
        // Just under the cap is read.
        big.set_len(MAX_REQUESTS_FILE_BYTES - 1).unwrap();
        std::fs::write(
            &file,
            "[[requests]]\npath = \"/x\"\nbody_file = \"big.lines\"\n",
        )
        .unwrap();
        let m = read_file(&file, "http://127.0.0.1:8080/").unwrap();
        assert_eq!(
            m.requests[0].bodies[0].len() as u64,
            MAX_REQUESTS_FILE_BYTES - 1
        );
        // A device whose size is not known ahead is cut at the cap.
        std::fs::write(
            &file,
            "[[requests]]\npath = \"/x\"\nbody_file = \"/dev/zero\"\n",
        )
        .unwrap();
        let e = read_file(&file, "http://127.0.0.1:8080/").unwrap_err().0;
        assert!(
            e.contains("body_file `/dev/zero`: its content is more than the 64 MiB"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
