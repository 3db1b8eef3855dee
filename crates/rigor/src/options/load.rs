//! `rigor load`: the flags checked and built into the engine's [`LoadSpec`] before anything
//! connects, so every mistake is a usage error that names the flag or value at fault.

use crate::cli::load::LoadArgs;
use crate::failure::Failure;
use rigor_load::LoadSpec;
use std::path::PathBuf;

/// Where `--json` goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonOut {
    /// `--json -`: stdout carries the JSON alone; the human summary goes to stderr.
    Stdout,
    /// `--json FILE`.
    File(PathBuf),
}

/// What `rigor load` was asked to do, checked.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The engine's job, checked by [`rigor_load::check`].
    pub spec: LoadSpec,
    /// `--json`, if given.
    pub json: Option<JsonOut>,
    /// `--tool NAME` (and the options after `--`): an external tool drives the load.
    pub tool: Option<crate::tools::ToolSpec>,
    /// `--find-rate` and its settings: search for the rate the service holds.
    pub find: Option<rigor_load::capacity::FindRate>,
    /// `--network container:NAME`: the running container whose network namespace the load
    /// runs in.
    pub container: Option<String>,
}

impl LoadOptions {
    /// Whether stdout is reserved for the JSON (the human text then goes to stderr).
    pub fn json_to_stdout(&self) -> bool {
        self.json == Some(JsonOut::Stdout)
    }
}

impl TryFrom<&LoadArgs> for LoadOptions {
    type Error = Failure;

    /// Builds the engine's spec from the flags, checking everything that can be known before
    /// connecting.
    fn try_from(args: &LoadArgs) -> Result<Self, Failure> {
        let spec = build_spec(args).map_err(Failure::usage)?;
        let tool = tool(args, &spec).map_err(Failure::usage)?;
        let find = find_rate(args).map_err(Failure::usage)?;
        if find.is_some() && tool.is_some() {
            return Err(Failure::usage(
                "--find-rate drives the engine's open model itself; it cannot run with --tool",
            ));
        }
        let json = args.json.as_deref().map(|j| match j {
            "-" => JsonOut::Stdout,
            path => JsonOut::File(PathBuf::from(path)),
        });
        // Found unwritable before the load, not after it (when the report would be lost).
        if let Some(JsonOut::File(path)) = &json {
            crate::exec::output::probe(path)
                .map_err(|e| Failure::usage(format!("--json {}: {e}", path.display())))?;
        }
        let container = args.network.as_deref().map(container).transpose()?;
        if container.is_some() && tool.is_some() {
            return Err(Failure::usage(
                "--network container:NAME runs the built-in engine inside the container: \
                 not with --tool",
            ));
        }
        Ok(LoadOptions {
            spec,
            json,
            tool,
            find,
            container,
        })
    }
}

/// The container named by `--network container:NAME`.
fn container(network: &str) -> Result<String, Failure> {
    match network.strip_prefix("container:") {
        Some(name) if !name.is_empty() && !name.contains(char::is_whitespace) => {
            Ok(name.to_string())
        }
        _ => Err(Failure::usage(format!(
            "--network {network:?}: give `container:NAME`, a running container whose network \
             namespace the load runs in"
        ))),
    }
}

/// `--find-rate` with `--rate` as its start, `--find-max`, `--find-precision`, `--probe`;
/// the error names the flag and what is wrong with it.
fn find_rate(args: &LoadArgs) -> anyhow::Result<Option<rigor_load::capacity::FindRate>> {
    use rigor_load::capacity::{parse_precision, FindRate, FindRateError};
    let Some(text) = &args.find_rate else {
        return Ok(None);
    };
    let objective = text
        .parse()
        .map_err(|e| anyhow::anyhow!("--find-rate '{text}': {e}"))?;
    let mut find = FindRate::new(objective);
    find.start = args.rate.unwrap_or(find.start);
    find.max = args.find_max.unwrap_or(find.max);
    find.probe = args.probe;
    if let Some(p) = &args.find_precision {
        find.precision =
            parse_precision(p).map_err(|e| anyhow::anyhow!("--find-precision {p}: {e}"))?;
    }
    find.check().map_err(|e| {
        let flag = match &e {
            FindRateError::MaxBelowStart { .. } => "--find-max (with --rate as the start)",
            FindRateError::RateOutOfRange { what: "start", .. } => "--rate",
            FindRateError::RateOutOfRange { .. } => "--find-max",
            FindRateError::Precision(_) | FindRateError::PrecisionText(_) => "--find-precision",
            FindRateError::ProbeTooShort(_) => "--probe",
            FindRateError::StartBelowFloor { .. } => "--rate (the search's start)",
        };
        anyhow::anyhow!("{flag}: {e}")
    })?;
    Ok(Some(find))
}

