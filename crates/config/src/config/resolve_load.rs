//! The load role of one row: the engine's settings parsed and range-checked against the
//! engine's limits and the machine's, each problem pointed at the key or the variable that set it.

use super::checks;
use super::model::{LoadJob, Validate};
use super::problems::Problems;
use super::raw::{RawJob, RawProfile, Scalar};
use super::resolve::Origin;
use super::{Config, PlanRequest, Vars};
use indexmap::IndexMap;
use rigor_load::{LoadSpec, MAX_RATE, MAX_TIMEOUT, MIN_RATE};
use rigor_model::duration::parse_duration;
use std::time::Duration;

/// Load-job keys a matrix, variant or `--var` variable of the same name overrides.
pub(super) const LOAD_KEYS: &[&str] = &[
    "connections",
    "threads",
    "pipeline",
    "streams",
    "rate",
    "warmup",
    "duration",
    "timeout",
];

// The engine's own limits, so a plan that passes here is one the engine accepts.
const MAX_THREADS: u64 = rigor_load::MAX_THREADS as u64;
const MAX_PIPELINE: u64 = rigor_load::MAX_PIPELINE as u64;
const MAX_STREAMS: u64 = rigor_load::MAX_STREAMS as u64;
const MAX_IN_FLIGHT: u64 = rigor_load::MAX_IN_FLIGHT as u64;
const MAX_CONNECTIONS: u64 = rigor_load::MAX_CONNECTIONS as u64;
/// Most source addresses one load may name.
pub const MAX_SOURCES: usize = 4096;
/// Whether `url`'s scheme is https (any case).
/// The most connections a load job may have, and why: this machine's open-file limit times the
/// shares it holds of them (one share when it is among the load `hosts`, all of them when it
/// loads alone, none when only other hosts load), within the engine's own maximum.
fn connection_limit(req: &PlanRequest, hosts: &[super::Host]) -> (u64, String) {
    let engine = (
        MAX_CONNECTIONS,
        "(the most connections of one load job)".to_string(),
    );
    let (Some(by_files), Some(files)) = (req.limits.max_connections(), req.limits.max_open_files)
    else {
        return engine;
    };
    let (max, why) = match hosts.len() {
        0 => (
            by_files,
            format!(
                "(this machine's open-file limit is {files}; raise it with `ulimit -n` or use \
                 fewer connections)"
            ),
        ),
        n if hosts.iter().any(|h| h.name == super::LOCAL) => (
            by_files.saturating_mul(n as u64),
            format!(
                "({n} load hosts share them, and this machine, one of them, may open {files} \
                 files; raise it with `ulimit -n`, use fewer connections or more hosts)"
            ),
        ),
        _ => return engine,
    };
    if max < MAX_CONNECTIONS {
        (max, why)
    } else {
        engine
    }
}

fn is_https(url: &str) -> bool {
    url.get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
}

/// A load key's text and where it was written.
enum Source<'a> {
    Key,
    Override(&'a Origin),
}

