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
    let mut why = debug_outputs(&[artifact.unwrap_or(""), command]);
    for step in build.into_iter().flat_map(|b| b.split(['&', ';', '|'])) {
        why.extend(unoptimised_step(step));
    }
    if configuration.is_some_and(|c| c.eq_ignore_ascii_case("debug")) {
        why.push("the job says configuration = \"debug\"".to_string());
    }
    // One build is one warning, however many signs of it there are (its artifact, the command
    // that runs it, the build step): the signs are its reasons, each said once.
    let mut reasons: Vec<String> = Vec::new();
    for w in why {
        if !reasons.contains(&w) {
            reasons.push(w);
        }
    }
    if reasons.is_empty() {
        return Vec::new();
    }
    vec![Warning::of(
        WarningKind::DebugBuild,
        format!("{who} looks like a debug build: {}", reasons.join("; ")),
    )]
}

/// Paths (the artifact, the command) inside a debug output folder.
fn debug_outputs(paths: &[&str]) -> Vec<String> {
    let mut why = Vec::new();
    for p in paths {
        let lower = p.replace('\\', "/");
        if lower.contains("target/debug") {
            why.push(format!("`{p}` is a cargo debug output (target/debug)"));
        } else if lower.contains("bin/Debug") || lower.contains("/Debug/") {
            why.push(format!("`{p}` is a Debug output folder"));
        }
    }
    why
}

/// What leaves optimisation off in one step of a build command, for each toolchain that can.
fn unoptimised_step(step: &str) -> Vec<String> {
    let all: Vec<&str> = step.split_whitespace().collect();
    // Leading `NAME=value` assignments (`RUSTFLAGS=… cargo build`) are not the program.
    let skip = all
        .iter()
        .take_while(|w| w.split_once('=').is_some_and(|(k, _)| is_name(k)))
        .count();
    let words = &all[skip..];
    let step = step.trim();
    [cargo, dotnet, go, cmake, c_compiler]
        .into_iter()
        .filter_map(|check| check(words, step))
        .collect()
}

fn cargo(words: &[&str], step: &str) -> Option<String> {
    let has = |w: &str| words.contains(&w);
    let builds = words.first() == Some(&"cargo") && (has("build") || has("run"));
    let release = has("--release") || has("-r") || words.iter().any(|w| w.starts_with("--profile"));
    (builds && !release).then(|| format!("`{step}` builds without --release"))
}

fn dotnet(words: &[&str], step: &str) -> Option<String> {
    let has = |w: &str| words.contains(&w);
    if words.first() != Some(&"dotnet") || !(has("build") || has("publish") || has("run")) {
        return None;
    }
    let pos = |w: &str| words.iter().position(|x| *x == w);
    let config = pos("-c")
        .or_else(|| pos("--configuration"))
        .and_then(|i| words.get(i + 1))
        .map(|s| s.to_ascii_lowercase());
    let inline = words
        .iter()
        .find_map(|w| w.strip_prefix("--configuration=").or(w.strip_prefix("-c:")))
        .map(str::to_ascii_lowercase);
    match config.or(inline).as_deref() {
        Some("release") => None,
        Some(other) => Some(format!("`{step}` builds configuration {other}")),
        None => Some(format!(
            "`{step}` has no `-c Release` (dotnet defaults to Debug)"
        )),
    }
}

fn go(words: &[&str], step: &str) -> Option<String> {
    let off = step.contains("-gcflags") && step.contains("-N") && step.contains("-l");
    (words.first() == Some(&"go") && off)
        .then(|| format!("`{step}` disables optimisation (-gcflags -N -l)"))
}

fn cmake(words: &[&str], step: &str) -> Option<String> {
    let configures = words.first() == Some(&"cmake")
        || words.iter().any(|w| w.starts_with("-DCMAKE_BUILD_TYPE"));
    let debug = words
        .iter()
        .any(|w| w.eq_ignore_ascii_case("-DCMAKE_BUILD_TYPE=Debug"));
    (configures && debug).then(|| format!("`{step}` is a CMake Debug build"))
}

fn c_compiler(words: &[&str], step: &str) -> Option<String> {
    const C_COMPILERS: &[&str] = &["cc", "gcc", "clang", "c++", "g++", "clang++"];
    let compiler = words
        .first()
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .is_some_and(|w| C_COMPILERS.contains(&w));
    if !compiler {
        return None;
    }
    // The last -O flag wins, as the compilers read it.
    match words.iter().rev().find(|w| w.starts_with("-O")) {
        None => Some(format!(
            "`{step}` has no -O flag (C and C++ compilers default to -O0)"
        )),
        Some(&"-O0") => Some(format!("`{step}` compiles at -O0 (no optimisation)")),
        Some(_) => None,
    }
}