/// `--tool` and its options after `--`, checked against the flags: a flag the tool cannot
/// honour is named (`--rate: wrk has no rate …`).
fn tool(args: &LoadArgs, spec: &LoadSpec) -> anyhow::Result<Option<crate::tools::ToolSpec>> {
    let Some(name) = &args.tool else {
        if !args.tool_args.is_empty() {
            anyhow::bail!(
                "options after `--` ({}) are for --tool; the engine takes none",
                args.tool_args.join(" ")
            );
        }
        return Ok(None);
    };
    let tool = crate::tools::Tool::from_name(name).map_err(|e| anyhow::anyhow!("--tool: {e}"))?;
    let problems: Vec<String> = crate::tools::check(tool, spec)
        .into_iter()
        .map(|(key, why)| match key {
            "tool" => format!("--tool {name}: {why}"),
            "source_addrs" => format!("--source-addr: {why}"),
            "stages" => format!("--stage: {why}"),
            key => format!("--{key}: {why}"),
        })
        .collect();
    if !problems.is_empty() {
        anyhow::bail!(problems.join("\n"));
    }
    Ok(Some(crate::tools::ToolSpec {
        tool,
        args: args.tool_args.clone(),
    }))
}

/// The spec the flags describe; the error names the flag or value at fault.
fn build_spec(args: &LoadArgs) -> anyhow::Result<LoadSpec> {
    let headers = args
        .headers
        .iter()
        .map(|h| parse_header(h))
        .collect::<Result<Vec<_>, _>>()?;
    let cpus = args
        .cpus
        .as_deref()
        .map(crate::config::parse_cpu_list)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--cpus: {e}"))?;
    let source_addrs = args
        .source_addr
        .as_deref()
        .map(|a| rigor_load::parse_sources(a, crate::config::MAX_SOURCES))
        .transpose()
        .map_err(|e| anyhow::anyhow!("--source-addr: {e}"))?
        .unwrap_or_default();
    let spec = LoadSpec {
        url: args.url.clone(),
        connections: args.connections,
        threads: args.threads,
        duration: args.duration,
        warmup: args.warmup,
        pipeline: args.pipeline,
        rate: args.rate,
        timeout: args.timeout,
        method: args.method.clone(),
        headers,
        body: args.body.as_ref().map(|b| b.clone().into_bytes()),
        cpus,
        source_addrs,
        insecure: args.insecure,
        io: args.io,
        http2: args.http2,
        streams: args.streams,
        mix: None,
        stages: parse_stages(&args.stages)?,
        measure_stage: match args.measure_stage {
            Some(0) => anyhow::bail!("--measure-stage: stages count from 1"),
            n => n.map(|n| n - 1),
        },
    };
    let mut spec = spec;
    if !spec.stages.is_empty() {
        if args.rate.is_some() {
            anyhow::bail!("--stage and --rate both set the offered rate: give one");
        }
        spec.duration = spec.window();
    }
    if let Some(file) = &args.requests {
        if args.body.is_some() || !args.headers.is_empty() || args.method != "GET" {
            anyhow::bail!(
                "--requests replaces --method, --header and --body: put them on each request"
            );
        }
        let mut mix = rigor_config::requests::read_file(file, &spec.url)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        mix.seed = args.seed;
        // The flags are checked alone first, so what fails once the mix is added (a method,
        // header or path the engine cannot send) is the file's, and the error names it.
        rigor_load::check(&spec).map_err(|e| anyhow::anyhow!("{e}"))?;
        spec.mix = Some(mix);
        rigor_load::check(&spec)
            .map_err(|e| anyhow::anyhow!("--requests `{}`: {e}", file.display()))?;
    }
    rigor_load::check(&spec).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(spec)
}

