//! The one interface to a container engine: the command lines of its client (`podman`,
//! `docker`) for each thing rigor asks of it, built as text so each engine's can be checked
//! without that engine.

use crate::config::{ContainerJob, EngineKind};

/// The label every container rigor starts carries; its value is `PID-START` of the rigor that
/// started it, so a later run can tell a container of a killed run from one of a run still
/// going.
pub const OWNER_LABEL: &str = "io.rigor.owner";

/// A container engine reached through its command-line client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Engine {
    pub kind: EngineKind,
}

/// What one container of one iteration is: its name, its owner label's value, its image (by
/// id), its environment and CPU set, and the command that replaces the image's own.
pub struct RunSpec<'a> {
    pub name: &'a str,
    pub owner: &'a str,
    pub image: &'a str,
    pub job: &'a ContainerJob,
    pub env: &'a [(String, String)],
    pub cpus: Option<&'a [usize]>,
    /// The command's words; empty runs the image's own command.
    pub command: &'a [String],
}

impl Engine {
    /// The client program.
    pub fn program(&self) -> &'static str {
        self.kind.program()
    }

    /// `run`, attached (the client's output is the container's), with rigor's name and label.
    pub fn run(&self, r: &RunSpec) -> Vec<String> {
        let mut a = words(&["run", "--name", r.name, "--label"]);
        a.push(format!("{OWNER_LABEL}={}", r.owner));
        for (k, v) in r.env {
            a.push("--env".into());
            a.push(format!("{k}={v}"));
        }
        if let Some(cpus) = r.cpus {
            let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
            a.push("--cpuset-cpus".into());
            a.push(list.join(","));
        }
        if let Some(n) = &r.job.network {
            a.push("--network".into());
            a.push(n.clone());
        }
        for p in &r.job.publish {
            a.push("--publish".into());
            a.push(p.clone());
        }
        a.extend(r.job.args.iter().cloned());
        a.push(r.image.to_string());
        a.extend(r.command.iter().cloned());
        a
    }

    /// The PID, on this machine, of the container's first process (0 until it runs).
    pub fn init_pid(&self, name: &str) -> Vec<String> {
        words(&["inspect", "--format", "{{.State.Pid}}", name])
    }

    /// Stops the container: SIGTERM, then SIGKILL after `secs`.
    pub fn stop(&self, name: &str, secs: u64) -> Vec<String> {
        words(&["stop", "-t", &secs.to_string(), name])
    }

    /// Removes the container, killing it if it still runs.
    pub fn remove(&self, name: &str) -> Vec<String> {
        words(&["rm", "-f", name])
    }

    /// Every container carrying rigor's label, running or not: `ID OWNER` per line.
    pub fn owned(&self) -> Vec<String> {
        // Docker's `ps` has the labels as one string and a `Label` function; podman's a map.
        let format = match self.kind {
            EngineKind::Docker => format!("{{{{.ID}}}} {{{{.Label \"{OWNER_LABEL}\"}}}}"),
            EngineKind::Podman => format!("{{{{.ID}}}} {{{{index .Labels \"{OWNER_LABEL}\"}}}}"),
        };
        words(&[
            "ps",
            "--all",
            "--no-trunc",
            "--filter",
            &format!("label={OWNER_LABEL}"),
            "--format",
            &format,
        ])
    }

    /// The engine's version; docker's is its daemon's, so it fails when no daemon answers.
    pub fn version(&self) -> Vec<String> {
        let field = match self.kind {
            EngineKind::Podman => "{{.Client.Version}}",
            EngineKind::Docker => "{{.Server.Version}}",
        };
        words(&["version", "--format", field])
    }

    /// Builds `dockerfile` in `context` and tags the image `tag`.
    pub fn build(&self, dockerfile: &str, context: &str, tag: &str) -> Vec<String> {
        words(&["build", "--file", dockerfile, "--tag", tag, context])
    }

    /// The image's id and its size in bytes: `ID SIZE`.
    pub fn image(&self, image: &str) -> Vec<String> {
        words(&["image", "inspect", "--format", "{{.Id}} {{.Size}}", image])
    }
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ImageSource;

    fn job() -> ContainerJob {
        ContainerJob {
            image: ImageSource::Named("srv:1".into()),
            engine: Some(EngineKind::Docker),
            publish: vec!["127.0.0.1:8080:80".into()],
            network: Some("bench".into()),
            args: vec!["--memory".into(), "512m".into()],
        }
    }

    #[test]
    fn docker_command_lines_are_what_its_client_takes() {
        let d = Engine {
            kind: EngineKind::Docker,
        };
        let job = job();
        let env = [("MODE".to_string(), "fast x".to_string())];
        let command = ["./srv".to_string(), "--port=80".to_string()];
        let run = d.run(&RunSpec {
            name: "rigor-1-2",
            owner: "41-99",
            image: "sha256:abc",
            job: &job,
            env: &env,
            cpus: Some(&[0, 2]),
            command: &command,
        });
        assert_eq!(
            shlex::try_join(run.iter().map(String::as_str)).unwrap(),
            "run --name rigor-1-2 --label 'io.rigor.owner=41-99' --env 'MODE=fast x' \
             --cpuset-cpus '0,2' --network bench --publish 127.0.0.1:8080:80 --memory 512m \
             sha256:abc ./srv '--port=80'"
        );
        assert_eq!(d.program(), "docker");
        assert_eq!(d.stop("c", 5).join(" "), "stop -t 5 c");
        assert_eq!(d.remove("c").join(" "), "rm -f c");
        assert_eq!(
            d.init_pid("c").join(" "),
            "inspect --format {{.State.Pid}} c"
        );
        assert_eq!(
            d.owned().join(" "),
            "ps --all --no-trunc --filter label=io.rigor.owner --format \
             {{.ID}} {{.Label \"io.rigor.owner\"}}"
        );
        // Docker's client answers without its daemon; the server's version needs the daemon.
        assert_eq!(
            d.version().join(" "),
            "version --format {{.Server.Version}}"
        );
        assert_eq!(
            d.build("Dockerfile", ".", "rigor-build-x").join(" "),
            "build --file Dockerfile --tag rigor-build-x ."
        );
        assert_eq!(
            d.image("srv:1").join(" "),
            "image inspect --format {{.Id}} {{.Size}} srv:1"
        );
    }

    #[test]
    fn an_image_without_command_runs_its_own() {
        let p = Engine {
            kind: EngineKind::Podman,
        };
        let job = ContainerJob {
            publish: Vec::new(),
            network: None,
            args: Vec::new(),
            ..job()
        };
        let run = p.run(&RunSpec {
            name: "n",
            owner: "o",
            image: "img",
            job: &job,
            env: &[],
            cpus: None,
            command: &[],
        });
        assert_eq!(run.join(" "), "run --name n --label io.rigor.owner=o img");
        assert_eq!(
            p.version().join(" "),
            "version --format {{.Client.Version}}"
        );
    }
}