impl Config {
    /// An error about a load key, pointed at the job key or at the variable that overrode it.
    fn load_error(&self, table: &str, scenario: &str, key: &str, src: &Source, m: &str) -> String {
        match src {
            Source::Key => self.error_at(table, Some(key), m),
            Source::Override(Origin::Matrix) => self.error_at(
                &format!("scenarios.{scenario}"),
                Some("matrix"),
                &format!("{key}: {m}"),
            ),
            Source::Override(Origin::Variant(v)) => self.error_at(
                &format!("scenarios.{scenario}.variants.{v}"),
                Some("variables"),
                &format!("{key}: {m}"),
            ),
            Source::Override(Origin::Cli) => format!("--var {key}: {m}"),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn resolve_load(
        &self,
        name: &str,
        job: &RawJob,
        scenario: &str,
        profile: &RawProfile,
        req: &PlanRequest,
        vars: &Vars,
        overrides: &IndexMap<String, (String, Origin)>,
        p: &mut Problems,
    ) -> LoadJob {
        let keys = LoadKeys {
            config: self,
            table: format!("jobs.{name}"),
            scenario,
            vars,
            overrides,
        };
        let table = &keys.table;
        let hosts = self.role_hosts(profile, req, "load", p);
        let (connections, threads, pipeline) = keys.counts(job, req, &hosts, p);
        let warmup = keys.duration("warmup", &job.warmup, Duration::from_secs(3), true, None, p);
        let duration = keys.duration(
            "duration",
            &job.duration,
            Duration::from_secs(10),
            false,
            None,
            p,
        );
        let timeout = keys.duration(
            "timeout",
            &job.timeout,
            Duration::from_secs(2),
            false,
            Some(MAX_TIMEOUT),
            p,
        );
        let rate = keys.rate(&job.rate, p);
        // Only other hosts load it: they must reach the URL, this machine need not.
        let elsewhere = !hosts.is_empty() && hosts.iter().all(|h| h.name != super::LOCAL);
        let (url, addr) = self.target(job, table, vars, elsewhere, p);
        let insecure = job.insecure.unwrap_or(false);
        if insecure && !url.is_empty() && !is_https(&url) {
            p.add(self.error_at(
                table,
                Some("insecure"),
                &format!("accepting any certificate applies to https:// URLs only, and `{url}` is not one"),
            ));
        }
        let io = job
            .io
            .as_deref()
            .and_then(|text| {
                let parsed = text
                    .parse::<rigor_load::IoMode>()
                    .map_err(|e| self.error_at(table, Some("io"), &e.to_string()));
                p.take(parsed)
            })
            .unwrap_or_default();
        let http2 = job.http2.unwrap_or(false);
        if io == rigor_load::IoMode::IoUring && (http2 || is_https(&url)) {
            let what = if http2 {
                "HTTP/2 (`http2 = true`)"
            } else {
                "an https:// URL"
            };
            p.add(self.error_at(
                table,
                Some("io"),
                &format!("the io_uring path speaks plaintext HTTP/1.1 only, not {what}: use `io = \"auto\"` or `\"epoll\"`"),
            ));
        }
        let streams = keys.count(
            "streams",
            &job.streams,
            1,
            MAX_STREAMS,
            "(the most concurrent streams per connection)",
            p,
        );
        if streams > 1 && !http2 {
            p.add(self.error_at(
                table,
                Some("streams"),
                &format!("{streams} streams are HTTP/2's: add `http2 = true`, or use `pipeline` for HTTP/1.1"),
            ));
        }
        if http2 && pipeline > 1 {
            p.add(self.error_at(
                table,
                Some("pipeline"),
                &format!("a pipeline of {pipeline} is HTTP/1.1's: HTTP/2 (`http2 = true`) runs concurrent `streams` instead"),
            ));
        }
        // The key that set the depth (`connections` when neither is above 1).
        let depth_key = match (pipeline.max(streams) > 1, streams > pipeline) {
            (false, _) => "connections",
            (true, true) => "streams",
            (true, false) => "pipeline",
        };
        keys.check_in_flight(connections, pipeline.max(streams), depth_key, p);
        let (method, headers, body) = self.request(job, table, vars, p);
        let validate = job.validate.as_ref().map(|v| {
            if let Some(Err(e)) = v.status.map(checks::status) {
                p.add(self.error_at(table, Some("validate"), &e.0));
            }
            Validate {
                status: v.status,
                body_contains: v
                    .body_contains
                    .as_ref()
                    .and_then(|b| p.take(self.expand(vars, table, "validate", b))),
            }
        });
        let (cpus, priority_high) = self.role(profile, req, "load", p);
        let source_addrs = job
            .source_addrs
            .as_ref()
            .and_then(|text| {
                let text = p.take(self.expand(vars, table, "source_addrs", text))?;
                let parsed = rigor_load::parse_sources(&text, MAX_SOURCES)
                    .map_err(|e| self.error_at(table, Some("source_addrs"), &e.to_string()));
                p.take(parsed)
            })
            .unwrap_or_default();
        if hosts.len() > connections {
            p.add(self.error_at(
                table,
                Some("connections"),
                &format!(
                    "{connections} connections cannot be shared by {} load hosts: each needs one",
                    hosts.len()
                ),
            ));
        }
        let spec = LoadSpec {
            url,
            connections,
            threads,
            duration,
            warmup,
            pipeline,
            rate,
            timeout,
            method,
            headers,
            body: body.map(String::into_bytes),
            cpus,
            source_addrs,
            insecure,
            io,
            http2,
            streams,
            mix: None,
            stages: Vec::new(),
            measure_stage: None,
        };
        let spec = self.mix_and_stages(job, table, vars, spec, p);
        let tool = keys.tool(job, &spec, p);
        let find_rate = self.resolve_find_rate(job, table, &spec, tool.is_some(), &hosts, p);
        let in_container = self.load_network(job, table, vars, p);
        LoadJob {
            spec,
            addr,
            priority_high,
            validate,
            hosts,
            tool,
            find_rate,
            in_container,
        }
    }

    /// `requests`, `seed`, `stages` and `measure` onto `spec`, each problem pointed at its key;
    /// the engine's own checks of the result pointed at the key they concern.
    fn mix_and_stages(
        &self,
        job: &RawJob,
        table: &str,
        vars: &Vars,
        mut spec: LoadSpec,
        p: &mut Problems,
    ) -> LoadSpec {
        if !job.requests.is_empty() {
            let at = format!("{table}.requests");
            // `{{var}}` in every text of the entries, as in the job's own keys.
            let mut expand = |t: &String| {
                p.take(self.expand(vars, table, "requests", t))
                    .unwrap_or_default()
            };
            let raw: Vec<crate::requests::RawRequest> = job
                .requests
                .iter()
                .map(|r| crate::requests::RawRequest {
                    name: r.name.as_ref().map(&mut expand),
                    path: r.path.as_ref().map(&mut expand),
                    url: r.url.as_ref().map(&mut expand),
                    method: r.method.as_ref().map(&mut expand),
                    headers: r
                        .headers
                        .iter()
                        .map(|(k, v)| (k.clone(), expand(v)))
                        .collect(),
                    body: r.body.as_ref().map(&mut expand),
                    body_file: r.body_file.as_ref().map(&mut expand),
                    body_lines: r.body_lines.as_ref().map(&mut expand),
                    weight: r.weight,
                })
                .collect();
            match crate::requests::resolve(&raw, &spec.url, &self.dir, &at) {
                Ok(mut mix) => {
                    mix.seed = job.seed.unwrap_or(0);
                    // What the engine refuses once the mix is added (a method, header or
                    // path it cannot send, a mix on io_uring) is the mix's fault: found here,
                    // not when the first iteration loads.
                    let alone = rigor_load::check(&spec).is_ok();
                    spec.mix = Some(mix);
                    if let (true, Err(e)) = (alone, rigor_load::check(&spec)) {
                        p.add(self.error_at(table, Some("requests"), &e.to_string()));
                    }
                }
                Err(e) => p.add(self.error_at(table, Some("requests"), &e.0)),
            }
            if job.body.is_some() || job.method.is_some() {
                p.add(self.error_at(
                    table,
                    Some("requests"),
                    "`method` and `body` describe the one request a job sends without `requests`: \
                     put them on each request instead",
                ));
            }
        } else if job.seed.is_some() {
            p.add(self.error_at(
                table,
                Some("seed"),
                "`seed` picks a mix's requests: add `[[jobs.NAME.requests]]`",
            ));
        }
        if let Some(stages) = &job.stages {
            for (i, s) in stages.iter().enumerate() {
                match parse_duration(&s.duration) {
                    Ok(d) => spec.stages.push(rigor_load::Stage {
                        rate: s.rate,
                        duration: d,
                    }),
                    Err(e) => p.add(self.error_at(
                        table,
                        Some("stages"),
                        &format!("stage {}: `for = \"{}\"`: {e}", i + 1, s.duration),
                    )),
                }
            }
            if stages.is_empty() {
                p.add(self.error_at(table, Some("stages"), "`stages` needs at least one stage"));
            }
        }
        if let Some(m) = &job.measure {
            let n = m
                .trim()
                .strip_prefix("stage")
                .and_then(|n| n.trim().parse::<usize>().ok())
                .filter(|&n| n >= 1);
            match n {
                Some(n) => spec.measure_stage = Some(n - 1),
                None => p.add(self.error_at(
                    table,
                    Some("measure"),
                    &format!("`{m}` is not `stage N` (N from 1)"),
                )),
            }
        }
        if !spec.stages.is_empty() {
            if job.duration.is_some() {
                p.add(self.error_at(
                    table,
                    Some("duration"),
                    "the stages set the measured window: drop `duration`",
                ));
            }
            spec.duration = spec.window();
        }
        if !spec.stages.is_empty() || spec.measure_stage.is_some() {
            if let Err(e) = rigor_load::check_stages(&spec) {
                let key = if spec.rate.is_some() {
                    "rate"
                } else if job.measure.is_some() && e.to_string().contains("measured") {
                    "measure"
                } else {
                    "stages"
                };
                p.add(self.error_at(table, Some(key), &e.to_string()));
            }
        }
        spec
    }

    /// The URL and the address it resolves to (a placeholder when it cannot be resolved; the
    /// problem is recorded).
    /// The URL and the address it resolves to here. With `elsewhere` (only other hosts load
    /// it), a URL this machine cannot resolve is fine when well formed: its address is then
    /// unknown here (unspecified, with the URL's port).
    fn target(
        &self,
        job: &RawJob,
        table: &str,
        vars: &Vars,
        elsewhere: bool,
        p: &mut Problems,
    ) -> (String, std::net::SocketAddr) {
        let url = p
            .take(self.expand(vars, table, "url", job.url.as_deref().unwrap_or_default()))
            .unwrap_or_default();
        let addr = if url.is_empty() {
            None
        } else {
            let resolved = rigor_load::resolve_url(&url).or_else(|e| match e {
                rigor_load::LoadError::Resolve { .. } if elsewhere => {
                    rigor_load::url_host_port(&url).map(|(_, port)| ([0, 0, 0, 0], port).into())
                }
                e => Err(e),
            });
            p.take(resolved.map_err(|e| self.error_at(table, Some("url"), &e.to_string())))
        }
        .unwrap_or_else(|| ([127, 0, 0, 1], 0).into());
        (url, addr)
    }

    /// The request every connection sends: method, headers and body, each checked.
    fn request(
        &self,
        job: &RawJob,
        table: &str,
        vars: &Vars,
        p: &mut Problems,
    ) -> (String, Vec<(String, String)>, Option<String>) {
        let mut headers = Vec::new();
        for (k, v) in &job.headers {
            let Some(value) = p.take(self.expand(vars, table, "headers", v)) else {
                continue;
            };
            if let Err(e) = checks::header(k, &value) {
                p.add(self.error_at(table, Some("headers"), &e.0));
            }
            headers.push((k.clone(), value));
        }
        let body = job
            .body
            .as_ref()
            .and_then(|b| p.take(self.expand(vars, table, "body", b)));
        let method = match &job.method {
            Some(m) => {
                let m = p
                    .take(self.expand(vars, table, "method", m))
                    .unwrap_or_else(|| "GET".to_string());
                if let Err(e) = checks::method(&m) {
                    p.add(self.error_at(table, Some("method"), &e.0));
                }
                m
            }
            None => "GET".to_string(),
        };
        (method, headers, body)
    }
}

/// The load keys of one row's job, read with the variables that may override them; every
/// problem points at the key or at the variable that set it.
struct LoadKeys<'a> {
    config: &'a Config,
    table: String,
    scenario: &'a str,
    vars: &'a Vars,
    overrides: &'a IndexMap<String, (String, Origin)>,
}

impl<'a> LoadKeys<'a> {
    fn error(&self, key: &str, src: &Source, message: &str) -> String {
        self.config
            .load_error(&self.table, self.scenario, key, src, message)
    }

