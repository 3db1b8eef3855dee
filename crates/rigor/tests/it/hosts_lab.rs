//! The multi-host lab the SSH tests build on: hosts come up in network namespaces of their own,
//! ssh through the generated config (strict host keys, BatchMode) lands in the right one, a
//! server in one host answers the root namespace and the other host, a cut link fails fast while
//! the rest works, and dropping the lab (on a panic too) or a later lab's sweep leaves no
//! namespace, link or process behind. Root only: namespaces and veths need it.

use crate::common;
use crate::hosts_support;
use common::*;
use hosts_support::*;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

/// stdout of a command that must have succeeded.
fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `GET path` over a fresh connection to `addr:port`: the status line, `None` if no connection
/// or no answer.
fn http_get(addr: Ipv4Addr, port: u16, path: &str) -> Option<String> {
    let to = SocketAddr::from((addr, port));
    let mut s = TcpStream::connect_timeout(&to, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    body.lines().next().map(str::to_string)
}

/// The inode naming network namespace `ns` as `/proc/PID/ns/net` does: `net:[INODE]`.
fn ns_id(ns: &str) -> String {
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(format!("/run/netns/{ns}")).unwrap().ino();
    format!("net:[{ino}]")
}

fn alive(pid: u32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/ns/net")).is_ok()
}

#[test]
#[ignore = "needs root"]
fn ssh_through_the_lab_config_runs_inside_the_named_host() {
    let Some(lab) = Lab::or_skip(&["a", "b"]) else {
        return;
    };
    let root_ns = std::fs::read_link("/proc/self/ns/net").unwrap();
    for name in ["a", "b"] {
        let out = ok(lab
            .ssh(name, &["hostname; readlink /proc/self/ns/net"])
            .output()
            .unwrap());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines, [name, &ns_id(lab.netns(name))], "{out}");
        assert_ne!(Path::new(lines[1]), root_ns);
    }
    assert_ne!(lab.addr("a"), lab.addr("b"));

    // The other way in: `root@ADDR` with the identity and the known hosts, no config file.
    let out = std::process::Command::new("ssh")
        .args([
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=yes",
            "-i",
        ])
        .arg(lab.identity_path())
        .arg("-o")
        .arg(format!(
            "UserKnownHostsFile={}",
            lab.known_hosts_path().display()
        ))
        .arg(format!("root@{}", lab.addr("b")))
        .arg("hostname")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(ok(out), "b");

    // A host key the known hosts do not list is refused: strict checking is on.
    let other = lab.dir().join("empty_known_hosts");
    std::fs::write(&other, "").unwrap();
    let refused = std::process::Command::new("ssh")
        .arg("-F")
        .arg(lab.ssh_config_path())
        .arg("-o")
        .arg(format!("UserKnownHostsFile={}", other.display()))
        .args(["a", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success(), "{}", text(&refused));
    assert!(
        text(&refused).contains("Host key verification failed"),
        "{}",
        text(&refused)
    );

    // exec and spawn run inside the namespace too.
    let id = ok(lab.exec("b", &["readlink", "/proc/self/ns/net"]));
    assert_eq!(id, ns_id(lab.netns("b")));
}

#[test]
#[ignore = "needs root"]
fn the_testbed_in_one_host_answers_the_root_namespace_and_the_other_host() {
    let server = hello_server();
    let Some(lab) = Lab::or_skip(&["a", "b"]) else {
        return;
    };
    let bin = server.display().to_string();
    let mut app = lab.spawn(
        "a",
        &[
            &bin,
            "--host",
            "0.0.0.0",
            "--port",
            "8080",
            "--threads",
            "1",
        ],
    );
    let a = lab.addr("a");
    let start = Instant::now();
    while http_get(a, 8080, "/health").is_none() {
        assert!(start.elapsed() < Duration::from_secs(20), "no testbed in a");
        assert!(app.try_wait().unwrap().is_none(), "the testbed exited");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(lab.pids_in("a").contains(&app.id()));
    assert!(!lab.pids_in("b").contains(&app.id()));

    // From the root namespace, where rigor runs.
    let line = http_get(a, 8080, "/plaintext").unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    // From host b, with a client in Rust on a thread inside b's namespace.
    let line = lab.in_ns("b", || http_get(a, 8080, "/plaintext")).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    // Host b's own loopback has no testbed: the client really ran in b.
    assert!(lab
        .in_ns("b", || http_get(Ipv4Addr::LOCALHOST, 8080, "/health"))
        .is_none());
    // And from b with curl, as a command run over ssh would, where curl is installed.
    let curl = lab
        .ssh(
            "b",
            &["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}"],
        )
        .arg(format!("http://{a}:8080/plaintext"))
        .output()
        .unwrap();
    if curl.status.code() != Some(127) {
        assert_eq!(ok(curl), "200");
    }
    // Host a reaches the root namespace back at the bridge's address.
    let root = lab.root_addr();
    let from_a = ok(lab.exec("a", &["ip", "route", "get", &root.to_string()]));
    assert!(from_a.contains("dev eth0"), "{from_a}");

    let _ = app.kill();
    let _ = app.wait();
}

#[test]
#[ignore = "needs root"]
fn a_cut_host_fails_fast_while_the_other_still_answers() {
    let Some(lab) = Lab::or_skip(&["a", "b"]) else {
        return;
    };
    lab.cut("a");
    let start = Instant::now();
    let out = std::process::Command::new("ssh")
        .arg("-F")
        .arg(lab.ssh_config_path())
        .args(["-o", "ConnectTimeout=2", "a", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let took = start.elapsed();
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        took < Duration::from_secs(10),
        "ssh to a cut host took {took:?}"
    );
    assert_eq!(ok(lab.ssh("b", &["hostname"]).output().unwrap()), "b");
    // b cannot reach a either.
    let a = lab.addr("a");
    assert!(lab
        .in_ns("b", || TcpStream::connect_timeout(
            &SocketAddr::from((a, 22)),
            Duration::from_millis(500)
        ))
        .is_err());

    lab.mend("a");
    let start = Instant::now();
    loop {
        let out = lab.ssh("a", &["hostname"]).output().unwrap();
        if out.status.success() {
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "a");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{}", text(&out));
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What a lab made, to check that it is gone.
struct Made {
    netns: Vec<String>,
    links: Vec<String>,
    pids: Vec<u32>,
    dir: std::path::PathBuf,
}

fn made(lab: &Lab) -> Made {
    let mut links = Vec::new();
    let mut pids = Vec::new();
    for name in lab.names() {
        pids.extend(lab.pids_in(name));
    }
    // The lab's bridge holds the root namespace's address on the lab's subnet.
    for e in std::fs::read_dir("/sys/class/net").unwrap().flatten() {
        let link = e.file_name().to_string_lossy().to_string();
        // Links of labs of other tests come and go meanwhile: a failed look is no match.
        let out = std::process::Command::new("ip")
            .args(["-4", "-o", "addr", "show", "dev", &link])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&out.stdout).contains(&format!(" {}/24 ", lab.root_addr())) {
            links.push(link);
        }
    }
    assert_eq!(links.len(), 1, "the lab's bridge: {links:?}");
    let bridge = links[0].clone();
    for e in std::fs::read_dir(format!("/sys/class/net/{bridge}/brif"))
        .unwrap()
        .flatten()
    {
        links.push(e.file_name().to_string_lossy().to_string());
    }
    Made {
        netns: lab
            .names()
            .iter()
            .map(|n| lab.netns(n).to_string())
            .collect(),
        links,
        pids,
        dir: lab.dir().to_path_buf(),
    }
}

fn assert_gone(m: &Made) {
    for ns in &m.netns {
        assert!(
            !Path::new(&format!("/run/netns/{ns}")).exists(),
            "{ns} is left"
        );
    }
    for link in &m.links {
        assert!(
            !Path::new(&format!("/sys/class/net/{link}")).exists(),
            "{link} is left"
        );
    }
    for &pid in &m.pids {
        assert!(!alive(pid), "process {pid} of the lab still runs");
    }
    assert!(!m.dir.exists(), "{} is left", m.dir.display());
    let listed = ok(std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap());
    for ns in &m.netns {
        assert!(!listed.contains(ns.as_str()), "{listed}");
    }
}

#[test]
#[ignore = "needs root"]
fn dropping_the_lab_leaves_no_namespace_link_or_process() {
    let Some(lab) = Lab::or_skip(&["a", "b", "c"]) else {
        return;
    };
    // Something a test started and forgot, beside the sshds and an open ssh session.
    let mut forgotten = lab.spawn("c", &["sleep", "600"]);
    let mut session = lab.ssh("a", &["sleep", "600"]).spawn().unwrap();
    let start = Instant::now();
    while lab.pids_in("a").len() < 3 {
        assert!(start.elapsed() < Duration::from_secs(20), "no session in a");
        std::thread::sleep(Duration::from_millis(50));
    }
    let m = made(&lab);
    assert_eq!(m.links.len(), 4, "a bridge and three veths: {:?}", m.links);
    assert!(m.pids.contains(&forgotten.id()));
    assert!(m.pids.len() >= 3 + 1 + 2, "{:?}", m.pids);
    drop(lab);
    assert_gone(&m);
    // The session lost its server.
    let status = session.wait().unwrap();
    assert!(!status.success());
    // The lab killed and reaped the forgotten process: nothing is left to wait for.
    assert!(forgotten.wait().is_err());
}

#[test]
#[ignore = "needs root"]
fn a_panicking_test_leaves_nothing_either() {
    if let Err(skip) = Lab::can_build() {
        skip.report();
        return;
    }
    let m = std::sync::Mutex::new(None);
    let panicked = std::panic::catch_unwind(|| {
        let lab = Lab::new(&["x", "y"]).unwrap();
        // Left for the lab to kill and reap as it unwinds.
        #[allow(clippy::zombie_processes)]
        let _sleeper = lab.spawn("y", &["sleep", "600"]);
        *m.lock().unwrap() = Some(made(&lab));
        panic!("the test fails here");
    });
    assert!(panicked.is_err());
    assert_gone(m.lock().unwrap().as_ref().unwrap());
}

#[test]
#[ignore = "needs root"]
fn a_new_lab_sweeps_what_a_dead_process_left() {
    if let Err(skip) = Lab::can_build() {
        skip.report();
        return;
    }
    // A lab of a process that then dies: a namespace with a process in it, a bridge, a veth.
    // Its owner lives while the lab is made, or the sweep of a lab another test builds meanwhile
    // could take it half made.
    let mut owner = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let pid = owner.id();
    let ns = format!("rigorlab-{pid}-0-old");
    let (bridge, veth) = ("rlab-stale", "rlab-staleh0");
    let sh = |cmd: &str| {
        let out = std::process::Command::new("sh")
            .args(["-c", cmd])
            .output()
            .unwrap();
        assert!(out.status.success(), "{cmd}: {}", text(&out));
    };
    sh(&format!(
        "ip netns add {ns} && ip link add {bridge} type bridge && \
         ip link set {bridge} alias 'rigorlab pid={pid}' && \
         ip link add {veth} type veth peer name eth0 netns {ns} && \
         ip link set {veth} alias 'rigorlab pid={pid}' master {bridge}"
    ));
    let mut sleeper = std::process::Command::new("ip")
        .args(["netns", "exec", &ns, "sleep", "600"])
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !alive(sleeper.id())
        || std::fs::read_link(format!("/proc/{}/ns/net", sleeper.id())).unwrap()
            != Path::new(&ns_id(&ns))
    {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no sleeper in {ns}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    owner.kill().unwrap();
    owner.wait().unwrap();

    let lab = Lab::new(&["a"]).unwrap();
    assert!(!Path::new(&format!("/run/netns/{ns}")).exists());
    for link in [bridge, veth] {
        assert!(
            !Path::new(&format!("/sys/class/net/{link}")).exists(),
            "{link}"
        );
    }
    // Killed (and reaped: it was this process's child) by the sweep.
    assert!(
        !alive(sleeper.id()),
        "the stale namespace's process still runs"
    );
    assert!(sleeper.wait().is_err(), "reaped already");
    // A live process's lab is not swept: this one's sshd is still there.
    assert_eq!(ok(lab.ssh("a", &["hostname"]).output().unwrap()), "a");
}

#[test]
#[ignore = "needs root"]
fn delay_adds_latency() {
    let Some(lab) = Lab::or_skip(&["a"]) else {
        return;
    };
    let to = SocketAddr::from((lab.addr("a"), 22));
    let connect = || {
        let start = Instant::now();
        TcpStream::connect_timeout(&to, Duration::from_secs(5)).unwrap();
        start.elapsed()
    };
    let before = (0..5).map(|_| connect()).min().unwrap();
    match lab.delay("a", 100) {
        Ok(()) => {
            let after = (0..5).map(|_| connect()).min().unwrap();
            assert!(
                after >= before + Duration::from_millis(90),
                "{before:?} → {after:?}"
            );
            lab.delay("a", 0).unwrap();
            assert!(connect() < Duration::from_millis(90));
        }
        Err(why) => {
            assert!(why.needs_iptables(), "{why}");
            skip("needs iptables");
        }
    }
}

/// Timings for the lab's documentation: `cargo test --test hosts_lab -- --ignored --nocapture
/// lab_timings`.
#[test]
#[ignore = "needs root"]
fn lab_timings() {
    let start = Instant::now();
    let Some(lab) = Lab::or_skip(&["a", "b", "c"]) else {
        return;
    };
    let built = start.elapsed();
    let time = |extra: &[&str], n: u32| {
        let mut all = Vec::new();
        for _ in 0..n {
            let start = Instant::now();
            let out = std::process::Command::new("ssh")
                .arg("-F")
                .arg(lab.ssh_config_path())
                .args(extra)
                .args(["a", "true"])
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", text(&out));
            all.push(start.elapsed());
        }
        all.sort();
        all[all.len() / 2]
    };
    let plain = time(&[], 10);
    let socket = lab.dir().join("cm-%C");
    let path = format!("ControlPath={}", socket.display());
    let master = [
        "-o",
        "ControlMaster=auto",
        "-o",
        &path,
        "-o",
        "ControlPersist=60",
    ];
    let first = time(&master, 1);
    let reused = time(&master, 10);
    let _ = std::process::Command::new("ssh")
        .arg("-F")
        .arg(lab.ssh_config_path())
        .args(["-o", &path, "-O", "exit", "a"])
        .output();
    eprintln!(
        "lab timings: Lab::new for 3 hosts {built:?}; ssh `true` median of 10: plain {plain:?}, \
         ControlMaster first {first:?} then {reused:?}"
    );
}
