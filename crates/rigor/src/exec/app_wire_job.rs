//! An application job as it travels to its host and back into a job there: the job's folder
//! is left out (the host unpacks the sources into one of its own) and the artifact goes
//! relative to it, so no path the client sends can point outside that folder.

use crate::config::{AppJob, ContainerJob, EngineKind, ImageSource, Ready};
use rigor_agent::app_wire::{AppWire, ContainerWire, ReadyWire};
use rigor_config::paths::relative_inside;
use std::path::{Component, Path};
use std::time::Duration;

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Conversions between a job and its wire form.
pub trait WireJob: Sized {
    fn of(job: &AppJob) -> anyhow::Result<Self>;
    fn into_job(self, dir: &Path) -> anyhow::Result<AppJob>;
}

impl WireJob for AppWire {
    /// The job as it travels; fails when its artifact lies outside its folder (only the
    /// folder reaches the host).
    fn of(job: &AppJob) -> anyhow::Result<AppWire> {
        let artifact = match &job.artifact {
            Some(a) => Some(
                relative_inside(a, &job.dir)
                    .filter(|r| !r.is_empty())
                    .ok_or_else(|| {
                        anyhow::anyhow!(
                    "`{}`: the artifact {} is outside the job's folder {}: only the folder \
                     reaches the application's host",
                    job.name,
                    a.display(),
                    job.dir.display()
                )
                    })?,
            ),
            None => None,
        };
        Ok(AppWire {
            name: job.name.clone(),
            build: job.build.clone(),
            artifact,
            command: job.command.clone(),
            ready: match &job.ready {
                Ready::Http(u) => ReadyWire::Http(u.clone()),
                Ready::Tcp(a) => ReadyWire::Tcp(a.clone()),
                Ready::Stdout(t) => ReadyWire::Stdout(t.clone()),
                Ready::Stderr(t) => ReadyWire::Stderr(t.clone()),
            },
            ready_timeout_ns: nanos(job.ready_timeout),
            stop_timeout_ns: nanos(job.stop_timeout),
            build_timeout_ns: nanos(job.build_timeout),
            env: job.env.clone(),
            cpus: job.cpus.clone(),
            priority_high: job.priority_high,
            configuration: job.configuration.clone(),
            container: job
                .container
                .as_ref()
                .map(|c| container_of(c, job))
                .transpose()?,
        })
    }

    /// The job on the agent's host, in `dir`; fails on an artifact path that would leave it.
    fn into_job(self, dir: &Path) -> anyhow::Result<AppJob> {
        let artifact = match self.artifact {
            Some(a) => {
                let rel = Path::new(&a);
                if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
                    return Err(anyhow::anyhow!(
                        "the artifact path {a:?} is not a plain path inside the job's folder"
                    ));
                }
                Some(dir.join(rel))
            }
            None => None,
        };
        Ok(AppJob {
            name: self.name,
            dir: dir.to_path_buf(),
            build: self.build,
            artifact,
            command: self.command,
            ready: match self.ready {
                ReadyWire::Http(u) => Ready::Http(u),
                ReadyWire::Tcp(a) => Ready::Tcp(a),
                ReadyWire::Stdout(t) => Ready::Stdout(t),
                ReadyWire::Stderr(t) => Ready::Stderr(t),
            },
            ready_timeout: Duration::from_nanos(self.ready_timeout_ns),
            stop_timeout: Duration::from_nanos(self.stop_timeout_ns),
            build_timeout: Duration::from_nanos(self.build_timeout_ns),
            env: self.env,
            versions: Vec::new(),
            configuration: self.configuration,
            cpus: self.cpus,
            priority_high: self.priority_high,
            metrics: None,
            git_ref: None,
            host: None,
            container: self.container.map(|c| container_job(c, dir)).transpose()?,
        })
    }
}

/// A container job as it travels: its Dockerfile and context relative to the job's folder.
fn container_of(c: &ContainerJob, job: &AppJob) -> anyhow::Result<ContainerWire> {
    let inside = |key: &str, path: &Path| -> anyhow::Result<String> {
        let rel = relative_inside(path, &job.dir);
        // The folder itself is `.` on the host too.
        rel.map(|r| if r.is_empty() { ".".into() } else { r })
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "`{}`: `{key}` {} is outside the job's folder {}: only the folder reaches the \
                 application's host",
                    job.name,
                    path.display(),
                    job.dir.display()
                )
            })
    };
    let (image, dockerfile, context) = match &c.image {
        ImageSource::Named(n) => (Some(n.clone()), None, None),
        ImageSource::Built {
            dockerfile,
            context,
        } => (
            None,
            Some(inside("dockerfile", dockerfile)?),
            Some(inside("context", context)?),
        ),
    };
    Ok(ContainerWire {
        image,
        dockerfile,
        context,
        engine: c.engine.map(|e| e.program().to_string()),
        publish: c.publish.clone(),
        network: c.network.clone(),
        args: c.args.clone(),
    })
}

