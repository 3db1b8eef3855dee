//! Release builds, verified: the build command, the artifact path and the job's own hint must
//! not say "debug" or leave optimisation off.

use crate::result::{Warning, WarningKind};

/// Every sign of a debug build in the job's build command, artifact, command or hint. `who`
/// names the build in the message: the job, and the variants that use this build.
pub fn debug_build_warnings(
    who: &str,
    build: Option<&str>,
    artifact: Option<&str>,
    command: &str,
    configuration: Option<&str>,
) -> Vec<Warning> {
    let mut why = Vec::new();
    let paths = [artifact.unwrap_or(""), command];
    for p in paths {
        let lower = p.replace('\\', "/");
        if lower.contains("target/debug") {
            why.push(format!("`{p}` is a cargo debug output (target/debug)"));
        } else if lower.contains("bin/Debug") || lower.contains("/Debug/") {
            why.push(format!("`{p}` is a Debug output folder"));
        }
    }
    if let Some(b) = build {
        for part in b.split(['&', ';', '|']) {
            let all: Vec<&str> = part.split_whitespace().collect();
            // Leading `NAME=value` assignments (`RUSTFLAGS=… cargo build`) are not the program.
            let skip = all
                .iter()
                .take_while(|w| w.split_once('=').is_some_and(|(k, _)| is_name(k)))
                .count();
            let words = &all[skip..];
            let has = |w: &str| words.contains(&w);
            let pos = |w: &str| words.iter().position(|x| *x == w);
            if words.first() == Some(&"cargo") && (has("build") || has("run")) {
                let release = has("--release")
                    || has("-r")
                    || words.iter().any(|w| w.starts_with("--profile"));
                if !release {
                    why.push(format!("`{}` builds without --release", part.trim()));
                }
            }
            if words.first() == Some(&"dotnet") && (has("build") || has("publish") || has("run")) {
                let config = pos("-c")
                    .or_else(|| pos("--configuration"))
                    .and_then(|i| words.get(i + 1))
                    .map(|s| s.to_ascii_lowercase());
                let inline = words
                    .iter()
                    .find_map(|w| w.strip_prefix("--configuration=").or(w.strip_prefix("-c:")))
                    .map(str::to_ascii_lowercase);
                match config.or(inline).as_deref() {
                    Some("release") => {}
                    Some(other) => {
                        why.push(format!("`{}` builds configuration {other}", part.trim()))
                    }
                    None => why.push(format!(
                        "`{}` has no `-c Release` (dotnet defaults to Debug)",
                        part.trim()
                    )),
                }
            }
            if words.first() == Some(&"go")
                && part.contains("-gcflags")
                && part.contains("-N")
                && part.contains("-l")
            {
                why.push(format!(
                    "`{}` disables optimisation (-gcflags -N -l)",
                    part.trim()
                ));
            }
            if (words.first() == Some(&"cmake")
                || words.iter().any(|w| w.starts_with("-DCMAKE_BUILD_TYPE")))
                && words
                    .iter()
                    .any(|w| w.eq_ignore_ascii_case("-DCMAKE_BUILD_TYPE=Debug"))
            {
                why.push(format!("`{}` is a CMake Debug build", part.trim()));
            }
            const C_COMPILERS: &[&str] = &["cc", "gcc", "clang", "c++", "g++", "clang++"];
            let compiler = words
                .first()
                .map(|w| w.rsplit('/').next().unwrap_or(w))
                .is_some_and(|w| C_COMPILERS.contains(&w));
            if compiler && !words.iter().any(|w| w.starts_with("-O") && *w != "-O0") {
                why.push(format!(
                    "`{}` has no -O flag (C and C++ compilers default to -O0)",
                    part.trim()
                ));
            }
        }
    }
    if let Some(c) = configuration {
        if c.eq_ignore_ascii_case("debug") {
            why.push("the job says configuration = \"debug\"".to_string());
        }
    }
    why.into_iter()
        .map(|w| {
            Warning::of(
                WarningKind::DebugBuild,
                format!("{who} looks like a debug build: {w}"),
            )
        })
        .collect()
}

fn is_name(k: &str) -> bool {
    !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(b: Option<&str>, a: Option<&str>, c: &str, conf: Option<&str>) -> usize {
        debug_build_warnings("`app`", b, a, c, conf).len()
    }

    #[test]
    fn spots_each_kind_of_debug_build() {
        assert_eq!(kinds(Some("cargo build -p x"), None, "x", None), 1);
        assert_eq!(
            kinds(Some("CARGO_X=1 cargo build -p x"), None, "x", None),
            1
        );
        assert_eq!(
            kinds(Some("cargo build --release -p x"), None, "x", None),
            0
        );
        assert_eq!(
            kinds(Some("cargo build --profile bench"), None, "x", None),
            0
        );
        assert_eq!(
            kinds(None, Some("target/debug/x"), "target/debug/x", None),
            2
        );
        assert_eq!(kinds(Some("dotnet publish -c Release"), None, "x", None), 0);
        assert_eq!(kinds(Some("dotnet build"), None, "x", None), 1);
        assert_eq!(
            kinds(
                Some("dotnet build -c Debug"),
                None,
                "bin/Debug/net8.0/app",
                None
            ),
            2
        );
        assert_eq!(
            kinds(Some("go build -gcflags='all=-N -l' ."), None, "x", None),
            1
        );
        assert_eq!(kinds(Some("go build ."), None, "x", None), 0);
        assert_eq!(kinds(Some("cc -o app main.c"), None, "x", None), 1);
        assert_eq!(
            kinds(Some("/usr/bin/gcc -O0 -o app main.c"), None, "x", None),
            1
        );
        assert_eq!(kinds(Some("gcc -O2 -o app main.c"), None, "x", None), 0);
        assert_eq!(kinds(Some("make && clang -Os x.c"), None, "x", None), 0);
        assert_eq!(kinds(None, None, "x", Some("debug")), 1);
        assert_eq!(
            kinds(
                Some("cargo build --release -p hello-server"),
                Some("target/release/hello-server"),
                "target/release/hello-server --port 5000",
                None
            ),
            0
        );
    }
}
