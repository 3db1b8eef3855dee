//! Sockets, network paths, environment, counters and git against this machine.

use crate::common;

use common::*;
use rigor_probe::*;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use testkit::skip;

#[test]
fn listener_owners_finds_our_own_listener() {
    let me = std::process::id() as i32;
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let owners = listener_owners(addr);
    assert!(owners.iter().any(|o| o.pid == me), "{owners:?}");
    // Named as /proc names this process.
    let o = owners.iter().find(|o| o.pid == me).unwrap();
    let comm = std::fs::read_to_string("/proc/self/comm").unwrap();
    assert_eq!(o.comm, comm.trim_end());
    let exe = std::env::args().next().unwrap();
    assert!(o.cmdline.starts_with(&exe), "{} vs {exe}", o.cmdline);

    // A wildcard listener answers for loopback too.
    let w = TcpListener::bind("0.0.0.0:0").unwrap();
    let port = w.local_addr().unwrap().port();
    let owners = listener_owners(SocketAddr::from(([127, 0, 0, 1], port)));
    assert!(owners.iter().any(|o| o.pid == me));

    // Nobody listens once the socket is closed.
    drop(l);
    assert!(listener_owners(addr).iter().all(|o| o.pid != me));
}

#[test]
fn listener_owners_names_another_process() {
    let mut p = python(
        "import socket,time\ns=socket.socket(socket.AF_INET6)\ns.bind(('::',0))\ns.listen()\nprint(s.getsockname()[1],flush=True)\ntime.sleep(30)",
    );
    let port: u16 = p.wait_line().trim().parse().unwrap();
    let owners = listener_owners(SocketAddr::from(([127, 0, 0, 1], port)));
    assert_eq!(owners.len(), 1, "{owners:?}");
    assert_eq!(owners[0].pid, p.pid());
    assert!(owners[0].comm.starts_with("python"));
    assert!(owners[0].cmdline.contains("socket"));
    let v6 = listener_owners(format!("[::1]:{port}").parse().unwrap());
    assert_eq!(v6.len(), 1);
}

#[test]
fn net_path_tells_loopback_other_hosts_and_local_interfaces_apart() {
    assert_eq!(net_path("127.0.0.1".parse().unwrap()), NetPath::Loopback);
    assert_eq!(net_path("127.3.4.5".parse().unwrap()), NetPath::Loopback);
    assert_eq!(net_path("::1".parse().unwrap()), NetPath::Loopback);
    assert_eq!(net_path("192.0.2.1".parse().unwrap()), NetPath::OtherHost);
    assert_eq!(net_path("2001:db8::1".parse().unwrap()), NetPath::OtherHost);
    let locals = local_addresses();
    assert!(
        locals.contains(&"127.0.0.1".parse::<IpAddr>().unwrap()),
        "{locals:?}"
    );
    match locals.iter().find(|a| !a.is_loopback()) {
        Some(ip) => assert_eq!(net_path(*ip), NetPath::LocalInterface, "{ip}"),
        None => skip("needs a non-loopback address"),
    }
}

#[test]
fn environment_fills_what_the_machine_has() {
    let env = environment();
    let json = serde_json::to_string_pretty(&env).unwrap();
    eprintln!("{json}");
    let back: Environment = serde_json::from_str(&json).unwrap();
    assert_eq!(back, env);

    assert!(env.os.is_some());
    assert!(env.kernel.is_some());
    assert!(!env.arch.is_empty());
    assert!(env.hostname.is_some());
    assert!(env.cpu_model.is_some());
    assert_eq!(env.logical_cores, online_cpus());
    let phys = env.physical_cores.unwrap();
    assert!(phys >= 1 && phys <= env.logical_cores);
    assert!(env.sockets.unwrap() >= 1);
    assert!(env.memory_mib.unwrap() > 100);
    assert!(env.memory_available_mib.unwrap() <= env.memory_mib.unwrap());
    assert!(env.aslr.is_some());
    assert!(env.load_avg_1m.is_some() && env.load_avg_15m.is_some());
    assert!(env.runnable_threads.is_some());
    assert_ne!(env.cgroup_version, "none");
    // Each optional reading is there exactly when the kernel offers its file.
    for (read, file) in [
        (env.cpu_pressure_some_avg10.is_some(), "/proc/pressure/cpu"),
        (
            env.governor.is_some(),
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
        ),
        (
            env.smt_active.is_some(),
            "/sys/devices/system/cpu/smt/active",
        ),
        (
            env.transparent_hugepages.is_some(),
            "/sys/kernel/mm/transparent_hugepage/enabled",
        ),
    ] {
        assert_eq!(read, Path::new(file).exists(), "{file}");
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    if cpuinfo.contains(" hypervisor") {
        assert!(env.virtualization.is_some());
    }
}

#[test]
fn cpu_counter_deltas_are_sane() {
    let a = cpu_counters();
    assert!(a.total > 0 && a.idle > 0);
    let busy = python("import time\nt=time.time()\nwhile time.time()-t<0.3: pass");
    std::thread::sleep(Duration::from_millis(400));
    drop(busy);
    let b = cpu_counters();
    assert!(b.total > a.total);
    let steal = b.steal_pct_since(&a);
    assert!((0.0..=100.0).contains(&steal), "steal {steal}");
    let busy = b.busy_pct_since(&a);
    assert!(busy > 0.0 && busy <= 100.0, "busy {busy}");
    assert_eq!(b.steal_pct_since(&b), 0.0);
    assert_eq!(b.throttled_since(&a).is_some(), a.throttle_count.is_some());
    if let Some(t) = b.throttled_since(&a) {
        assert!(t < 1_000_000);
    }
}

#[test]
fn git_info_reads_commit_dirty_and_branch() {
    let dir = TempDir::new("git");
    assert!(git_info(&dir.0).is_none(), "not a repository yet");
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .arg("-C")
            .arg(&dir.0)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(dir.0.join("a.txt"), "1").unwrap();
    git(&["add", "a.txt"]);
    git(&["commit", "-q", "-m", "first"]);
    let info = git_info(&dir.0).unwrap();
    assert_eq!(info.commit.len(), 40);
    assert!(info.commit.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(!info.dirty);
    assert_eq!(info.branch.as_deref(), Some("main"));

    std::fs::write(dir.0.join("untracked.txt"), "x").unwrap();
    assert!(
        !git_info(&dir.0).unwrap().dirty,
        "untracked files don't count"
    );
    std::fs::write(dir.0.join("a.txt"), "2").unwrap();
    assert!(git_info(&dir.0).unwrap().dirty);

    git(&["checkout", "-q", "--detach"]);
    assert_eq!(git_info(&dir.0).unwrap().branch, None);
}