/// The container job on the host, its Dockerfile and context inside `dir`.
fn container_job(c: ContainerWire, dir: &Path) -> anyhow::Result<ContainerJob> {
    let under = |key: &str, rel: &str| -> anyhow::Result<std::path::PathBuf> {
        let path = Path::new(rel);
        if rel == "." {
            return Ok(dir.to_path_buf());
        }
        if !path.components().all(|c| matches!(c, Component::Normal(_))) {
            anyhow::bail!(
                "the container's `{key}` {rel:?} is not a plain path inside the job's folder"
            );
        }
        Ok(dir.join(path))
    };
    let image = match (c.image, c.dockerfile) {
        (Some(name), None) => ImageSource::Named(name),
        (None, Some(file)) => ImageSource::Built {
            dockerfile: under("dockerfile", &file)?,
            context: under("context", c.context.as_deref().unwrap_or("."))?,
        },
        _ => anyhow::bail!("a container application needs `image` or `dockerfile`, one of them"),
    };
    let engine = match c.engine.as_deref() {
        None => None,
        Some("podman") => Some(EngineKind::Podman),
        Some("docker") => Some(EngineKind::Docker),
        Some(other) => anyhow::bail!("no container engine {other:?} (podman or docker)"),
    };
    Ok(ContainerJob {
        image,
        engine,
        publish: c.publish,
        network: c.network,
        args: c.args,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> AppJob {
        AppWire {
            name: "app".into(),
            build: Some("make".into()),
            artifact: Some("out/server".into()),
            command: "./out/server".into(),
            ready: ReadyWire::Http("http://127.0.0.1:1/".into()),
            ready_timeout_ns: 1,
            stop_timeout_ns: 2,
            build_timeout_ns: 3,
            env: vec![("A".into(), "b".into())],
            cpus: Some(vec![0]),
            priority_high: true,
            configuration: None,
            container: None,
        }
        .into_job(Path::new("/src/app"))
        .unwrap()
    }

    #[test]
    fn a_job_travels_with_its_artifact_relative_to_its_folder() {
        let j = job();
        assert_eq!(
            j.artifact.as_deref(),
            Some(Path::new("/src/app/out/server"))
        );
        let wire = AppWire::of(&j).unwrap();
        assert_eq!(wire.artifact.as_deref(), Some("out/server"));
        let back = wire.clone().into_job(Path::new("/elsewhere")).unwrap();
        assert_eq!(
            back.artifact.as_deref(),
            Some(Path::new("/elsewhere/out/server"))
        );
        assert_eq!(back.ready, Ready::Http("http://127.0.0.1:1/".into()));
        assert_eq!(AppWire::of(&back).unwrap(), wire);
    }

    #[test]
    fn an_artifact_outside_the_folder_is_refused_on_both_sides() {
        let mut j = job();
        j.artifact = Some("/src/app/../other/bin".into());
        assert!(AppWire::of(&j)
            .unwrap_err()
            .to_string()
            .contains("outside the job's folder"));
        let mut w = AppWire::of(&job()).unwrap();
        w.artifact = Some("../../etc/passwd".into());
        assert!(w
            .into_job(Path::new("/x"))
            .unwrap_err()
            .to_string()
            .contains("not a plain path"));
        let mut w = AppWire::of(&job()).unwrap();
        w.artifact = Some("/etc/passwd".into());
        assert!(w.into_job(Path::new("/x")).is_err());
    }

    #[test]
    fn a_container_travels_with_its_dockerfile_relative_to_its_folder() {
        let mut j = job();
        j.container = Some(ContainerJob {
            image: ImageSource::Built {
                dockerfile: "/src/app/docker/Dockerfile".into(),
                context: "/src/app".into(),
            },
            engine: Some(EngineKind::Podman),
            publish: vec!["0.0.0.0:8080:80".into()],
            network: None,
            args: vec!["--memory".into(), "1g".into()],
        });
        let wire = AppWire::of(&j).unwrap();
        let c = wire.container.as_ref().unwrap();
        assert_eq!(c.dockerfile.as_deref(), Some("docker/Dockerfile"));
        assert_eq!(c.context.as_deref(), Some("."));
        assert_eq!(c.engine.as_deref(), Some("podman"));
        let back = wire.clone().into_job(Path::new("/host/work/k")).unwrap();
        let bc = back.container.unwrap();
        assert_eq!(
            bc.image,
            ImageSource::Built {
                dockerfile: "/host/work/k/docker/Dockerfile".into(),
                context: "/host/work/k".into(),
            }
        );
        assert_eq!(bc.publish, ["0.0.0.0:8080:80"]);
        assert_eq!(bc.args, ["--memory", "1g"]);
        // A Dockerfile outside the folder never leaves; one that would climb out is refused.
        if let Some(c) = j.container.as_mut() {
            c.image = ImageSource::Built {
                dockerfile: "/elsewhere/Dockerfile".into(),
                context: "/src/app".into(),
            };
        }
        let e = AppWire::of(&j).unwrap_err().to_string();
        assert!(e.contains("`dockerfile`") && e.contains("outside"), "{e}");
        let mut w = wire;
        if let Some(c) = w.container.as_mut() {
            c.dockerfile = Some("../../etc/Dockerfile".into());
        }
        let e = w.into_job(Path::new("/x")).unwrap_err().to_string();
        assert!(e.contains("not a plain path"), "{e}");
    }
}
