//! A lab of fake hosts on one machine, for tests of rigor driving hosts over SSH: one network
//! namespace per host, each joined to a bridge in the root namespace (where rigor runs) by a veth
//! pair, with an address from a private /24 of its own and its own `sshd` (a throwaway host key,
//! a throwaway client key authorized for root). `ssh -F lab.ssh_config_path() NAME CMD` runs CMD
//! inside host NAME's namespace, checked against the generated host keys.
//!
//! Each lab owns its names (`rigorlab-PID-SEQ-HOST` namespaces; `rlabN` bridge and `rlabNhI`
//! veths, labelled `rigorlab pid=PID`) and its subnet `10.213.N.0/24`: creating the bridge
//! `rlabN` claims N, so labs of parallel tests and of other test processes never share one.
//! Dropping the lab, even while a test panics, kills every process in its namespaces and deletes
//! namespaces, links and its temporary folder; [`Lab::new`] first sweeps what labs of processes
//! that no longer run left behind (killed by a signal, say). By hand: `ip netns list`, then
//! `ip netns pids NS | xargs -r kill -9; ip netns del NS` and `ip link del rlabN`.
//!
//! A lab needs root, `ip`, `/usr/sbin/sshd` and the OpenSSH client; without one, [`Lab::new`]
//! returns a [`Skip`] naming it (`needs root`, `needs ip`, `needs sshd`, `needs ssh`) for the
//! test to report as a counted skip.
#![allow(dead_code)]

mod nfqueue;

use std::collections::HashSet;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The prefix of a lab's namespace names (`rigorlab-PID-SEQ-HOST`).
const NS_PREFIX: &str = "rigorlab-";
/// The prefix of a lab's link names: bridge `rlabN`, veth `rlabNhI` (at most 15 characters).
const LINK_PREFIX: &str = "rlab";
/// The link label (`ip link set … alias`) naming the process that owns a lab's links.
const ALIAS_PREFIX: &str = "rigorlab pid=";
/// The lab subnets: `10.213.N.0/24`, the bridge `.1`, hosts from `.2`.
const NET: [u8; 2] = [10, 213];
/// How long the lab's sshds may take to accept a first login on a busy machine.
const SSHD_START: Duration = Duration::from_secs(30);
const SSHD: &str = "/usr/sbin/sshd";

/// Why a lab cannot be built on this machine, in the form a counted skip gives it
/// (`needs root`, `needs sshd`); [`Skip::report`] prints `test-skip: REASON: TEST`.
#[derive(Debug, Clone)]
pub struct Skip(pub String);

impl Skip {
    /// Prints the counted skip line for the running test; the test returns right after.
    pub fn report(&self) {
        testkit::skip(&self.0);
    }
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why [`Lab::delay`] could not delay a host's link: netem is missing and the NFQUEUE way
/// failed too. Each says what netem said first.
#[derive(Debug)]
pub enum DelayError {
    /// The NFQUEUE way needs iptables, and it is not installed.
    NoIptables { netem: String },
    /// The NFQUEUE delayer could not bind its queue.
    Nfqueue { netem: String, why: String },
    /// iptables refused the rule that sends the host's packets to the queue.
    Rule { netem: String, stderr: String },
}

impl DelayError {
    /// Whether this machine lacks a working iptables (a test skips then, as it would for root).
    pub fn needs_iptables(&self) -> bool {
        matches!(
            self,
            DelayError::NoIptables { .. } | DelayError::Rule { .. }
        )
    }
}

impl std::fmt::Display for DelayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DelayError::NoIptables { netem } => write!(
                f,
                "tc netem failed ({netem}): this kernel has no netem qdisc, and the NFQUEUE \
                 delay needs iptables (apt-get install iptables)"
            ),
            DelayError::Nfqueue { netem, why } => write!(
                f,
                "tc netem failed ({netem}); the NFQUEUE delay failed: {why}"
            ),
            DelayError::Rule { netem, stderr } => write!(
                f,
                "tc netem failed ({netem}); iptables could not add the NFQUEUE rule: {stderr}"
            ),
        }
    }
}

