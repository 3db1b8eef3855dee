//! The load job's keys mapped onto each tool's flags, and the checks that say (before anything
//! runs) which keys a tool cannot honour. The mapping, per tool, is documented in
//! docs/load-tools.md; the user's `args` follow rigor's flags and precede the URL.

use super::{Tool, ToolSpec};
use rigor_load::LoadSpec;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One run of a tool: the program, its arguments, and the files it reads (a wrk Lua script
/// carrying the method and body, h2load's body file), which the caller writes first.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    pub program: String,
    pub args: Vec<String>,
    pub files: Vec<(PathBuf, Vec<u8>)>,
    /// How long the run may last before it is stopped as hung: its own warmup, its length and
    /// one request timeout, plus [`OVERRUN_GRACE`].
    pub limit: Duration,
}

/// What a tool may take beyond its run and a request timeout (starting, printing its summary)
/// before it is taken for hung.
pub const OVERRUN_GRACE: Duration = Duration::from_secs(10);

impl Invocation {
    /// The tool run for `length` against `spec`, with `warmup` of its own when it warms up
    /// itself; files go in `scratch`.
    pub fn new(
        tool: &ToolSpec,
        spec: &LoadSpec,
        length: Duration,
        warmup: Option<Duration>,
        scratch: &Path,
    ) -> Invocation {
        let mut a = Args::default();
        let mut files = Vec::new();
        let c = spec.connections.to_string();
        match tool.tool {
            Tool::Wrk | Tool::Wrk2 => {
                a.flag("-c", c);
                a.flag("-t", spec.threads.to_string());
                a.flag("-d", whole_secs(length));
                a.flag("--timeout", whole_secs(spec.timeout));
                if let (Tool::Wrk2, Some(r)) = (tool.tool, spec.rate) {
                    a.flag("-R", format!("{}", r.round()));
                }
                for (k, v) in &spec.headers {
                    a.flag("-H", format!("{k}: {v}"));
                }
                if spec.method != "GET" || spec.body.is_some() {
                    let script = scratch.join(format!("{}-request.lua", tool.tool.name()));
                    files.push((script.clone(), wrk_script(spec).into_bytes()));
                    a.flag("-s", script.display().to_string());
                }
                a.word("--latency");
            }
            Tool::H2load => {
                a.flag("-c", c);
                a.flag("-t", spec.threads.to_string());
                a.flag("-D", millis(length));
                if let Some(w) = warmup.filter(|w| !w.is_zero()) {
                    a.flag("--warm-up-time", millis(w));
                }
                // h2load's -m is HTTP/2's concurrent streams (its pipeline with --h1).
                let depth = if spec.http2 {
                    spec.streams
                } else {
                    spec.pipeline
                };
                a.flag("-m", depth.to_string());
                if let Some(r) = spec.rate {
                    a.flag("--rps", format!("{}", r / spec.connections as f64));
                }
                if spec.method != "GET" {
                    a.flag("-H", format!(":method: {}", spec.method));
                }
                for (k, v) in &spec.headers {
                    a.flag("-H", format!("{k}: {v}"));
                }
                if let Some(body) = &spec.body {
                    let file = scratch.join("h2load-body");
                    files.push((file.clone(), body.clone()));
                    a.flag("-d", file.display().to_string());
                }
            }
            Tool::Oha => {
                a.flag("-c", c);
                a.flag("--worker-threads", spec.threads.to_string());
                a.flag("-z", millis(length));
                // Wait for the requests in flight at the end, as the engine does.
                a.word("-w");
                a.flag("-t", millis(spec.timeout));
                if let Some(r) = spec.rate {
                    a.flag("-q", format!("{r}"));
                    // From each request's intended send time, as the engine counts with a rate.
                    a.word("--latency-correction");
                }
                a.flag("-m", spec.method.clone());
                for (k, v) in &spec.headers {
                    a.flag("-H", format!("{k}: {v}"));
                }
                if let Some(body) = &spec.body {
                    a.flag("-d", String::from_utf8_lossy(body).into_owned());
                }
                if spec.http2 {
                    a.word("--http2");
                }
                a.word("--no-tui");
                a.flag("--output-format", "json".into());
            }
            Tool::Bombardier => {
                a.flag("-c", c);
                a.flag("-d", millis(length));
                a.flag("-t", millis(spec.timeout));
                if let Some(r) = spec.rate {
                    a.flag("-r", format!("{}", r.round()));
                }
                a.flag("-m", spec.method.clone());
                for (k, v) in &spec.headers {
                    a.flag("-H", format!("{k}: {v}"));
                }
                if let Some(body) = &spec.body {
                    a.flag("-b", String::from_utf8_lossy(body).into_owned());
                }
                a.word("-l");
                a.flag("-p", "r".into());
                a.flag("-o", "json".into());
            }
        }
        let mut args = a.0;
        args.extend(tool.args.iter().cloned());
        args.push(spec.url.clone());
        Invocation {
            program: tool.tool.program().to_string(),
            args,
            files,
            limit: warmup.unwrap_or_default()
                + length.max(Duration::from_secs(1))
                + spec.timeout
                + OVERRUN_GRACE,
        }
    }

