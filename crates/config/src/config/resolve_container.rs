//! The container keys of an application job (`image`, `dockerfile` + `context`, `engine`,
//! `publish`, `network`, `container_args`) and the load job's `network = "container"`, each
//! problem named by table and key.

use super::model::{ContainerJob, EngineKind, ImageSource};
use super::problems::Problems;
use super::raw::RawJob;
use super::{Config, Vars};
use std::path::{Path, PathBuf};

impl Config {
    /// The job's container, when it has `image` or `dockerfile` (already expanded `image`
    /// given, the variant's when it sets one); `None` for an application started from a
    /// command. Container keys without an image are refused.
    pub(super) fn container(
        &self,
        job: &RawJob,
        table: &str,
        image: Option<String>,
        dir: &Path,
        vars: &Vars,
        p: &mut Problems,
    ) -> Option<ContainerJob> {
        let text = |key: &'static str, v: &Option<String>, p: &mut Problems| {
            v.as_ref()
                .and_then(|t| p.take(self.expand(vars, table, key, t)))
        };
        let list = |key: &'static str, v: &Option<Vec<String>>, p: &mut Problems| -> Vec<String> {
            v.iter()
                .flatten()
                .filter_map(|t| p.take(self.expand(vars, table, key, t)))
                .collect()
        };
        let dockerfile = text("dockerfile", &job.dockerfile, p);
        let source = match (image, dockerfile) {
            (Some(_), Some(_)) => {
                p.add(self.error_at(
                    table,
                    Some("image"),
                    "give `image` or `dockerfile`, not both",
                ));
                return None;
            }
            (Some(name), None) => {
                if name.trim().is_empty() || name.chars().any(char::is_whitespace) {
                    p.add(self.error_at(
                        table,
                        Some("image"),
                        &format!("{name:?} is not an image name (such as `nginx:1.27`)"),
                    ));
                }
                ImageSource::Named(name)
            }
            (None, Some(file)) => {
                let dockerfile = under(dir, &file);
                if !dockerfile.is_file() {
                    p.add(self.error_at(
                        table,
                        Some("dockerfile"),
                        &format!("file `{}` does not exist", dockerfile.display()),
                    ));
                }
                let context = match text("context", &job.context, p) {
                    Some(c) => under(dir, &c),
                    None => dockerfile
                        .parent()
                        .map(Path::to_path_buf)
                        .unwrap_or_default(),
                };
                if !context.is_dir() {
                    p.add(self.error_at(
                        table,
                        Some("context"),
                        &format!("folder `{}` does not exist", context.display()),
                    ));
                }
                ImageSource::Built {
                    dockerfile,
                    context,
                }
            }
            (None, None) => {
                let stray = [
                    ("engine", job.engine.is_some()),
                    ("context", job.context.is_some()),
                    ("publish", job.publish.is_some()),
                    ("network", job.network.is_some()),
                    ("container_args", job.container_args.is_some()),
                ];
                for (key, _) in stray.iter().filter(|(_, set)| *set) {
                    p.add(self.error_at(
                        table,
                        Some(key),
                        "only a container application has this key: give `image` or \
                         `dockerfile` too",
                    ));
                }
                return None;
            }
        };
        if job.build.is_some() || job.artifact.is_some() {
            p.add(self.error_at(
                table,
                Some(if job.build.is_some() {
                    "build"
                } else {
                    "artifact"
                }),
                "a container application is built by its engine from `dockerfile`: \
                 `build` and `artifact` belong to an application started from a command",
            ));
        }
        let engine = match text("engine", &job.engine, p).as_deref() {
            None => None,
            Some("podman") => Some(EngineKind::Podman),
            Some("docker") => Some(EngineKind::Docker),
            Some(other) => {
                p.add(self.error_at(
                    table,
                    Some("engine"),
                    &format!("{other:?} is not an engine: `podman` or `docker`"),
                ));
                None
            }
        };
        let network = text("network", &job.network, p);
        if let Some(n) = network.as_deref() {
            if n.is_empty() || n == "container" || n.chars().any(char::is_whitespace) {
                p.add(self.error_at(
                    table,
                    Some("network"),
                    &format!(
                        "{n:?} is not a container network: `host` or a network's name \
                         (`container` is a load job's value)"
                    ),
                ));
            }
        }
        let publish = list("publish", &job.publish, p);
        for entry in &publish {
            if entry.is_empty() || entry.chars().any(char::is_whitespace) {
                p.add(self.error_at(
                    table,
                    Some("publish"),
                    &format!("{entry:?} is not a port mapping such as `127.0.0.1:8080:80`"),
                ));
            }
        }
        let args = list("container_args", &job.container_args, p);
        for arg in &args {
            if arg.trim().is_empty() {
                p.add(self.error_at(
                    table,
                    Some("container_args"),
                    "an empty argument, which the engine's `run` would take for the image: \
                     remove it",
                ));
            } else if let Some(why) = managed_arg(arg) {
                p.add(self.error_at(
                    table,
                    Some("container_args"),
                    &format!("{arg:?} is rigor's to set: {why}; remove it"),
                ));
            }
        }
        Some(ContainerJob {
            image: source,
            engine,
            publish,
            network,
            args,
        })
    }

    /// A load job's `network`: `container` (the load runs in the application container's
    /// network namespace) is the only value.
    pub(super) fn load_network(
        &self,
        job: &RawJob,
        table: &str,
        vars: &Vars,
        p: &mut Problems,
    ) -> bool {
        let Some(n) = job
            .network
            .as_ref()
            .and_then(|n| p.take(self.expand(vars, table, "network", n)))
        else {
            return false;
        };
        if n == "container" {
            return true;
        }
        p.add(self.error_at(
            table,
            Some("network"),
            &format!(
                "{n:?}: a load job's `network` is `container` (the load runs inside the \
                 application container's network namespace)"
            ),
        ));
        false
    }
}

/// `path` relative to the job's folder, unless absolute.
fn under(dir: &Path, path: &str) -> PathBuf {
    if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        dir.join(path)
    }
}

/// Why a `container_args` entry would take over what rigor decides of each container: its
/// name (what rigor stops and removes it by) and its attached client (the process rigor
/// watches, whose output is the application's log); `None` for any other argument.
fn managed_arg(arg: &str) -> Option<&'static str> {
    let flag = arg.split_once('=').map_or(arg, |(f, _)| f);
    // `-dit` and the like: boolean short flags of `run` run together.
    let short_cluster = arg.len() > 2
        && arg.starts_with('-')
        && !arg.starts_with("--")
        && arg[1..].chars().all(|c| "ditP".contains(c));
    match flag {
        "--name" => Some(
            "each iteration's container gets a name of rigor's, which it stops and removes it \
             by (a container of another name would keep running)",
        ),
        "-d" | "--detach" => Some(
            "the container runs attached, its client being what rigor watches and its output \
             the application's log (a detached one looks exited at once)",
        ),
        _ if short_cluster && arg.contains('d') => Some(
            "`-d` (detach): the container runs attached, its client being what rigor watches \
             and its output the application's log",
        ),
        "--help" => Some("it prints the engine's help instead of running the container"),
        _ => None,
    }
}