fn is_name(k: &str) -> bool {
    !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build command, artifact, command and configuration hint, with the reasons expected.
    type Case<'a> = (
        Option<&'a str>,
        Option<&'a str>,
        &'a str,
        Option<&'a str>,
        &'a [&'a str],
    );

    /// The reasons given for a build, each checked to be a `debug_build` warning naming `app`.
    fn reasons(b: Option<&str>, a: Option<&str>, c: &str, conf: Option<&str>) -> Vec<String> {
        debug_build_warnings("`app`", b, a, c, conf)
            .into_iter()
            .flat_map(|w| {
                assert_eq!(w.kind, WarningKind::DebugBuild);
                assert_eq!(w.advice, WarningKind::DebugBuild.advice());
                w.message
                    .strip_prefix("`app` looks like a debug build: ")
                    .unwrap_or_else(|| panic!("{}", w.message))
                    .split("; ")
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn one_build_is_one_warning_with_its_reasons() {
        let w = debug_build_warnings(
            "`app`",
            Some("cargo build"),
            Some("target/debug/app"),
            "target/debug/app --port 1",
            None,
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(
            w[0].message,
            "`app` looks like a debug build: `target/debug/app` is a cargo debug output \
             (target/debug); `target/debug/app --port 1` is a cargo debug output (target/debug); \
             `cargo build` builds without --release"
        );
    }

    #[test]
    fn spots_each_kind_of_debug_build() {
        let none: Vec<String> = Vec::new();
        let cases: &[Case] = &[
            (
                Some("cargo build -p x"),
                None,
                "x",
                None,
                &["`cargo build -p x` builds without --release"],
            ),
            (
                Some("CARGO_X=1 cargo build -p x"),
                None,
                "x",
                None,
                &["`CARGO_X=1 cargo build -p x` builds without --release"],
            ),
            (Some("cargo build --release -p x"), None, "x", None, &[]),
            (Some("cargo build --profile bench"), None, "x", None, &[]),
            (
                None,
                Some("target/debug/x"),
                "target/debug/x",
                None,
                // The artifact and the command are the same path: said once.
                &["`target/debug/x` is a cargo debug output (target/debug)"],
            ),
            (Some("dotnet publish -c Release"), None, "x", None, &[]),
            (
                Some("dotnet build"),
                None,
                "x",
                None,
                &["`dotnet build` has no `-c Release` (dotnet defaults to Debug)"],
            ),
            (
                Some("dotnet build -c Debug"),
                None,
                "bin/Debug/net8.0/app",
                None,
                &[
                    "`bin/Debug/net8.0/app` is a Debug output folder",
                    "`dotnet build -c Debug` builds configuration debug",
                ],
            ),
            (
                Some("go build -gcflags='all=-N -l' ."),
                None,
                "x",
                None,
                &["`go build -gcflags='all=-N -l' .` disables optimisation (-gcflags -N -l)"],
            ),
            (Some("go build ."), None, "x", None, &[]),
            (
                Some("cc -o app main.c"),
                None,
                "x",
                None,
                &["`cc -o app main.c` has no -O flag (C and C++ compilers default to -O0)"],
            ),
            (
                Some("/usr/bin/gcc -O0 -o app main.c"),
                None,
                "x",
                None,
                &["`/usr/bin/gcc -O0 -o app main.c` compiles at -O0 (no optimisation)"],
            ),
            (
                Some("gcc -O2 -O0 -o app main.c"),
                None,
                "x",
                None,
                &["`gcc -O2 -O0 -o app main.c` compiles at -O0 (no optimisation)"],
            ),
            (Some("gcc -O0 -O2 -o app main.c"), None, "x", None, &[]),
            (
                Some("cmake -DCMAKE_BUILD_TYPE=Debug . && make"),
                None,
                "x",
                None,
                &["`cmake -DCMAKE_BUILD_TYPE=Debug .` is a CMake Debug build"],
            ),
            (Some("gcc -O2 -o app main.c"), None, "x", None, &[]),
            (Some("make && clang -Os x.c"), None, "x", None, &[]),
            (
                None,
                None,
                "x",
                Some("debug"),
                &["the job says configuration = \"debug\""],
            ),
            (
                Some("cargo build --release -p hello-server"),
                Some("target/release/hello-server"),
                "target/release/hello-server --port 5000",
                None,
                &[],
            ),
        ];
        for (build, artifact, command, conf, want) in cases {
            let got = reasons(*build, *artifact, command, *conf);
            assert_eq!(
                got,
                want.to_vec(),
                "{build:?} {artifact:?} {command:?} {conf:?}"
            );
        }
        assert_eq!(reasons(None, None, "x", None), none);
    }
}
