//! Unoptimised builds that no path gives away: a cargo profile that inherits `dev` or sets
//! `opt-level = 0` (in Cargo.toml, `.cargo/config.toml` or `CARGO_PROFILE_*`), and rustc flags
//! with `-C opt-level=0` (RUSTFLAGS and friends, inline or in the environment).

use super::shell_words::{assignment, parts, split_words};
use crate::result::{Warning, WarningKind};
use std::path::{Path, PathBuf};

/// How one cargo invocation in a build command will be optimised.
#[derive(Debug, Clone, PartialEq)]
pub struct CargoOpt {
    pub profile: String,
    /// The effective opt-level (`0`–`3`, `s`, `z`), when it could be read.
    pub opt_level: Option<String>,
    /// Where the level comes from: `RUSTFLAGS`, `Cargo.toml [profile.fast] (inherits dev)`…
    pub source: String,
}

/// Every cargo invocation of `build`, run in `dir`, with `env` giving the build's environment.
pub fn cargo_opt_levels(
    build: &str,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<CargoOpt> {
    let mut out = Vec::new();
    for words in parts(build) {
        let Some(call) = CargoCall::parse(&words) else {
            continue;
        };
        let Some(profile) = call.profile() else {
            continue;
        };
        let lookup = |k: &str| call.inline(k).or_else(|| env(k));
        let manifest_dir = call
            .value_of("--manifest-path")
            .map(|p| dir.join(p))
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| dir.to_path_buf());
        let settings = Settings::read(&manifest_dir, dir, &lookup);
        let (opt_level, source) = match rustflags_opt_level(&lookup, &settings) {
            Some((level, var)) => (Some(level), var),
            None => settings.profile_opt_level(&profile, 0),
        };
        out.push(CargoOpt {
            profile,
            opt_level,
            source,
        });
    }
    out
}

/// One cargo invocation of a build command: the variables set inline before it
/// (`RUSTFLAGS=… cargo …`, `env A=b cargo …`) and its arguments (toolchain `+…` left out).
struct CargoCall<'a> {
    inline: Vec<(String, String)>,
    args: Vec<&'a str>,
}

