//! The config a bench runs, as rigor.toml text: one scenario whose variants are the commands.
//! It is written beside the results, so `rigor run -f OUT_DIR/bench.toml` repeats the bench and
//! the file is a start for a rigor.toml of one's own.

use super::setup::Bench;
use crate::failure::Failure;
use std::path::{Path, PathBuf};

/// The scenario of the generated config.
pub const SCENARIO: &str = "bench";
/// The generated config's file name in the output folder.
pub const FILE: &str = "bench.toml";

/// Writes the config of `bench` to `out_dir/bench.toml` and returns its path.
pub fn write(bench: &Bench, out_dir: &Path) -> Result<PathBuf, Failure> {
    let file = out_dir.join(FILE);
    let failed = |e: std::io::Error| {
        Failure::from(anyhow::anyhow!(
            "cannot write the bench config {}: {e}",
            file.display()
        ))
    };
    std::fs::create_dir_all(out_dir).map_err(failed)?;
    std::fs::write(&file, text(bench)).map_err(failed)?;
    Ok(file)
}

/// The config text of `bench`.
pub fn text(bench: &Bench) -> String {
    let dir = string(&bench.dir.display().to_string());
    let first = string(&bench.commands[0]);
    let mut t = String::from("# Written by `rigor bench`; `rigor run -f THIS_FILE` repeats it.\n");
    match &bench.server {
        None => {
            t += &format!(
                "\n[jobs.bench]\nrole = \"command\"\ncommand = {first}\ndir = {dir}\n\
                 \n[scenarios.{SCENARIO}]\ncommand = \"bench\"\n"
            );
        }
        Some(s) => {
            t += &format!(
                "\n[jobs.server]\ncommand = {first}\ndir = {dir}\n\
                 \n[jobs.load]\nurl = {url}\nconnections = {c}\nwarmup = \"{w}\"\n\
                 duration = \"{d}\"\n\
                 \n[scenarios.{SCENARIO}]\napplication = \"server\"\nload = \"load\"\n",
                url = string(&s.url),
                c = s.connections,
                w = super::setup::URL_WARMUP,
                d = duration(s.duration),
            );
        }
    }
    t += &format!("iterations = {}\n", bench.iterations);
    for (name, command) in bench.names.iter().zip(&bench.commands) {
        t += &format!(
            "\n[scenarios.{SCENARIO}.variants.{}]\ncommand = {}\n",
            key(name),
            string(command)
        );
    }
    t
}

/// `d` as the config writes it, exactly: whole milliseconds as `ms`, else microseconds (the
/// finest unit a config duration has), so `-d 2500us` is not cut to 2ms.
fn duration(d: std::time::Duration) -> String {
    if d.subsec_nanos().is_multiple_of(1_000_000) {
        format!("{}ms", d.as_millis().max(1))
    } else {
        format!("{}us", d.as_micros().max(1))
    }
}

/// `name` as a TOML key: bare when it can be, else quoted (a `.` would nest a table).
fn key(name: &str) -> String {
    if name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        name.to_string()
    } else {
        string(name)
    }
}

/// A TOML basic string holding `s` exactly.
fn string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::setup::Server;

    fn bench(commands: &[&str], server: Option<Server>) -> Bench {
        Bench {
            commands: commands.iter().map(|c| c.to_string()).collect(),
            names: vec!["A".into(), "B".into()],
            dir: PathBuf::from("/tmp/a \"b\""),
            iterations: 7,
            server,
        }
    }

    /// The text is a config rigor reads back with every command exactly as typed, quotes,
    /// backslashes and newlines included.
    #[test]
    fn commands_survive_quoting() {
        let nasty = "printf '%s\\n' \"x\"\necho 'tab\there' # ]]";
        let b = bench(&["true", nasty], None);
        let text = text(&b);
        let parsed: toml::Table = toml::from_str(&text).expect(&text);
        let variants = &parsed["scenarios"]["bench"]["variants"];
        assert_eq!(variants["B"]["command"].as_str(), Some(nasty));
        assert_eq!(variants["A"]["command"].as_str(), Some("true"));
        assert_eq!(
            parsed["jobs"]["bench"]["dir"].as_str(),
            Some("/tmp/a \"b\"")
        );
        assert_eq!(
            parsed["scenarios"]["bench"]["iterations"].as_integer(),
            Some(7)
        );
        if let Err(p) = crate::config::Config::parse(Path::new("bench.toml"), text) {
            panic!("{:?}", p.messages());
        }
    }

    /// With `--url` the commands are the application's variants under a load job at the URL.
    #[test]
    fn server_mode_loads_the_url() {
        let server = Server {
            url: "http://127.0.0.1:9/x".into(),
            connections: 3,
            duration: std::time::Duration::from_millis(1500),
        };
        let text = text(&bench(&["a", "b"], Some(server)));
        let parsed: toml::Table = toml::from_str(&text).expect(&text);
        assert_eq!(
            parsed["jobs"]["load"]["url"].as_str(),
            Some("http://127.0.0.1:9/x")
        );
        assert_eq!(parsed["jobs"]["load"]["connections"].as_integer(), Some(3));
        assert_eq!(parsed["jobs"]["load"]["duration"].as_str(), Some("1500ms"));
        let fine = Server {
            url: "http://127.0.0.1:9/x".into(),
            connections: 3,
            duration: std::time::Duration::from_micros(2500),
        };
        let text = super::text(&bench(&["a", "b"], Some(fine)));
        let parsed: toml::Table = toml::from_str(&text).expect(&text);
        assert_eq!(parsed["jobs"]["load"]["duration"].as_str(), Some("2500us"));
        if let Err(p) = crate::config::Config::parse(Path::new("bench.toml"), text) {
            panic!("{:?}", p.messages());
        }
        assert_eq!(
            parsed["scenarios"]["bench"]["application"].as_str(),
            Some("server")
        );
    }
}