    /// The whole command line, for the result and for messages.
    pub fn command_line(&self) -> Vec<String> {
        std::iter::once(self.program.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }
}

/// A command line being built.
#[derive(Default)]
struct Args(Vec<String>);

impl Args {
    fn flag(&mut self, flag: &str, value: String) {
        self.0.push(flag.to_string());
        self.0.push(value);
    }
    fn word(&mut self, word: &str) {
        self.0.push(word.to_string());
    }
}

/// `10s`: wrk reads whole seconds only (checked by [`check`]).
fn whole_secs(d: Duration) -> String {
    format!("{}s", d.as_secs().max(1))
}

/// `1500ms`: what h2load, oha and bombardier all read.
fn millis(d: Duration) -> String {
    format!("{}ms", d.as_millis().max(1))
}

/// A wrk Lua script setting the method and body (wrk has no flags for them).
fn wrk_script(spec: &LoadSpec) -> String {
    let mut s = format!("wrk.method = {}\n", lua_string(spec.method.as_bytes()));
    if let Some(body) = &spec.body {
        s.push_str(&format!("wrk.body = {}\n", lua_string(body)));
    }
    s
}

/// A Lua long string holding `bytes` exactly: a level of `=` the text does not close.
fn lua_string(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut level = 0;
    while text.contains(&format!("]{}]", "=".repeat(level))) {
        level += 1;
    }
    let eq = "=".repeat(level);
    // A newline right after the opening bracket is dropped by Lua: add one so a body starting
    // with a newline keeps it.
    format!("[{eq}[\n{text}]{eq}]")
}

/// The load keys `tool` cannot honour, each as (key, why): found when the config (or the
/// flags of `rigor load`) are read, before anything starts.
pub fn check(tool: Tool, spec: &LoadSpec) -> Vec<(&'static str, String)> {
    let mut p = Vec::new();
    let name = tool.name();
    if spec.mix.is_some() {
        p.push((
            "requests",
            format!("a request mix is the built-in engine's: {name} sends one request"),
        ));
    }
    if !spec.stages.is_empty() {
        p.push((
            "stages",
            format!("stages are the built-in engine's: {name} offers one rate"),
        ));
    }
    let whole = |d: Duration| d.subsec_nanos() == 0 && !d.is_zero();
    if matches!(tool, Tool::Wrk | Tool::Wrk2) {
        for (key, d, zero_ok) in [
            ("duration", spec.duration, false),
            ("warmup", spec.warmup, true),
            ("timeout", spec.timeout, false),
        ] {
            if !(whole(d) || zero_ok && d.is_zero()) {
                p.push((
                    key,
                    format!("{name} takes whole seconds, not {:.3}s", d.as_secs_f64()),
                ));
            }
        }
    }
    if matches!(tool, Tool::Wrk | Tool::Wrk2 | Tool::H2load) && spec.threads > spec.connections {
        p.push((
            "threads",
            format!(
                "{name} needs at least as many connections as threads ({} threads, {} connections)",
                spec.threads, spec.connections
            ),
        ));
    }
    if spec.pipeline > 1 && tool != Tool::H2load {
        p.push((
            "pipeline",
            format!(
                "{name} has no pipelining flag (only h2load's -m pipelines among the tools); \
                 leave `pipeline` at 1 (wrk pipelines through a Lua script given in `args`)"
            ),
        ));
    }
    if spec.http2 && !matches!(tool, Tool::H2load | Tool::Oha) {
        p.push((
            "http2",
            format!("{name} does not speak HTTP/2 (h2load and oha do): drop `http2`"),
        ));
    }
    if spec.streams > 1 && tool != Tool::H2load {
        p.push((
            "streams",
            format!("{name} has no concurrent-streams flag (h2load's -m): leave `streams` at 1"),
        ));
    }
    if !spec.source_addrs.is_empty() {
        p.push((
            "source_addrs",
            format!(
                "{name} takes no source addresses (they are the engine's): drop `source_addrs`"
            ),
        ));
    }
    let in_argv = matches!(tool, Tool::Oha | Tool::Bombardier);
    if in_argv && spec.body.as_ref().is_some_and(|b| b.contains(&0)) {
        p.push((
            "body",
            format!(
                "{name} takes the body as a command-line option, which cannot hold a NUL byte \
                 (wrk and h2load read it from a file)"
            ),
        ));
    }
    match (tool, spec.rate) {
        (Tool::Wrk, Some(_)) => p.push((
            "rate",
            "wrk has no rate (it is closed-model only): use tool = \"wrk2\", or drop `rate`".into(),
        )),
        (Tool::Wrk2, None) => p.push((
            "tool",
            "wrk2 needs a `rate` (its -R, requests per second in total)".into(),
        )),
        (Tool::Wrk2 | Tool::Bombardier, Some(r)) if r < 1.0 || r.fract() != 0.0 => p.push((
            "rate",
            format!("{name} takes a whole number of requests per second, not {r}"),
        )),
        _ => {}
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LoadSpec {
        LoadSpec {
            url: "http://127.0.0.1:5080/json".into(),
            connections: 32,
            threads: 2,
            timeout: Duration::from_secs(2),
            ..Default::default()
        }
    }

    fn args(tool: Tool, spec: &LoadSpec, extra: &[&str]) -> Vec<String> {
        let t = ToolSpec {
            tool,
            args: extra.iter().map(|s| s.to_string()).collect(),
        };
        Invocation::new(&t, spec, Duration::from_secs(5), None, Path::new("/s")).command_line()
    }

    #[test]
    fn each_tool_gets_the_load_keys_as_its_own_flags() {
        let s = spec();
        assert_eq!(
            args(Tool::Wrk, &s, &["--u"]).join(" "),
            "wrk -c 32 -t 2 -d 5s --timeout 2s --latency --u http://127.0.0.1:5080/json"
        );
        let rated = LoadSpec {
            rate: Some(2000.0),
            headers: vec![("X-A".into(), "b".into())],
            ..spec()
        };
        assert_eq!(
            args(Tool::Wrk2, &rated, &[]).join(" "),
            "wrk2 -c 32 -t 2 -d 5s --timeout 2s -R 2000 -H X-A: b --latency http://127.0.0.1:5080/json"
        );
        assert_eq!(
            args(Tool::H2load, &rated, &["--h1"]).join(" "),
            "h2load -c 32 -t 2 -D 5000ms -m 1 --rps 62.5 -H X-A: b --h1 http://127.0.0.1:5080/json"
        );
        assert_eq!(
            args(Tool::Oha, &rated, &[]).join(" "),
            "oha -c 32 --worker-threads 2 -z 5000ms -w -t 2000ms -q 2000 --latency-correction -m GET \
             -H X-A: b --no-tui --output-format json http://127.0.0.1:5080/json"
        );
        assert_eq!(
            args(Tool::Bombardier, &s, &[]).join(" "),
            "bombardier -c 32 -d 5000ms -t 2000ms -m GET -l -p r -o json http://127.0.0.1:5080/json"
        );
    }

    #[test]
    fn method_and_body_reach_wrk_through_a_script_and_h2load_through_a_file() {
        let s = LoadSpec {
            method: "POST".into(),
            body: Some(b"]]{\"a\":1}".to_vec()),
            ..spec()
        };
        let t = ToolSpec {
            tool: Tool::Wrk,
            args: vec![],
        };
        let inv = Invocation::new(&t, &s, Duration::from_secs(1), None, Path::new("/s"));
        assert!(inv
            .args
            .windows(2)
            .any(|w| w == ["-s", "/s/wrk-request.lua"]));
        assert_eq!(
            String::from_utf8(inv.files[0].1.clone()).unwrap(),
            "wrk.method = [[\nPOST]]\nwrk.body = [=[\n]]{\"a\":1}]=]\n"
        );
        let t = ToolSpec {
            tool: Tool::H2load,
            args: vec![],
        };
        let inv = Invocation::new(
            &t,
            &s,
            Duration::from_secs(1),
            Some(Duration::from_millis(500)),
            Path::new("/s"),
        );
        let line = inv.command_line().join(" ");
        assert!(
            line.contains("--warm-up-time 500ms -m 1 -H :method: POST -d /s/h2load-body"),
            "{line}"
        );
        assert_eq!(inv.files[0].1, b"]]{\"a\":1}");
    }

    #[test]
    fn keys_a_tool_cannot_honour_are_named() {
        let keys = |tool, s: &LoadSpec| {
            check(tool, s)
                .into_iter()
                .map(|(k, _)| k)
                .collect::<Vec<_>>()
        };
        let s = LoadSpec {
            duration: Duration::from_millis(1500),
            rate: Some(10.5),
            pipeline: 4,
            threads: 64,
            ..spec()
        };
        assert_eq!(
            keys(Tool::Wrk, &s),
            ["duration", "threads", "pipeline", "rate"]
        );
        assert_eq!(
            keys(Tool::Wrk2, &s),
            ["duration", "threads", "pipeline", "rate"]
        );
        assert_eq!(keys(Tool::H2load, &s), ["threads"]);
        assert_eq!(keys(Tool::Oha, &s), ["pipeline"]);
        assert_eq!(keys(Tool::Bombardier, &s), ["pipeline", "rate"]);
        assert_eq!(keys(Tool::Wrk2, &spec()), ["tool"]);
        let nul = LoadSpec {
            body: Some(b"a\0b".to_vec()),
            ..spec()
        };
        assert_eq!(keys(Tool::Oha, &nul), ["body"]);
        assert_eq!(keys(Tool::Bombardier, &nul), ["body"]);
        assert!(check(Tool::Wrk, &nul).is_empty());
        assert!(check(Tool::H2load, &nul).is_empty());
        assert!(check(Tool::Wrk, &spec()).is_empty());
        let sourced = LoadSpec {
            source_addrs: vec![[127, 0, 0, 2].into()],
            ..spec()
        };
        assert_eq!(keys(Tool::Oha, &sourced), ["source_addrs"]);
        let (_, why) = &check(
            Tool::Wrk,
            &LoadSpec {
                rate: Some(5.0),
                ..spec()
            },
        )[0];
        assert!(why.contains("wrk2"), "{why}");
    }
}