impl<'a> CargoCall<'a> {
    /// The invocation `words` make, when their program is cargo.
    fn parse(words: &'a [String]) -> Option<CargoCall<'a>> {
        let mut i = usize::from(words.first().map(String::as_str) == Some("env"));
        let mut inline = Vec::new();
        while let Some((k, v)) = words.get(i).and_then(|w| assignment(w)) {
            inline.push((k, v));
            i += 1;
        }
        let prog = words.get(i)?;
        if prog != "cargo" && !prog.ends_with("/cargo") {
            return None;
        }
        let args = words[i + 1..]
            .iter()
            .map(String::as_str)
            .filter(|w| !w.starts_with('+'))
            .collect();
        Some(CargoCall { inline, args })
    }

    /// A variable set inline (the last assignment wins).
    fn inline(&self, k: &str) -> Option<String> {
        self.inline
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    }

    /// The value of `--flag value` or `--flag=value`.
    fn value_of(&self, flag: &str) -> Option<String> {
        let eq = format!("{flag}=");
        self.args.iter().enumerate().find_map(|(j, w)| {
            if *w == flag {
                self.args.get(j + 1).map(|s| s.to_string())
            } else {
                w.strip_prefix(&eq).map(str::to_string)
            }
        })
    }

    /// The profile the invocation builds with; `None` for a subcommand that builds nothing.
    fn profile(&self) -> Option<String> {
        let sub = self.args.iter().find(|w| !w.starts_with('-'))?;
        let default = match *sub {
            "build" | "b" | "run" | "r" | "rustc" => "dev",
            "install" => "release",
            "bench" => "bench",
            _ => return None,
        };
        Some(self.value_of("--profile").unwrap_or_else(|| {
            if self.args.contains(&"--release") || self.args.contains(&"-r") {
                "release".into()
            } else {
                default.into()
            }
        }))
    }
}

/// A warning for each cargo invocation that builds at opt-level 0 (except plain `dev` builds,
/// which the debug-build guard already names).
pub fn unoptimised_warnings(
    who: &str,
    build: &str,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<Warning> {
    cargo_opt_levels(build, dir, env)
        .into_iter()
        .filter(|c| c.opt_level.as_deref() == Some("0"))
        .filter(|c| !(c.profile == "dev" && c.source.starts_with("cargo's built-in")))
        .map(|c| {
            Warning::new(
                WarningKind::DebugBuild,
                format!(
                    "{who} builds unoptimised: cargo profile `{}` compiles at opt-level 0 ({})",
                    c.profile, c.source
                ),
                "benchmark optimised builds: set `opt-level = 3` (or `inherits = \"release\"`) \
                 in the profile, and drop `-C opt-level=0` from the rustc flags",
            )
        })
        .collect()
}

/// The build-relevant variables of rigor's own environment (the build inherits them), for the
/// result: they change what the build produces yet appear nowhere in the config.
pub fn build_env() -> Vec<(String, String)> {
    const EXACT: &[&str] = &[
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_INCREMENTAL",
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTUP_TOOLCHAIN",
        "CC",
        "CXX",
        "CFLAGS",
        "CXXFLAGS",
        "CPPFLAGS",
        "LDFLAGS",
        "GOFLAGS",
        "GOAMD64",
        "CGO_CFLAGS",
        "CGO_ENABLED",
        "DOTNET_CLI_TELEMETRY_OPTOUT",
        "Configuration",
    ];
    const PREFIXES: &[&str] = &["CARGO_PROFILE_", "CARGO_BUILD_", "CARGO_TARGET_"];
    let mut out: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| EXACT.contains(&k.as_str()) || PREFIXES.iter().any(|p| k.starts_with(p)))
        .collect();
    out.sort();
    out
}

/// The profile and build settings cargo would see: environment over `.cargo/config.toml` (nearest
/// first) over the workspace manifest.
struct Settings<'a> {
    env: &'a dyn Fn(&str) -> Option<String>,
    configs: Vec<(PathBuf, toml::Table)>,
    manifest: Option<(PathBuf, toml::Table)>,
}