/// One fake host: its name in tests and ssh_config, its namespace, its link and address.
struct Host {
    name: String,
    ns: String,
    veth: String,
    addr: Ipv4Addr,
}

/// A running lab; see the module's documentation. Everything it made goes when it is dropped.
pub struct Lab {
    subnet: u8,
    bridge: String,
    hosts: Vec<Host>,
    dir: PathBuf,
    sshds: Vec<Child>,
    /// Delays made without netem: the host, its queue's delayer.
    delayers: std::sync::Mutex<Vec<(String, nfqueue::Delayer)>>,
}

impl Lab {
    /// Builds a lab with one host per name (names are short words: `a`, `load1`), each running
    /// an sshd that has accepted a first login when this returns. `Err` only when the machine
    /// cannot (see [`Skip`]); anything else that goes wrong panics, after cleaning up.
    pub fn new(names: &[&str]) -> Result<Lab, Skip> {
        Lab::can_build()?;
        assert!(!names.is_empty() && names.len() <= 250, "1 to 250 hosts");
        for n in names {
            assert!(
                !n.is_empty()
                    && n.len() <= 32
                    && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
                "host name {n:?}: letters, digits and `-`, at most 32"
            );
        }
        let unique: HashSet<_> = names.iter().collect();
        assert_eq!(
            unique.len(),
            names.len(),
            "duplicate host names in {names:?}"
        );
        sweep_stale();

        static SEQ: AtomicU32 = AtomicU32::new(0);
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let subnet = claim_subnet(pid, seq)?;
        let bridge = format!("{LINK_PREFIX}{subnet}");
        let dir = std::env::temp_dir().join(format!("{NS_PREFIX}{pid}-{seq}"));
        // From here the lab exists: dropping it (on a panic too) removes what was made so far.
        let mut lab = Lab {
            subnet,
            bridge,
            hosts: Vec::new(),
            dir,
            sshds: Vec::new(),
            delayers: Default::default(),
        };
        let _ = std::fs::remove_dir_all(&lab.dir);
        std::fs::create_dir_all(&lab.dir).unwrap();
        std::fs::set_permissions(&lab.dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        ip(&[
            "link",
            "set",
            &lab.bridge,
            "alias",
            &format!("{ALIAS_PREFIX}{pid}"),
        ]);
        ip(&[
            "addr",
            "add",
            &format!("{}/24", lab.root_addr()),
            "dev",
            &lab.bridge,
        ]);
        ip(&["link", "set", &lab.bridge, "up"]);

        for (i, name) in names.iter().enumerate() {
            let host = Host {
                name: name.to_string(),
                ns: format!("{NS_PREFIX}{pid}-{seq}-{name}"),
                veth: format!("{}h{i}", lab.bridge),
                addr: Ipv4Addr::new(NET[0], NET[1], subnet, i as u8 + 2),
            };
            let created = run("ip", &["netns", "add", &host.ns]);
            if !created.status.success() {
                let why = String::from_utf8_lossy(&created.stderr).trim().to_string();
                return Err(Skip(format!(
                    "needs network namespaces (ip netns add: {why})"
                )));
            }
            lab.hosts.push(host);
            let h = lab.hosts.last().unwrap();
            let peer = [
                "link", "add", &h.veth, "type", "veth", "peer", "name", "eth0",
            ];
            ip(&[&peer[..], &["netns", &h.ns]].concat());
            ip(&[
                "link",
                "set",
                &h.veth,
                "alias",
                &format!("{ALIAS_PREFIX}{pid}"),
            ]);
            ip(&["link", "set", &h.veth, "master", &lab.bridge, "up"]);
            let addr = format!("{}/24", h.addr);
            ip(&["-n", &h.ns, "addr", "add", &addr, "dev", "eth0"]);
            ip(&["-n", &h.ns, "link", "set", "eth0", "up"]);
            ip(&["-n", &h.ns, "link", "set", "lo", "up"]);
            let root = lab.root_addr().to_string();
            ip(&["-n", &h.ns, "route", "add", "default", "via", &root]);
        }

        lab.write_keys_and_configs();
        lab.start_sshds();
        Ok(lab)
    }

    /// Whether this machine can build a lab (root, `ip`, sshd, the OpenSSH client), without
    /// building one.
    pub fn can_build() -> Result<(), Skip> {
        preflight()
    }

    /// [`Lab::new`], reporting a skip (`test-skip: needs root: TEST`) when the machine cannot:
    /// `let Some(lab) = Lab::or_skip(&["a", "b"]) else { return };`
    pub fn or_skip(names: &[&str]) -> Option<Lab> {
        match Lab::new(names) {
            Ok(lab) => Some(lab),
            Err(skip) => {
                skip.report();
                None
            }
        }
    }

    fn host(&self, name: &str) -> &Host {
        self.hosts
            .iter()
            .find(|h| h.name == name)
            .unwrap_or_else(|| panic!("no host {name:?} in this lab"))
    }

    /// The names of the hosts, in the order given.
    pub fn names(&self) -> Vec<&str> {
        self.hosts.iter().map(|h| h.name.as_str()).collect()
    }

    /// Host `name`'s address, reachable from the root namespace and from every other host.
    pub fn addr(&self, name: &str) -> Ipv4Addr {
        self.host(name).addr
    }

    /// The root namespace's address on the lab's bridge: where hosts reach a server run by the
    /// test itself (their default route goes there too).
    pub fn root_addr(&self) -> Ipv4Addr {
        Ipv4Addr::new(NET[0], NET[1], self.subnet, 1)
    }

    /// The name of host `name`'s network namespace (for `ip netns exec`, `ip -n`).
    pub fn netns(&self, name: &str) -> &str {
        &self.host(name).ns
    }

    /// The lab's temporary folder (keys, configs, sshd logs); deleted with the lab.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// An ssh_config with a `Host NAME` block per host (its address, root, the lab's key and
    /// known hosts, strict host-key checking, BatchMode): `ssh -F PATH NAME CMD`, or
    /// `options = ["-F", PATH]` in rigor.toml. Its `Host *` settings also apply to
    /// `ssh -F PATH root@ADDR`.
    pub fn ssh_config_path(&self) -> PathBuf {
        self.dir.join("ssh_config")
    }

    /// The private key root's `authorized_keys` holds on every host (ed25519, no passphrase).
    pub fn identity_path(&self) -> PathBuf {
        self.dir.join("id_ed25519")
    }

    /// A known_hosts file listing every host's key under its name and its address.
    pub fn known_hosts_path(&self) -> PathBuf {
        self.dir.join("known_hosts")
    }

    /// The log (stderr) of host `name`'s sshd.
    pub fn sshd_log_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("sshd_{name}.log"))
    }

    /// `ip netns exec NS argv…`: a command to run inside host `name`'s namespace (the machine's
    /// files, users and PID space; the host's network), for the test to configure and run.
    pub fn command(&self, name: &str, argv: &[&str]) -> Command {
        assert!(!argv.is_empty(), "no command to run in {name}");
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", self.netns(name)]).args(argv);
        cmd
    }

    /// Runs `argv` inside host `name`'s namespace to the end; its output.
    pub fn exec(&self, name: &str, argv: &[&str]) -> Output {
        self.command(name, argv)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("ip netns exec {name} {argv:?}: {e}"))
    }

    /// Starts `argv` inside host `name`'s namespace (stdin closed, output inherited); `ip netns
    /// exec` execs it, so the child's PID is the command's. The lab kills it when dropped, if it
    /// still runs.
    pub fn spawn(&self, name: &str, argv: &[&str]) -> Child {
        self.command(name, argv)
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("ip netns exec {name} {argv:?}: {e}"))
    }

    /// Runs `f` on a thread of its own inside host `name`'s network namespace and returns what it
    /// returns: sockets `f` opens are the host's (a client or server in Rust, no external tool).
    pub fn in_ns<T: Send>(&self, name: &str, f: impl FnOnce() -> T + Send) -> T {
        let path = format!("/run/netns/{}", self.netns(name));
        let ns = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        std::thread::scope(|s| {
            s.spawn(move || {
                nix::sched::setns(&ns, nix::sched::CloneFlags::CLONE_NEWNET)
                    .unwrap_or_else(|e| panic!("setns {path}: {e}"));
                f()
            })
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
    }

    /// `ssh -F CONFIG NAME argv…` with the lab's config: runs through host `name`'s sshd.
    pub fn ssh(&self, name: &str, argv: &[&str]) -> Command {
        let mut cmd = Command::new("ssh");
        cmd.arg("-F")
            .arg(self.ssh_config_path())
            .arg(name)
            .args(argv)
            .stdin(Stdio::null());
        cmd
    }

    /// The live processes whose network namespace is host `name`'s (its sshd, its sessions,
    /// whatever a test started there), for "nothing is left running" checks.
    pub fn pids_in(&self, name: &str) -> Vec<u32> {
        pids_in_ns(self.netns(name))
    }

    /// Breaks host `name`'s link (the veth's root end goes down): from then on nothing reaches
    /// it and it reaches nothing, as if its cable were pulled; connections hang until their
    /// timeouts. [`Lab::mend`] undoes it.
    pub fn cut(&self, name: &str) {
        ip(&["link", "set", &self.host(name).veth, "down"]);
    }

    /// Undoes [`Lab::cut`]: host `name`'s link comes back up.
    pub fn mend(&self, name: &str) {
        ip(&["link", "set", &self.host(name).veth, "up"]);
    }

    /// Delays everything host `name` sends by `ms` milliseconds (0: no delay): with the netem
    /// qdisc on its side of the link where the kernel has it, else by an NFQUEUE that this
    /// process holds each packet in for the delay (needs `iptables`). `Err` says why neither
    /// works.
    pub fn delay(&self, name: &str, ms: u32) -> Result<(), DelayError> {
        let ns = self.netns(name).to_string();
        let queue = 100 + self.hosts.iter().position(|h| h.name == name).unwrap() as u16;
        let rule = |op: &str| {
            let q = queue.to_string();
            run(
                "ip",
                &[
                    "netns",
                    "exec",
                    &ns,
                    "iptables",
                    "-w",
                    op,
                    "OUTPUT",
                    "-j",
                    "NFQUEUE",
                    "--queue-num",
                    &q,
                    "--queue-bypass",
                ],
            )
        };
        let mut delayers = self.delayers.lock().unwrap();
        if let Some(i) = delayers.iter().position(|(h, _)| h == name) {
            let _ = rule("-D");
            delayers.swap_remove(i);
        }
        let out = if ms == 0 {
            let out = run("tc", &["-n", &ns, "qdisc", "del", "dev", "eth0", "root"]);
            let err = String::from_utf8_lossy(&out.stderr);
            // No qdisc to delete is no delay already.
            if !out.status.success() && err.contains("Cannot delete qdisc with handle of zero") {
                return Ok(());
            }
            out
        } else {
            let delay = format!("{ms}ms");
            let args = ["-n", ns.as_str(), "qdisc", "replace", "dev", "eth0", "root"];
            run("tc", &[&args[..], &["netem", "delay", &delay]].concat())
        };
        if out.status.success() {
            return Ok(());
        }
        let netem = String::from_utf8_lossy(&out.stderr).trim().to_string();
        if ms == 0 {
            return Ok(());
        }
        if !has("iptables") {
            return Err(DelayError::NoIptables { netem });
        }
        let d = nfqueue::Delayer::start(
            &format!("/run/netns/{ns}"),
            queue,
            Duration::from_millis(ms as u64),
        )
        .map_err(|e| DelayError::Nfqueue {
            netem: netem.clone(),
            why: format!("{e:#}"),
        })?;
        let out = rule("-I");
        if !out.status.success() {
            return Err(DelayError::Rule {
                netem,
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        delayers.push((name.to_string(), d));
        Ok(())
    }

    fn write_keys_and_configs(&self) {
        let d = &self.dir;
        keygen(&self.identity_path());
        std::fs::copy(d.join("id_ed25519.pub"), d.join("authorized_keys")).unwrap();
        let mut known = String::new();
        let mut client = String::new();
        for h in &self.hosts {
            let key = d.join(format!("host_{}", h.name));
            keygen(&key);
            let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
            let mut fields = public.split_whitespace();
            let (kind, blob) = (fields.next().unwrap(), fields.next().unwrap());
            known.push_str(&format!("{},{} {kind} {blob}\n", h.name, h.addr));
            client.push_str(&format!("Host {}\n  HostName {}\n\n", h.name, h.addr));
            let sshd = format!(
                "# sshd of lab host {name} (network namespace {ns})\n\
                 Port 22\n\
                 ListenAddress 0.0.0.0\n\
                 HostKey {key}\n\
                 PidFile {d}/sshd_{name}.pid\n\
                 AuthorizedKeysFile {d}/authorized_keys\n\
                 PermitRootLogin prohibit-password\n\
                 PubkeyAuthentication yes\n\
                 PasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\n\
                 UsePAM no\n\
                 UseDNS no\n\
                 StrictModes no\n\
                 PrintMotd no\n\
                 PrintLastLog no\n\
                 MaxStartups 100\n\
                 MaxSessions 100\n\
                 LogLevel INFO\n",
                name = h.name,
                ns = h.ns,
                key = key.display(),
                d = d.display(),
            );
            std::fs::write(d.join(format!("sshd_{}.conf", h.name)), sshd).unwrap();
        }
        std::fs::write(self.known_hosts_path(), known).unwrap();
        client.push_str(&format!(
            "Host *\n\
             \x20 User root\n\
             \x20 IdentityFile {id}\n\
             \x20 IdentitiesOnly yes\n\
             \x20 UserKnownHostsFile {known}\n\
             \x20 GlobalKnownHostsFile /dev/null\n\
             \x20 StrictHostKeyChecking yes\n\
             \x20 CheckHostIP no\n\
             \x20 BatchMode yes\n\
             \x20 ConnectTimeout 5\n\
             \x20 LogLevel ERROR\n",
            id = self.identity_path().display(),
            known = self.known_hosts_path().display(),
        ));
        std::fs::write(self.ssh_config_path(), client).unwrap();
    }

    /// Starts each host's sshd (in its network namespace, and a UTS namespace of its own whose
    /// hostname is the host's name, so `ssh NAME hostname` says where it ran) and waits until
    /// each accepts a login.
    fn start_sshds(&mut self) {
        // The privilege-separation folder sshd insists on; the system's sshd uses the same one.
        if !Path::new("/run/sshd").is_dir() {
            std::fs::create_dir_all("/run/sshd").unwrap();
            std::fs::set_permissions("/run/sshd", std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        for i in 0..self.hosts.len() {
            let h = &self.hosts[i];
            let conf = self.dir.join(format!("sshd_{}.conf", h.name));
            let log = std::fs::File::create(self.sshd_log_path(&h.name)).unwrap();
            // `nsenter --net` rather than `ip netns exec`: only the network changes, so the
            // host sees the machine's /sys (its cgroups) as a real host sees its own.
            let child = Command::new("nsenter")
                .arg(format!("--net=/run/netns/{}", h.ns))
                .args(["--", "unshare", "--uts", "sh", "-c"])
                .arg(r#"hostname "$0" && exec "$1" -D -e -f "$2""#)
                .arg(&h.name)
                .arg(SSHD)
                .arg(&conf)
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .expect("start sshd");
            self.sshds.push(child);
        }
        let start = Instant::now();
        // Each sshd listens first, then takes one login, all hosts at once.
        let lab = &*self;
        let failures: Vec<String> = std::thread::scope(|s| {
            let waits: Vec<_> = lab
                .hosts
                .iter()
                .map(|h| s.spawn(move || lab.wait_for_login(h, start)))
                .collect();
            waits
                .into_iter()
                .filter_map(|w| w.join().unwrap().err().map(|e| e.to_string()))
                .collect()
        });
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    fn wait_for_login(&self, h: &Host, start: Instant) -> anyhow::Result<()> {
        let to = SocketAddr::from((h.addr, 22));
        let mut last = String::new();
        while start.elapsed() < SSHD_START {
            if TcpStream::connect_timeout(&to, Duration::from_millis(500)).is_ok() {
                let out = self.ssh(&h.name, &["true"]).output().expect("run ssh");
                if out.status.success() {
                    return Ok(());
                }
                last = String::from_utf8_lossy(&out.stderr).trim().to_string();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let log = std::fs::read_to_string(self.sshd_log_path(&h.name)).unwrap_or_default();
        anyhow::bail!(
            "the sshd of lab host {} ({}) took no login in {SSHD_START:?}; ssh said: {last}\n\
             sshd log:\n{log}",
            h.name,
            h.addr
        )
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // Delayers first: their threads hold sockets in the namespaces about to go.
        self.delayers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        for h in &self.hosts {
            kill_all_in(&h.ns);
        }
        // Reaped already with the rest of their namespace's processes (a kill here could hit a
        // reused PID).
        for c in &mut self.sshds {
            let _ = c.try_wait();
        }
        for h in &self.hosts {
            // The root end takes the namespace's end with it.
            quiet("ip", &["link", "del", &h.veth]);
            quiet("ip", &["netns", "del", &h.ns]);
        }
        quiet("ip", &["link", "del", &self.bridge]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether this machine can build a lab: root, `ip`, sshd, the ssh client and ssh-keygen.
fn preflight() -> Result<(), Skip> {
    if !testkit::is_root() {
        return Err(Skip("needs root".into()));
    }
    let runs = |program: &str, arg: &str| {
        Command::new(program)
            .arg(arg)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    };
    if !runs("ip", "-V") {
        return Err(Skip("needs ip".into()));
    }
    if !Path::new(SSHD).is_file() {
        return Err(Skip("needs sshd".into()));
    }
    if !runs("ssh", "-V") || !runs("ssh-keygen", "-?") {
        return Err(Skip("needs ssh".into()));
    }
    Ok(())
}

/// Claims a free subnet for this lab by creating its bridge (`rlabN` for `10.213.N.0/24`): a
/// second creator of the same name fails, so two labs never share one. Subnets some route of
/// the machine already covers are passed over.
fn claim_subnet(pid: u32, seq: u32) -> Result<u8, Skip> {
    let first = (pid.wrapping_mul(31).wrapping_add(seq.wrapping_mul(7))) % 256;
    for k in 0..256 {
        let n = ((first + k) % 256) as u8;
        let prefix = format!("{}.{}.{n}.0/24", NET[0], NET[1]);
        let routes = run("ip", &["-4", "route", "show", "match", &prefix]);
        let taken = String::from_utf8_lossy(&routes.stdout)
            .lines()
            .any(|l| !l.starts_with("default"));
        if taken {
            continue;
        }
        let bridge = format!("{LINK_PREFIX}{n}");
        let out = run("ip", &["link", "add", &bridge, "type", "bridge"]);
        if out.status.success() {
            return Ok(n);
        }
        let err = String::from_utf8_lossy(&out.stderr);
        if !err.contains("exists") {
            return Err(Skip(format!(
                "needs network namespaces (ip link add {bridge} type bridge: {})",
                err.trim()
            )));
        }
    }
    panic!("no free lab subnet among {}.{}.0-255.0/24", NET[0], NET[1]);
}

/// Removes what labs of processes that no longer run left behind: their namespaces (killing
/// what still runs there) and their links.
fn sweep_stale() {
    let dead = |pid: &str| {
        pid.parse::<u32>()
            .is_ok_and(|p| !Path::new(&format!("/proc/{p}")).exists())
    };
    if let Ok(entries) = std::fs::read_dir("/run/netns") {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let Some(rest) = name.strip_prefix(NS_PREFIX) else {
                continue;
            };
            if dead(rest.split('-').next().unwrap_or_default()) {
                kill_all_in(&name);
                quiet("ip", &["netns", "del", &name]);
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir("/sys/class/net") {
        let mut links: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| n.starts_with(LINK_PREFIX))
            .collect();
        // Veths (`rlabNhI`) before their bridge (`rlabN`).
        links.sort_by_key(|n| std::cmp::Reverse(n.len()));
        for link in links {
            let alias = std::fs::read_to_string(format!("/sys/class/net/{link}/ifalias"))
                .unwrap_or_default();
            if alias.trim().strip_prefix(ALIAS_PREFIX).is_some_and(dead) {
                quiet("ip", &["link", "del", &link]);
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if let Some(rest) = name.strip_prefix(NS_PREFIX) {
                if dead(rest.split('-').next().unwrap_or_default()) {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
    }
}

/// The live processes in network namespace `ns` (by the inode of `/run/netns/NS`).
fn pids_in_ns(ns: &str) -> Vec<u32> {
    let Ok(meta) = std::fs::metadata(format!("/run/netns/{ns}")) else {
        return Vec::new();
    };
    let want = format!("net:[{}]", meta.ino());
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        // A zombie has no namespace links any more: only live processes count.
        if std::fs::read_link(format!("/proc/{pid}/ns/net"))
            .is_ok_and(|l| l.to_string_lossy() == want)
        {
            out.push(pid);
        }
    }
    out
}

/// SIGKILLs every process in network namespace `ns` until none is left, and reaps those that
/// were this process's children (`lab.spawn`'s): a `Child` of theirs then fails to `wait`.
fn kill_all_in(ns: &str) {
    use nix::sys::signal::{kill, Signal};
    use nix::sys::wait::waitpid;
    use nix::unistd::Pid;
    let me = std::process::id();
    let mut children = HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let pids = pids_in_ns(ns);
        if pids.is_empty() {
            break;
        }
        if Instant::now() > deadline {
            eprintln!("lab: processes {pids:?} in {ns} outlived SIGKILL for 10 s");
            break;
        }
        for &p in &pids {
            if parent_of(p) == Some(me) {
                children.insert(p);
            }
            let _ = kill(Pid::from_raw(p as i32), Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Killed, so each returns at once (or fails: someone else waited for it first).
    for p in children {
        let _ = waitpid(Pid::from_raw(p as i32), None);
    }
}

/// The parent PID of a live process.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Generates an ed25519 key pair without a passphrase at `path` (and `path.pub`).
fn keygen(path: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "rigor-lab", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .expect("run ssh-keygen");
    assert!(
        out.status.success(),
        "ssh-keygen {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether `program` runs here (found on PATH).
fn has(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program} {}: {e}", args.join(" ")))
}

/// Runs `ip ARGS`, which must succeed.
fn ip(args: &[&str]) {
    let out = run("ip", args);
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// Runs a clean-up command whose failure (the thing is gone already) does not matter.
fn quiet(program: &str, args: &[&str]) {
    let _ = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Starts `rigor run -p lab -i ITERATIONS --json result.json --keep-noisy` in `dir`, its output
/// piped, for a test that acts on the hosts while the run goes on.
pub fn spawn_lab_run(dir: &Path, iterations: u32) -> Child {
    crate::common::rigor_command(
        dir,
        &[
            "run",
            "-p",
            "lab",
            "-i",
            &iterations.to_string(),
            "--json",
            "result.json",
            "--keep-noisy",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap()
}
