//! The file as written: serde structs that reject unknown keys, before any `{{var}}` is resolved.

use indexmap::IndexMap;
use serde::Deserialize;

/// A scalar a user may write as a number, a boolean or a `{{templated}}` string.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

/// Written by hand so a list or table in a scalar's place says what was expected (an untagged
/// enum only says that no variant matched).
impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl serde::de::Visitor<'_> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(
            "a single number, true/false or a string (a list of values to try belongs in a \
             scenario's `matrix`)",
        )
    }
    fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
        Ok(i64::try_from(v).map_or_else(|_| Scalar::Text(v.to_string()), Scalar::Int))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::Float(v))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::Text(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Scalar, E> {
        Ok(Scalar::Text(v))
    }
}

impl Scalar {
    /// The text a `{{var}}` expands to.
    pub fn as_text(&self) -> String {
        match self {
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Text(s) => s.clone(),
        }
    }
}

/// A matrix variable's values; a lone value says a list was expected.
struct MatrixValues(Vec<Scalar>);

impl<'de> Deserialize<'de> for MatrixValues {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Values;
        impl<'de> serde::de::Visitor<'de> for Values {
            type Value = MatrixValues;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of values to try, such as [16, 64]")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut values = Vec::new();
                while let Some(v) = seq.next_element::<Scalar>()? {
                    values.push(v);
                }
                Ok(MatrixValues(values))
            }
        }
        d.deserialize_seq(Values)
    }
}

fn matrix<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<IndexMap<String, Vec<Scalar>>, D::Error> {
    let m = IndexMap::<String, MatrixValues>::deserialize(d)?;
    Ok(m.into_iter().map(|(k, v)| (k, v.0)).collect())
}

/// A count such as `iterations`, with a message that does not speak of `usize`.
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    struct Count;
    impl serde::de::Visitor<'_> for Count {
        type Value = usize;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a whole number such as 5")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<usize, E> {
            usize::try_from(v).map_err(|_| E::custom(format!("{v} is too large")))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<usize, E> {
            u64::try_from(v)
                .map_err(|_| E::custom(format!("{v} is not a whole number of at least 1")))
                .and_then(|v| self.visit_u64(v))
        }
    }
    d.deserialize_any(Count).map(Some)
}

/// The whole `rigor.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    #[serde(default)]
    pub variables: IndexMap<String, Scalar>,
    #[serde(default)]
    pub jobs: IndexMap<String, RawJob>,
    #[serde(default)]
    pub scenarios: IndexMap<String, RawScenario>,
    #[serde(default)]
    pub profiles: IndexMap<String, RawProfile>,
    #[serde(default)]
    pub measurements: IndexMap<String, RawMeasurement>,
    #[serde(default)]
    pub hosts: IndexMap<String, RawHost>,
    #[serde(default)]
    pub report: RawReport,
    /// `[[limits]]`: pass/fail bounds on a measurement's absolute value.
    #[serde(default)]
    pub limits: Vec<RawLimit>,
}

/// `[report]`: what the reports show first.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReport {
    /// The measurement ids of the headline (`--key` overrides it).
    pub key: Option<Vec<String>>,
}

/// `[[limits]]`: a bound on the median of a measurement in every row that has it, such as
/// `measure = "load.latency.p99", max = "50ms"`; a limit not met fails the run (exit 6).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimit {
    /// The measurement id.
    pub measure: Option<String>,
    /// The largest value that passes, in the measurement's unit or with a unit (`"50ms"`).
    pub max: Option<Scalar>,
    /// The smallest value that passes.
    pub min: Option<Scalar>,
}

/// `[hosts.NAME]`: how to reach a machine a role runs on (OpenSSH, or any command that gives a
/// remote shell on stdio).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHost {
    /// `user@host` (or a `Host` of the user's ssh config) given to the OpenSSH client.
    pub ssh: Option<String>,
    pub port: Option<u16>,
    /// A private key file (`ssh -i`), relative to the config's folder.
    pub identity: Option<String>,
    /// More arguments for `ssh`, such as `["-o", "ConnectTimeout=5"]` or `["-F", "lab.conf"]`.
    pub options: Option<Vec<String>>,
    /// A command line that runs what it is given on the host with stdio attached, such as
    /// `kubectl exec -i POD --` or `docker exec -i NAME`.
    pub transport: Option<String>,
    /// The addresses this host's share of a load comes from, in place of the load job's
    /// `source_addrs`: each machine has addresses of its own.
    pub source_addrs: Option<String>,
}