impl<'a> Settings<'a> {
    fn read(manifest_dir: &Path, dir: &Path, env: &'a dyn Fn(&str) -> Option<String>) -> Self {
        let mut configs: Vec<(PathBuf, toml::Table)> = Vec::new();
        let mut add = |folder: &Path, names: &[&str]| {
            for name in names {
                let p = folder.join(name);
                if configs.iter().any(|(seen, _)| *seen == p) {
                    return;
                }
                if let Some(t) = read_toml(&p) {
                    configs.push((p, t));
                    return;
                }
            }
        };
        for d in dir.ancestors() {
            add(d, &[".cargo/config.toml", ".cargo/config"]);
        }
        // Cargo's home config counts last.
        let home = env("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| Path::new(&h).join(".cargo")));
        if let Some(h) = home {
            add(&h, &["config.toml", "config"]);
        }
        Settings {
            env,
            configs,
            manifest: workspace_manifest(manifest_dir),
        }
    }

    /// A key of `[profile.NAME]`, with where it was found.
    fn profile_key(&self, name: &str, key: &str) -> Option<(String, String)> {
        let var = format!(
            "CARGO_PROFILE_{}_{}",
            name.to_ascii_uppercase().replace('-', "_"),
            key.to_ascii_uppercase().replace('-', "_")
        );
        if let Some(v) = (self.env)(&var) {
            return Some((v, var));
        }
        let in_table = |t: &toml::Table| -> Option<String> {
            let v = t.get("profile")?.get(name)?.get(key)?;
            Some(match v {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        };
        for (p, t) in self.configs.iter().chain(self.manifest.iter()) {
            if let Some(v) = in_table(t) {
                return Some((v, format!("{} [profile.{name}]", p.display())));
            }
        }
        None
    }

    /// The opt-level of a profile, following `inherits` (bounded), and where it comes from.
    fn profile_opt_level(&self, name: &str, depth: usize) -> (Option<String>, String) {
        if let Some((level, at)) = self.profile_key(name, "opt-level") {
            return (Some(level), at);
        }
        let builtin = match name {
            "dev" => Some("0"),
            "release" => Some("3"),
            _ => None,
        };
        if let Some(l) = builtin {
            return (Some(l.into()), format!("cargo's built-in `{name}` profile"));
        }
        let inherits = self.profile_key(name, "inherits").or_else(|| match name {
            "test" => Some(("dev".into(), "cargo's built-in `test` profile".into())),
            "bench" => Some(("release".into(), "cargo's built-in `bench` profile".into())),
            _ => None,
        });
        match inherits {
            Some((parent, at)) if depth < 8 && parent != name => {
                let (level, from) = self.profile_opt_level(&parent, depth + 1);
                (level, format!("{at} inherits `{parent}`: {from}"))
            }
            _ => (None, format!("profile `{name}` not found")),
        }
    }
}

/// The last `opt-level` the rustc flags set, and the variable that set it. Cargo takes the
/// first of CARGO_ENCODED_RUSTFLAGS, RUSTFLAGS, CARGO_BUILD_RUSTFLAGS, `build.rustflags`.
fn rustflags_opt_level(
    env: &dyn Fn(&str) -> Option<String>,
    settings: &Settings,
) -> Option<(String, String)> {
    let (flags, from): (Vec<String>, String) =
        if let Some(v) = env("CARGO_ENCODED_RUSTFLAGS").filter(|v| !v.is_empty()) {
            (
                v.split('\u{1f}').map(String::from).collect(),
                "CARGO_ENCODED_RUSTFLAGS".into(),
            )
        } else if let Some(v) = env("RUSTFLAGS") {
            (split_words(&v), "RUSTFLAGS".into())
        } else if let Some(v) = env("CARGO_BUILD_RUSTFLAGS") {
            (split_words(&v), "CARGO_BUILD_RUSTFLAGS".into())
        } else {
            let (p, t) = settings
                .configs
                .iter()
                .find(|(_, t)| t.get("build").and_then(|b| b.get("rustflags")).is_some())?;
            let flags = match t.get("build")?.get("rustflags")? {
                toml::Value::String(s) => split_words(s),
                toml::Value::Array(a) => a
                    .iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect(),
                _ => return None,
            };
            (flags, format!("{} [build] rustflags", p.display()))
        };
    let mut level = None;
    let mut iter = flags.iter().peekable();
    while let Some(f) = iter.next() {
        let setting = match f.as_str() {
            "-C" | "--codegen" => iter.next().map(String::as_str),
            other => other
                .strip_prefix("-C")
                .or_else(|| other.strip_prefix("--codegen=")),
        };
        if let Some(l) = setting.and_then(|s| s.strip_prefix("opt-level=")) {
            level = Some(l.to_string());
        }
    }
    level.map(|l| (l.clone(), format!("{from} has `-C opt-level={l}`")))
}

/// The manifest whose `[profile]` cargo reads: the workspace root above `dir`, else the nearest.
fn workspace_manifest(dir: &Path) -> Option<(PathBuf, toml::Table)> {
    let mut nearest = None;
    for d in dir.ancestors() {
        let p = d.join("Cargo.toml");
        if let Some(t) = read_toml(&p) {
            if t.contains_key("workspace") {
                return Some((p, t));
            }
            if nearest.is_none() {
                nearest = Some((p, t));
            }
        }
    }
    nearest
}

fn read_toml(p: &Path) -> Option<toml::Table> {
    std::fs::read_to_string(p).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rigor-unopt-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn levels(build: &str, dir: &Path, env: &[(&str, &str)]) -> Vec<(String, Option<String>)> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let lookup = move |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        cargo_opt_levels(build, dir, &lookup)
            .into_iter()
            .map(|c| (c.profile, c.opt_level))
            .collect()
    }

    fn one(p: &str, l: &str) -> Vec<(String, Option<String>)> {
        vec![(p.to_string(), Some(l.to_string()))]
    }

    #[test]
    fn profiles_are_resolved_through_inherits_config_and_env() {
        let d = temp("profiles");
        std::fs::write(
            d.join("Cargo.toml"),
            "[workspace]\n[profile.fast]\ninherits = \"dev\"\n[profile.lean]\ninherits = \"release\"\n\
             [profile.flat]\ninherits = \"release\"\nopt-level = 0\n",
        )
        .unwrap();
        let sub = d.join("crates/app");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("Cargo.toml"), "[package]\nname = \"app\"\n").unwrap();
        assert_eq!(
            levels("cargo build --profile fast", &sub, &[]),
            one("fast", "0")
        );
        assert_eq!(
            levels("cargo build --profile=lean", &sub, &[]),
            one("lean", "3")
        );
        assert_eq!(
            levels("cargo build --profile flat", &sub, &[]),
            one("flat", "0")
        );
        assert_eq!(
            levels("cargo build --release", &sub, &[]),
            one("release", "3")
        );
        assert_eq!(levels("cargo bench --no-run", &sub, &[]), one("bench", "3"));
        assert_eq!(
            levels(
                "cargo build --release",
                &sub,
                &[("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")]
            ),
            one("release", "0")
        );
        std::fs::create_dir_all(d.join(".cargo")).unwrap();
        std::fs::write(
            d.join(".cargo/config.toml"),
            "[profile.lean]\nopt-level = 0\n",
        )
        .unwrap();
        assert_eq!(
            levels("cargo build --profile lean", &sub, &[]),
            one("lean", "0")
        );
        let home = temp("cargo-home");
        std::fs::write(
            home.join("config.toml"),
            "[profile.release]\nopt-level = 0\n",
        )
        .unwrap();
        let home_env = [("CARGO_HOME", home.to_str().unwrap())];
        assert_eq!(
            levels("cargo build --release", &sub, &home_env),
            one("release", "0")
        );
    }

    #[test]
    fn rustflags_override_the_profile_inline_or_inherited() {
        let d = temp("flags");
        assert_eq!(
            levels(
                "cd x && RUSTFLAGS='-C opt-level=0' cargo +stable build --release -p a",
                &d,
                &[]
            ),
            one("release", "0")
        );
        assert_eq!(
            levels(
                "cargo build --release",
                &d,
                &[("RUSTFLAGS", "-Ctarget-cpu=native -Copt-level=0")]
            ),
            one("release", "0")
        );
        assert_eq!(
            levels(
                "cargo build --release",
                &d,
                &[("CARGO_ENCODED_RUSTFLAGS", "--codegen\u{1f}opt-level=0")]
            ),
            one("release", "0")
        );
        assert_eq!(
            levels(
                "cargo build --release",
                &d,
                &[("RUSTFLAGS", "-C opt-level=2")]
            ),
            one("release", "2")
        );
        assert!(levels("make && ./configure", &d, &[]).is_empty());
    }

    #[test]
    fn a_plain_dev_build_is_left_to_the_debug_guard() {
        let d = temp("dev");
        let none = |_: &str| None;
        assert!(unoptimised_warnings("`a`", "cargo build", &d, &none).is_empty());
        let w = unoptimised_warnings(
            "`a` (variant `x`)",
            "RUSTFLAGS=\"-C opt-level=0\" cargo build --release",
            &d,
            &none,
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].kind, WarningKind::DebugBuild);
        assert_eq!(
            w[0].message,
            "`a` (variant `x`) builds unoptimised: cargo profile `release` compiles at \
             opt-level 0 (RUSTFLAGS has `-C opt-level=0`)"
        );
        assert!(w[0].advice.contains("opt-level = 3"), "{}", w[0].advice);
    }
}
