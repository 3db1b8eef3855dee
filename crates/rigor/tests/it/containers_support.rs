//! Container test images built on this machine (no registry): a root filesystem holding
//! busybox (static) and the testbed server with the libraries it links, imported with
//! `podman import`; and the engine's own view of containers (events, `ps`).
#![allow(dead_code)]

use crate::common::{hello_server, m, server_stats, skip};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// The image every container test runs: `/bin/busybox` (+ `sh`, `dd`, `sleep`, `httpd`),
/// `/hello-server`, and what the server links.
pub const IMAGE: &str = "localhost/rigor-test-testbed:1";

/// Whether podman answers; prints `test-skip: needs podman` when it does not.
pub fn podman_or_skip() -> bool {
    let ok = Command::new("podman")
        .args(["version", "--format", "{{.Client.Version}}"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip("needs podman");
    }
    ok
}

/// Builds and imports [`IMAGE`] once per test binary, and `…:2`, the same serving another
/// `/index.html`, for tests of variants by tag.
pub fn image() -> &'static str {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("rigor-test-rootfs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in ["bin", "tmp", "www", "lib", "lib64"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let busybox = ["/bin/busybox", "/usr/bin/busybox"]
            .into_iter()
            .find(|p| Path::new(p).is_file())
            .expect("busybox (busybox-static) on this machine");
        std::fs::copy(busybox, root.join("bin/busybox")).unwrap();
        for applet in ["sh", "dd", "sleep", "httpd", "cat", "trap"] {
            std::os::unix::fs::symlink("busybox", root.join("bin").join(applet)).unwrap();
        }
        std::fs::write(root.join("www/index.html"), "hello from the container\n").unwrap();
        let server = hello_server();
        std::fs::copy(&server, root.join("hello-server")).unwrap();
        for lib in linked(&server) {
            let to = root.join(lib.strip_prefix("/").unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&lib, &to).unwrap();
        }
        let tar = root.with_extension("tar");
        let ok = Command::new("tar")
            .args(["-C"])
            .arg(&root)
            .args(["-cf"])
            .arg(&tar)
            .arg(".")
            .status()
            .unwrap();
        assert!(ok.success());
        podman(&["import", tar.to_str().unwrap(), IMAGE]);
        // Tag 2: the same, serving another page (another image id).
        std::fs::write(root.join("www/index.html"), "second image\n").unwrap();
        let ok = Command::new("tar")
            .arg("-C")
            .arg(&root)
            .arg("-cf")
            .arg(&tar)
            .arg(".")
            .status()
            .unwrap();
        assert!(ok.success());
        podman(&["import", tar.to_str().unwrap(), &tagged("2")]);
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_file(&tar);
    });
    IMAGE
}

/// [`IMAGE`] under another tag.
pub fn tagged(tag: &str) -> String {
    format!("{}:{tag}", IMAGE.rsplit_once(':').unwrap().0)
}

/// The shared libraries `bin` loads (its dynamic loader included), from `ldd`.
fn linked(bin: &Path) -> Vec<PathBuf> {
    let out = Command::new("ldd").arg(bin).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().find(|w| w.starts_with('/')))
        .map(PathBuf::from)
        .collect()
}

/// Runs podman; its stdout, asserting it succeeded.
pub fn podman(args: &[&str]) -> String {
    let out = Command::new("podman").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "podman {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The names of the containers (any state) whose name starts with `rigor-PID-` of `rigor`.
pub fn containers_of(rigor: u32) -> Vec<String> {
    podman(&["ps", "--all", "--format", "{{.Names}}"])
        .lines()
        .filter(|n| n.starts_with(&format!("rigor-{rigor}-")))
        .map(str::to_string)
        .collect()
}

/// Every request the engine sent reached the server in the container: its own count lies
/// between what was sent and that less what was still in flight.
pub fn served_what_was_sent(it: &serde_json::Value) {
    let stats = server_stats(it);
    let served = stats["by_path"]["/plaintext"].as_f64().unwrap();
    let load = &it["load"];
    let in_window = m(it, "load.requests").unwrap();
    let outside = load["outside_window"]["requests"].as_f64().unwrap();
    let in_flight = load["in_flight_at_end"].as_f64().unwrap();
    let sent = in_window + outside + 1.0;
    assert!(
        in_window > 0.0 && served <= sent && served >= sent - in_flight,
        "server answered {served}; engine: {in_window} measured + {outside} outside + 1, \
         {in_flight} in flight"
    );
}

/// [`IMAGE`] tagged `localhost/NAME:1`: the base of a Dockerfile whose build is stopped, so
/// the engine's working container of that build is named `NAME-working-container…`.
pub fn own_base(name: &str) -> String {
    let tag = format!("localhost/{name}:1");
    podman(&["tag", image(), &tag]);
    tag
}

/// A Dockerfile on `base` whose step never ends: `RUN sleep MARKER`.
pub fn endless_dockerfile(base: &str, marker: u32) -> String {
    format!("FROM {base}\nRUN sleep {marker}\n")
}

/// Whether the step of [`endless_dockerfile`] runs now (`sleep MARKER` on this machine).
pub fn endless_step_runs(marker: u32) -> bool {
    !steps_running(marker).is_empty()
}

fn steps_running(marker: u32) -> Vec<String> {
    let wanted = format!("sleep\0{marker}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            (raw == wanted.as_bytes()).then(|| format!("PID {pid}: sleep {marker}"))
        })
        .collect()
}

/// What a stopped build of [`endless_dockerfile`] on [`own_base`] `name` left, once `within`
/// passed: its step still running, the engine's working container of the build.
pub fn build_leftovers(name: &str, marker: u32, within: Duration) -> Vec<String> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let mut left = steps_running(marker);
        left.extend(
            podman(&["ps", "--all", "--external", "--format", "{{.Names}}"])
                .lines()
                .filter(|n| n.starts_with(&format!("{name}-working-container")))
                .map(|n| format!("working container {n}")),
        );
        if left.is_empty() || std::time::Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Removes what a stopped build left ([`build_leftovers`]' working containers) and the base
/// image [`own_base`] tagged, whatever the test found.
pub fn remove_build_leftovers(left: &[String], base: &str) {
    for n in left {
        if let Some(c) = n.strip_prefix("working container ") {
            let _ = Command::new("podman").args(["rm", "-f", c]).output();
        }
    }
    let _ = Command::new("podman").args(["rmi", base]).output();
}