/// `[measurements.ID]`: how to show and judge a measurement id.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMeasurement {
    pub unit: Option<String>,
    /// `higher` or `lower` is better (checked when the file is read).
    pub direction: Option<String>,
    pub label: Option<String>,
    /// The practical threshold of this id's verdicts (`"1%"` or `1`), in place of the run's.
    pub threshold: Option<Scalar>,
}

/// A job: application keys (`command`, `ready`, …) or load keys (`url`, `connections`, …).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawJob {
    // application
    pub dir: Option<String>,
    pub build: Option<String>,
    pub artifact: Option<String>,
    pub command: Option<String>,
    pub ready: Option<RawReady>,
    pub ready_timeout: Option<String>,
    pub stop_timeout: Option<String>,
    /// How long the build may take before its process tree is killed.
    pub build_timeout: Option<String>,
    #[serde(default)]
    pub env: IndexMap<String, Scalar>,
    #[serde(default)]
    pub versions: IndexMap<String, String>,
    /// A hint such as `"debug"` or `"release"`, checked by the debug-build guard.
    pub configuration: Option<String>,
    /// `metrics = URL`: Prometheus/OpenMetrics text scraped during the measured window.
    pub metrics: Option<String>,
    /// Series of `metrics` to keep, as `NAME{label="value"}`; other families are summed.
    #[serde(default)]
    pub metrics_select: Vec<String>,
    // application from a container image
    /// `image = "name:tag"`: the application runs as a fresh container of this image.
    pub image: Option<String>,
    /// A Dockerfile the engine builds once per distinct build (relative to the job's `dir`).
    pub dockerfile: Option<String>,
    /// The build context of `dockerfile` (relative to the job's `dir`; default its folder).
    pub context: Option<String>,
    /// `podman` or `docker`; default: the first that answers, docker first.
    pub engine: Option<String>,
    /// Ports published as the engine's `--publish`, such as `127.0.0.1:{{port}}:80`.
    pub publish: Option<Vec<String>>,
    /// An application's container network (`host` or a network name); on a load job,
    /// `container` runs the load inside the application container's network namespace.
    pub network: Option<String>,
    /// More arguments for the engine's `run`, placed before the image.
    pub container_args: Option<Vec<String>>,
    // command
    /// `"command"` marks a job that runs to completion and reports its own figures.
    pub role: Option<String>,
    /// `[jobs.NAME.extract.ID]`: figures read from lines of the job's output.
    #[serde(default)]
    pub extract: IndexMap<String, RawExtract>,
    // load
    pub url: Option<String>,
    pub connections: Option<Scalar>,
    pub threads: Option<Scalar>,
    pub pipeline: Option<Scalar>,
    pub rate: Option<Scalar>,
    pub warmup: Option<Scalar>,
    pub duration: Option<Scalar>,
    pub timeout: Option<Scalar>,
    pub method: Option<String>,
    #[serde(default)]
    pub headers: IndexMap<String, String>,
    pub body: Option<String>,
    pub validate: Option<RawValidate>,
    /// Addresses the connections come from in turn: `127.0.0.1-127.0.0.4`, or a list.
    pub source_addrs: Option<String>,
    /// An external load tool (`wrk`, `wrk2`, `bombardier`, `h2load`, `oha`) in place of the
    /// engine.
    pub tool: Option<String>,
    /// Extra options for `tool`, placed after rigor's own flags.
    pub args: Option<Vec<String>>,
    /// https:// only: accept any certificate.
    pub insecure: Option<bool>,
    /// The engine's I/O path: `auto`, `epoll` or `io_uring`.
    pub io: Option<String>,
    /// Speak HTTP/2 (h2 by ALPN over https://, h2c by prior knowledge over http://).
    pub http2: Option<bool>,
    /// HTTP/2: concurrent streams per connection.
    pub streams: Option<Scalar>,
    /// `[[jobs.NAME.requests]]`: a request mix on the URL's origin instead of one request.
    #[serde(default)]
    pub requests: Vec<crate::requests::RawRequest>,
    /// The seed of the mix's choices (default 0): another seed, another repeatable sequence.
    pub seed: Option<u64>,
    /// Open model stages: `[{ rate = 100, for = "10s" }, …]`, linear ramps between them.
    pub stages: Option<Vec<RawStage>>,
    /// `"stage N"`: the measured window is stage N (from 1) alone.
    pub measure: Option<String>,
    /// `find_rate = { slo = "p99 < 50ms", max = 100000 }`: search for the rate the service
    /// holds instead of loading it at one rate.
    pub find_rate: Option<RawFindRate>,
}