    /// A key's text, expanded: a matrix/variant/--var variable named like a load key overrides
    /// that key.
    fn value(
        &self,
        key: &'static str,
        raw: &Option<Scalar>,
        p: &mut Problems,
    ) -> Option<(String, Source<'a>)> {
        if LOAD_KEYS.contains(&key) {
            if let Some((v, origin)) = self.overrides.get(key) {
                let src = Source::Override(origin);
                return match self.vars.expand(v) {
                    Ok(t) => Some((t, src)),
                    Err(e) => {
                        p.add(self.error(key, &src, &e.0));
                        None
                    }
                };
            }
        }
        let raw = raw.as_ref()?;
        p.take(
            self.config
                .expand(self.vars, &self.table, key, &raw.as_text()),
        )
        .map(|t| (t, Source::Key))
    }

    /// A whole number from 1 to `max`; `why` says where `max` comes from.
    fn count(
        &self,
        key: &'static str,
        raw: &Option<Scalar>,
        default: usize,
        max: u64,
        why: &str,
        p: &mut Problems,
    ) -> usize {
        let Some((t, src)) = self.value(key, raw, p) else {
            return default;
        };
        let digits = t.trim();
        let is_number = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        let message = match digits.parse::<u64>() {
            Ok(n) if (1..=max).contains(&n) => return n as usize,
            _ if !is_number || digits.bytes().all(|b| b == b'0') => {
                format!("`{t}` is not a whole number of at least 1")
            }
            _ => format!("`{t}` is more than {max} {why}"),
        };
        p.add(self.error(key, &src, &message));
        default
    }

