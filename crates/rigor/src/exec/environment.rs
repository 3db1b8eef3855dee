//! The machine's story for the result: the probe's system readings plus, per application job,
//! the git commit and dirty flag of its folder, its declared version probes and the env rigor set
//! (secrets redacted).

use crate::config::AppJob;
use serde_json::{json, Map, Value};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `environment` block of a result.
pub fn collect(env: &rigor_probe::Environment, apps: &[&AppJob], cgroup_note: &str) -> Value {
    let mut root = serde_json::to_value(env).unwrap_or_else(|_| json!({}));
    let mut jobs = Map::new();
    for job in apps {
        if jobs.contains_key(&job.name) {
            continue;
        }
        let mut j = Map::new();
        if let Some(g) = rigor_probe::git_info(&job.dir) {
            j.insert("git".into(), serde_json::to_value(g).unwrap_or(Value::Null));
        }
        let mut versions = Map::new();
        for (name, cmd) in &job.versions {
            versions.insert(name.clone(), Value::String(version_of(cmd, job)));
        }
        if !versions.is_empty() {
            j.insert("versions".into(), Value::Object(versions));
        }
        let envs: Map<String, Value> = job
            .env
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(super::redact::env_value(k, v))))
            .collect();
        if !envs.is_empty() {
            j.insert("env".into(), Value::Object(envs));
        }
        j.insert("dir".into(), Value::String(job.dir.display().to_string()));
        if let Some(c) = &job.container {
            let here = job.host.is_none();
            // On a host of its own, its engine is that host's: the host's build says which.
            let container = if here {
                super::container::environment(c)
            } else {
                super::container::written(c)
            };
            j.insert("container".into(), container);
        }
        if job.build.is_some() {
            let build_env: Map<String, Value> = crate::guards::build_env()
                .into_iter()
                .map(|(k, v)| {
                    let shown = super::redact::env_value(&k, &v);
                    (k, Value::String(shown))
                })
                .collect();
            j.insert("build_env".into(), Value::Object(build_env));
        }
        jobs.insert(job.name.clone(), Value::Object(j));
    }
    crate::config::record_refs(&mut jobs, apps);
    if let Value::Object(m) = &mut root {
        m.insert(
            "rigor_version".into(),
            Value::String(env!("CARGO_PKG_VERSION").into()),
        );
        m.insert("cgroup".into(), Value::String(cgroup_note.to_string()));
        m.insert("jobs".into(), Value::Object(jobs));
    }
    root
}

/// First line of a version probe's output, or why it failed; never blocks more than 10 s.
fn version_of(cmd: &str, job: &AppJob) -> String {
    let child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(&job.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        return format!("(could not run `{cmd}`)");
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return format!("(`{cmd}` timed out)");
            }
        }
    }
    match child.wait_with_output() {
        Ok(o) => {
            let text = String::from_utf8_lossy(if o.stdout.is_empty() {
                &o.stderr
            } else {
                &o.stdout
            })
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
            if o.status.success() {
                text
            } else {
                format!("(`{cmd}` failed: {text})")
            }
        }
        Err(e) => format!("(`{cmd}`: {e})"),
    }
}