/// One stage of the open model: the rate reached at its end and how long it takes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStage {
    pub rate: f64,
    #[serde(rename = "for")]
    pub duration: String,
}

/// The search for the highest rate meeting an objective.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFindRate {
    /// The objective: `p99 < 50ms`, `p99<50ms, errors<1%`.
    pub slo: String,
    /// The first rate probed (default: the job's `rate`, else 100).
    pub start: Option<f64>,
    /// The highest rate probed (default 100000).
    pub max: Option<f64>,
    /// `5%` or `0.05`.
    pub precision: Option<Scalar>,
    /// Each probe's measured window, e.g. `"5s"`.
    pub probe: Option<String>,
}

impl RawJob {
    /// Whether the job starts an application: a `command`, or a container image (which runs
    /// its own command when none is given).
    pub fn starts_an_application(&self) -> bool {
        self.command.is_some() || self.image.is_some() || self.dockerfile.is_some()
    }
}

/// A rule that reads one figure from the lines of a command job's output.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExtract {
    /// A regular expression with a named capture `value` (and the `row` capture, if any).
    pub regex: String,
    pub unit: Option<String>,
    /// `higher` or `lower` is better: required, since rigor cannot know.
    pub direction: Option<String>,
    pub label: Option<String>,
    /// The named capture that says which row a matching line belongs to.
    pub row: Option<String>,
}

/// How to know the application is ready to take load.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReady {
    pub http: Option<String>,
    pub tcp: Option<String>,
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub timeout: Option<String>,
}

/// A one-off check of the row's own URL after readiness.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawValidate {
    pub status: Option<u16>,
    pub body_contains: Option<String>,
}

/// Which jobs play which role, and what varies.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub application: Option<String>,
    pub load: Option<String>,
    /// A command job run to completion instead of an application under load.
    pub command: Option<String>,
    #[serde(default, deserialize_with = "count")]
    pub iterations: Option<usize>,
    #[serde(default)]
    pub variables: IndexMap<String, Scalar>,
    #[serde(default, deserialize_with = "matrix")]
    pub matrix: IndexMap<String, Vec<Scalar>>,
    #[serde(default)]
    pub variants: IndexMap<String, RawVariant>,
    /// `true`, `false` or `"dwarf"`: CPU profiles of the application during each measured
    /// window (over the profile's own `cpu_profile`).
    pub cpu_profile: Option<Scalar>,
}

/// Named overrides compared against each other in one interleaved run.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVariant {
    #[serde(default)]
    pub env: IndexMap<String, Scalar>,
    #[serde(default)]
    pub variables: IndexMap<String, Scalar>,
    pub command: Option<String>,
    pub build: Option<String>,
    pub dir: Option<String>,
    pub artifact: Option<String>,
    /// `image = "name:tag"`: this variant's container image in place of the job's.
    pub image: Option<String>,
    /// `ref = "REV"`: the application runs from a git worktree of this commit.
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
}

/// Where and how each role runs.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProfile {
    #[serde(default)]
    pub variables: IndexMap<String, Scalar>,
    pub application: Option<RawRole>,
    pub load: Option<RawRole>,
    /// `true`, `false` or `"dwarf"`: CPU profiles for every scenario run with this profile.
    pub cpu_profile: Option<Scalar>,
}

/// CPU set and priority of one role.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRole {
    pub cpus: Option<Scalar>,
    pub priority: Option<String>,
    /// The one host the role runs on (`local` when absent).
    pub host: Option<String>,
    /// The load role only: several hosts sharing the load.
    pub hosts: Option<Vec<String>>,
}