    /// `connections` (bounded by the open-file limit too), `threads` and `pipeline`. This
    /// machine's open-file limit bounds the connections it holds: all of them when it loads
    /// alone, its share when it is one of the load `hosts`, none when only other hosts load (each
    /// host's engine checks its own limit before it connects).
    fn counts(
        &self,
        job: &RawJob,
        req: &PlanRequest,
        hosts: &[super::Host],
        p: &mut Problems,
    ) -> (usize, usize, usize) {
        let (max_connections, connections_why) = connection_limit(req, hosts);
        let connections = self.count(
            "connections",
            &job.connections,
            64,
            max_connections,
            &connections_why,
            p,
        );
        let threads = self.count(
            "threads",
            &job.threads,
            1,
            MAX_THREADS,
            "(the most threads)",
            p,
        );
        let pipeline = self.count(
            "pipeline",
            &job.pipeline,
            1,
            MAX_PIPELINE,
            "(the most requests in flight per connection)",
            p,
        );
        (connections, threads, pipeline)
    }

    /// A duration, above zero unless `zero_ok`, at most `max`.
    fn duration(
        &self,
        key: &'static str,
        raw: &Option<Scalar>,
        default: Duration,
        zero_ok: bool,
        max: Option<Duration>,
        p: &mut Problems,
    ) -> Duration {
        let Some((t, src)) = self.value(key, raw, p) else {
            return default;
        };
        // Range errors point where the value was written: the key or the variable.
        let message = match parse_duration(&t) {
            Ok(d) if !zero_ok && d.is_zero() => format!("`{t}` must be more than zero"),
            Ok(d) => match max {
                Some(max) if d > max => format!(
                    "a request timeout of {}s is more than the limit of {}s",
                    d.as_secs(),
                    max.as_secs()
                ),
                _ => return d,
            },
            Err(e) => e.to_string(),
        };
        p.add(self.error(key, &src, &message));
        default
    }

