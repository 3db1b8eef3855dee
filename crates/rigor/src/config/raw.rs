//! The file as written: serde structs that reject unknown keys, before any `{{var}}` is resolved.

use indexmap::IndexMap;
use serde::Deserialize;

/// A scalar a user may write as a number, a boolean or a `{{templated}}` string.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
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
    pub iterations: Option<usize>,
    #[serde(default)]
    pub variables: IndexMap<String, Scalar>,
    #[serde(default)]
    pub matrix: IndexMap<String, Vec<Scalar>>,
    #[serde(default)]
    pub variants: IndexMap<String, RawVariant>,
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
}

/// Where and how each role runs.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProfile {
    #[serde(default)]
    pub variables: IndexMap<String, Scalar>,
    pub application: Option<RawRole>,
    pub load: Option<RawRole>,
}

/// CPU set and priority of one role.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRole {
    pub cpus: Option<Scalar>,
    pub priority: Option<String>,
}