/// `--stage RATE:FOR` values, in order; the error names the one at fault.
fn parse_stages(raw: &[String]) -> anyhow::Result<Vec<rigor_load::Stage>> {
    raw.iter()
        .map(|s| {
            let (rate, dur) = s
                .split_once(':')
                .ok_or_else(|| anyhow::anyhow!("--stage `{s}`: expected RATE:FOR, e.g. 200:10s"))?;
            let rate = rate
                .trim()
                .parse::<f64>()
                .map_err(|_| anyhow::anyhow!("--stage `{s}`: `{rate}` is not a rate"))?;
            let duration = crate::duration::parse_duration(dur.trim())
                .map_err(|e| anyhow::anyhow!("--stage `{s}`: {e}"))?;
            Ok(rigor_load::Stage { rate, duration })
        })
        .collect()
}

/// Parses `Name: value`; the error names the offending header.
pub fn parse_header(h: &str) -> anyhow::Result<(String, String)> {
    let (k, v) = h
        .split_once(':')
        .ok_or_else(|| anyhow::anyhow!("invalid header `{h}`: expected 'Name: value'"))?;
    let (k, v) = (k.trim(), v.trim());
    crate::config::checks::header(k, v)
        .map_err(|e| anyhow::anyhow!("invalid header `{h}`: {e}"))?;
    Ok((k.to_string(), v.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: LoadArgs,
    }

    fn options(flags: &[&str]) -> Result<LoadOptions, Failure> {
        let mut argv = vec!["x"];
        argv.extend(flags);
        LoadOptions::try_from(&Cli::try_parse_from(argv).unwrap().args)
    }

    #[test]
    fn headers_and_cpus() {
        assert_eq!(
            parse_header("X-A: b c").unwrap(),
            ("X-A".into(), "b c".into())
        );
        assert_eq!(
            parse_header("Host:x:1").unwrap(),
            ("Host".into(), "x:1".into())
        );
        assert!(parse_header("nocolon")
            .unwrap_err()
            .to_string()
            .contains("nocolon"));
        assert!(parse_header("Bad Name: x")
            .unwrap_err()
            .to_string()
            .contains("Bad Name"));
        assert_eq!(crate::config::parse_cpu_list("1").unwrap(), vec![1]);
        assert_eq!(
            crate::config::parse_cpu_list("0,2-4").unwrap(),
            vec![0, 2, 3, 4]
        );
        assert!(crate::config::parse_cpu_list("3-1").is_err());
        assert!(crate::config::parse_cpu_list("x").is_err());
    }

    #[test]
    fn flags_become_a_checked_spec() {
        let o = options(&[
            "http://127.0.0.1:8080/",
            "-c",
            "8",
            "-H",
            "X-A: b",
            "--json",
            "-",
        ])
        .unwrap();
        assert_eq!(o.spec.connections, 8);
        assert_eq!(o.spec.headers, vec![("X-A".to_string(), "b".to_string())]);
        assert!(o.json_to_stdout());
        let o = options(&["http://127.0.0.1:8080/", "--json", "out.json"]).unwrap();
        assert_eq!(o.json, Some(JsonOut::File("out.json".into())));
        assert!(!o.json_to_stdout());
    }

    #[test]
    fn bad_flags_are_usage_failures_naming_the_flag() {
        for (flags, needle) in [
            (&["http://127.0.0.1:8080/", "-H", "nocolon"][..], "nocolon"),
            (&["http://127.0.0.1:8080/", "--cpus", "3-1"][..], "--cpus"),
            (&["ftp://127.0.0.1/"][..], "ftp"),
        ] {
            let failure = options(flags).unwrap_err();
            assert_eq!(failure.exit(), crate::exit::Exit::Usage, "{flags:?}");
            assert!(
                failure.text().contains(needle),
                "{flags:?}: {}",
                failure.text()
            );
        }
    }

    #[test]
    fn find_rate_takes_its_start_from_rate_and_its_settings_from_its_flags() {
        let url = "http://127.0.0.1:8080/";
        let o = options(&[url, "--find-rate", "p99 < 50ms, errors<1%", "--rate", "250"]).unwrap();
        let find = o.find.unwrap();
        assert_eq!(find.objective.to_string(), "p99<50ms, errors<1%");
        assert_eq!(
            (find.start, find.max, find.precision),
            (250.0, 100_000.0, 0.05)
        );
        let o = options(&[
            url,
            "--find-rate",
            "p99<1s",
            "--find-precision",
            "10%",
            "--probe",
            "2s",
        ])
        .unwrap();
        let find = o.find.unwrap();
        assert_eq!(find.precision, 0.1);
        assert_eq!(find.probe_duration(), std::time::Duration::from_secs(2));
        assert!(options(&[url]).unwrap().find.is_none());
    }

    #[test]
    fn a_request_the_engine_cannot_send_names_the_requests_file() {
        let dir = std::env::temp_dir().join(format!("rigor-opt-mix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("mix.toml");
        std::fs::write(
            &file,
            "[[requests]]\nname = \"a\"\npath = \"/x\"\nmethod = \"GE T\"\n",
        )
        .unwrap();
        let path = file.to_str().unwrap();
        let e = options(&["http://127.0.0.1:8080/", "--requests", path])
            .err()
            .unwrap();
        assert!(
            e.text().contains(&format!("--requests `{path}`")) && e.text().contains("GE T"),
            "{}",
            e.text()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn flags_that_stages_or_a_search_would_silently_override_are_refused() {
        let url = "http://127.0.0.1:8080/";
        for flags in [
            &[url, "--stage", "100:1s", "-d", "3s"][..],
            &[url, "--stage", "100:1s", "--find-rate", "p99<50ms"][..],
            &[url, "--find-rate", "p99<50ms", "--duration", "5s"][..],
        ] {
            let mut argv = vec!["x"];
            argv.extend(flags);
            let e = Cli::try_parse_from(argv).err().map(|e| e.to_string());
            assert!(
                e.as_deref()
                    .is_some_and(|e| e.contains("cannot be used with")),
                "{flags:?}: {e:?}"
            );
        }
        assert!(options(&[url, "--stage", "100:1s", "--stage", "200:2s"]).is_ok());
        assert!(options(&[url, "--find-rate", "p99<50ms", "--probe", "5s"]).is_ok());
    }

    #[test]
    fn a_bad_find_rate_is_a_usage_failure_naming_the_flag_and_the_fault() {
        let url = "http://127.0.0.1:8080/";
        for (flags, needle) in [
            (&[url, "--find-rate", "p99<"][..], "--find-rate 'p99<': `p99<` has no limit after its operator"),
            (&[url, "--find-rate", "p95<10ms"][..], "unknown figure `p95`"),
            (&[url, "--find-rate", "p99<10"][..], "`10` is not a latency"),
            (
                &[url, "--find-rate", "p99<10ms", "--rate", "1000", "--find-max", "500"][..],
                "--find-max (with --rate as the start): max 500 rps is below the start rate 1000 rps",
            ),
            (&[url, "--find-rate", "p99<10ms", "--find-precision", "fine"][..], "--find-precision fine"),
            (&[url, "--find-rate", "p99<10ms", "--find-precision", "80%"][..], "--find-precision: precision 0.8"),
            (&[url, "--find-rate", "p99<10ms", "--tool", "wrk"][..], "cannot run with --tool"),
        ] {
            let failure = options(flags).unwrap_err();
            assert_eq!(failure.exit(), crate::exit::Exit::Usage, "{flags:?}");
            assert!(failure.text().contains(needle), "{flags:?}: {}", failure.text());
        }
    }

    #[test]
    fn an_unwritable_json_path_is_refused_before_the_load() {
        let Err(Failure::Usage(text)) =
            options(&["--json", "/proc/no-such-dir/r.json", "http://127.0.0.1:9/"])
        else {
            panic!("an unwritable --json path must be a usage error");
        };
        assert!(
            text.starts_with("--json /proc/no-such-dir/r.json: cannot create /proc/no-such-dir"),
            "{text}"
        );
    }

    #[test]
    fn a_header_value_with_a_line_break_is_refused_like_the_config_refuses_it() {
        assert_eq!(
            parse_header("X-A: b\r\nEvil: 1")
                .unwrap_err()
                .to_string(),
            "invalid header `X-A: b\r\nEvil: 1`: the value of header `X-A` holds a line break or NUL"
        );
    }
}