    /// Connections × pipeline (or streams) within the engine's limit of requests in flight; the
    /// problem is pointed at the variable that set `pipeline`, `streams` or `connections`, else
    /// at `depth_key`, the key that set the depth.
    fn check_in_flight(&self, connections: usize, depth: usize, depth_key: &str, p: &mut Problems) {
        if (connections as u64).saturating_mul(depth as u64) <= MAX_IN_FLIGHT {
            return;
        }
        let (key, src) = ["pipeline", "streams", "connections"]
            .into_iter()
            .find_map(|k| self.overrides.get(k).map(|(_, o)| (k, Source::Override(o))))
            .unwrap_or((depth_key, Source::Key));
        p.add(self.error(
            key,
            &src,
            &format!(
                "{connections} connections with {depth} requests in flight each (pipeline or \
                 streams) is more than {MAX_IN_FLIGHT} requests in flight"
            ),
        ));
    }

    /// `tool` and `args`: the tool named, with every load key it cannot honour pointed at (the
    /// key, or the variable that set it). With load hosts, each host's agent runs the tool on
    /// its share of the load.
    fn tool(
        &self,
        job: &RawJob,
        spec: &LoadSpec,
        p: &mut Problems,
    ) -> Option<crate::tools::ToolSpec> {
        let at = |key: &str, m: &str| self.config.error_at(&self.table, Some(key), m);
        let Some(raw) = &job.tool else {
            if job.args.is_some() {
                p.add(at(
                    "args",
                    "`args` are options for a load `tool`; the built-in engine takes none (add `tool = \"wrk\"` or another tool, or drop `args`)",
                ));
            }
            return None;
        };
        let name = p.take(self.config.expand(self.vars, &self.table, "tool", raw))?;
        let tool = match crate::tools::Tool::from_name(name.trim()) {
            Ok(t) => t,
            Err(e) => {
                p.add(at("tool", &e.0));
                return None;
            }
        };
        let args = job
            .args
            .iter()
            .flatten()
            .filter_map(|a| p.take(self.config.expand(self.vars, &self.table, "args", a)))
            .collect::<Vec<String>>();
        if args.iter().any(|a| a.contains('\0')) {
            p.add(at(
                "args",
                "an argument holds a NUL byte, which no command-line option can carry",
            ));
        }
        for (key, why) in crate::tools::check(tool, spec) {
            let src = match self.overrides.get(key) {
                Some((_, origin)) => Source::Override(origin),
                None => Source::Key,
            };
            p.add(self.error(key, &src, &why));
        }
        Some(crate::tools::ToolSpec { tool, args })
    }

    /// `rate`: requests per second within the engine's range, or none (closed model).
    fn rate(&self, raw: &Option<Scalar>, p: &mut Problems) -> Option<f64> {
        let (t, src) = self.value("rate", raw, p)?;
        match t.trim().parse::<f64>() {
            Ok(r) if (MIN_RATE..=MAX_RATE).contains(&r) => Some(r),
            _ => {
                p.add(self.error(
                    "rate",
                    &src,
                    &format!(
                        "`{t}` is not a number of requests per second between {MIN_RATE} and {MAX_RATE:e}"
                    ),
                ));
                None
            }
        }
    }
}
