//! A cgroup per application run: the kernel's own account of the app's memory, page cache
//! included, and a way to kill every process the app left behind.

use crate::procfs::{keyed_value, read, read_u64};
use nix::errno::Errno;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A cgroup rigor created (v2, or v1 memory with cpuacct when available).
/// Cloning copies the paths only; the cgroup itself is removed once, by [`Cgroup::remove`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cgroup {
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    V2 {
        dir: PathBuf,
    },
    V1 {
        memory: PathBuf,
        cpuacct: Option<PathBuf>,
    },
}

/// Pre-opened cgroup.procs files, so a child between fork and exec can join the cgroup with
/// async-signal-safe `write(2)` calls only (no allocation in `pre_exec`).
#[derive(Debug)]
pub struct CgroupJoiner {
    files: Vec<File>,
}

impl CgroupJoiner {
    /// Moves the calling process into the cgroup (writes "0", meaning "me", to each file).
    /// Meant for `CommandExt::pre_exec`, whose `Err` fails the spawn: an app that could not
    /// join is never measured as if it had. Stops at the first file the kernel refuses.
    pub fn join_self(&self) -> io::Result<()> {
        for f in &self.files {
            // A bare write(2): no allocation, as between fork and exec.
            match nix::unistd::write(f, b"0") {
                Ok(1) => {}
                Ok(_) => return Err(io::Error::from(ErrorKind::WriteZero)),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}

/// Why no cgroup could be made: the report shows it to explain the missing cgroup figures.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    /// The name is empty, `.`, `..` or holds a `/`.
    #[error("invalid cgroup name {name:?}")]
    InvalidName { name: String },
    /// Neither v2 nor v1 worked: why not, for each tried.
    #[error("no cgroup could be made: {}", .reasons.join("; "))]
    NoneMade { reasons: Vec<String> },
    /// The v2 parent offers no memory controller.
    #[error("cgroup v2 at {}: no memory controller available (it may be bound to a v1 hierarchy)", .parent.display())]
    NoMemoryController { parent: PathBuf },
    /// The v2 parent refused to enable memory for its children; `busy` when it holds processes.
    #[error(
        "cgroup v2: cannot enable memory for children of {}: {source}{}",
        .parent.display(),
        if *.busy {
            " (our cgroup holds processes, so v2 forbids controllers for its children; \
             start rigor in its own delegated cgroup, e.g. systemd-run --scope -p Delegate=yes)"
        } else {
            ""
        }
    )]
    EnableMemory {
        parent: PathBuf,
        source: io::Error,
        busy: bool,
    },
    /// The v2 directory was made but could not be used.
    #[error("cgroup v2: {0}")]
    V2(Box<CgroupError>),
    /// The new v2 cgroup lacks memory.current.
    #[error("cgroup v2: {} has no memory.current after creation", .dir.display())]
    NoMemoryCurrent { dir: PathBuf },
    /// No v1 hierarchy carries the controller.
    #[error("no cgroup v1 {controller} hierarchy mounted")]
    NoV1Mount { controller: String },
    /// /proc/self/cgroup lists no cgroup of ours for the controller.
    #[error("/proc/self/cgroup has no {controller} entry")]
    NoV1Entry { controller: String },
    /// Our cgroup of the controller is not reachable through its mount.
    #[error("our {controller} cgroup {path} is outside the mount at {}", .mount.display())]
    V1OutsideMount {
        controller: String,
        path: String,
        mount: PathBuf,
    },
    /// A leftover directory of the same name could not be replaced.
    #[error("{} exists and cannot be replaced: {source}", .dir.display())]
    Replace { dir: PathBuf, source: io::Error },
    /// mkdir failed.
    #[error("cannot create {}: {source} (rigor needs write access to its own cgroup: run as root or in a delegated cgroup)", .dir.display())]
    Create { dir: PathBuf, source: io::Error },
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

impl Cgroup {
    /// A name unique to this rigor process and call: `rigor-<pid>-<n>`.
    pub fn unique_name() -> String {
        format!(
            "rigor-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// Creates a cgroup named [`Cgroup::unique_name`].
    pub fn create_unique() -> Result<Cgroup, CgroupError> {
        Self::create(&Self::unique_name())
    }

    /// Creates `name` under the cgroup rigor itself runs in: cgroup v2 when it has the memory
    /// controller, else v1 memory (+cpuacct). The error says why none could be made, so the
    /// report can explain the missing cgroup figures.
    pub fn create(name: &str) -> Result<Cgroup, CgroupError> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(CgroupError::InvalidName {
                name: name.to_string(),
            });
        }
        let mounts = cgroup_mounts();
        let own = own_cgroups();
        let mut why = Vec::new();

        if let Some(m) = mounts.iter().find(|m| m.fstype == "cgroup2") {
            match own
                .iter()
                .find(|c| c.hierarchy == 0 && c.controllers.is_empty())
            {
                Some(c) => match m.dir_for(&c.path) {
                    Some(parent) => match create_v2(&parent, name) {
                        Ok(cg) => return Ok(cg),
                        Err(e) => why.push(e.to_string()),
                    },
                    None => why.push(format!(
                        "cgroup v2: our cgroup {} is outside the mount at {}",
                        c.path,
                        m.point.display()
                    )),
                },
                None => why.push("cgroup v2 mounted but /proc/self/cgroup has no v2 entry".into()),
            }
        }

        let v1 = |ctrl: &str| -> Result<PathBuf, CgroupError> {
            let controller = ctrl.to_string();
            let m = mounts
                .iter()
                .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == ctrl))
                .ok_or_else(|| CgroupError::NoV1Mount {
                    controller: controller.clone(),
                })?;
            let c = own
                .iter()
                .find(|c| c.hierarchy != 0 && c.controllers.iter().any(|x| x == ctrl))
                .ok_or_else(|| CgroupError::NoV1Entry {
                    controller: controller.clone(),
                })?;
            let parent = m
                .dir_for(&c.path)
                .ok_or_else(|| CgroupError::V1OutsideMount {
                    controller,
                    path: c.path.clone(),
                    mount: m.point.clone(),
                })?;
            make_dir(&parent.join(name))
        };
        match v1("memory") {
            Ok(memory) => {
                let cpuacct = v1("cpuacct").ok();
                return Ok(Cgroup {
                    kind: Kind::V1 { memory, cpuacct },
                });
            }
            Err(e) => why.push(format!("cgroup v1: {e}")),
        }
        Err(CgroupError::NoneMade { reasons: why })
    }

    /// The cgroup another process already runs in (a container's, made by its engine), read
    /// the way [`Cgroup::create`] chooses: v2 when it carries memory, else v1 memory
    /// (+cpuacct). Figures come from it as from a cgroup rigor made; `None` when the process
    /// is gone or its cgroup has no memory accounting rigor can read.
    pub fn of_process(pid: i32) -> Option<Cgroup> {
        let mounts = cgroup_mounts();
        let theirs = cgroups_of(&format!("/proc/{pid}/cgroup"));
        if let Some(m) = mounts.iter().find(|m| m.fstype == "cgroup2") {
            let v2 = theirs
                .iter()
                .find(|c| c.hierarchy == 0 && c.controllers.is_empty())
                .and_then(|c| m.dir_for(&c.path))
                .filter(|d| d.join("memory.current").exists());
            if let Some(dir) = v2 {
                return Some(Cgroup {
                    kind: Kind::V2 { dir },
                });
            }
        }
        let v1 = |ctrl: &str| -> Option<PathBuf> {
            let m = mounts
                .iter()
                .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == ctrl))?;
            let c = theirs
                .iter()
                .find(|c| c.hierarchy != 0 && c.controllers.iter().any(|x| x == ctrl))?;
            m.dir_for(&c.path).filter(|d| d.is_dir())
        };
        let memory = v1("memory").filter(|d| d.join("memory.usage_in_bytes").exists())?;
        Some(Cgroup {
            kind: Kind::V1 {
                memory,
                cpuacct: v1("cpuacct"),
            },
        })
    }

    /// 2 or 1.
    pub fn version(&self) -> u8 {
        match self.kind {
            Kind::V2 { .. } => 2,
            Kind::V1 { .. } => 1,
        }
    }

    /// The cgroup.procs files a process must be written to in order to join every hierarchy.
    pub fn procs_path(&self) -> Vec<PathBuf> {
        self.dirs().iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// Opens the procs files now, for joining from `pre_exec` (see [`CgroupJoiner`]).
    pub fn joiner(&self) -> io::Result<CgroupJoiner> {
        let files = self
            .procs_path()
            .iter()
            .map(|p| OpenOptions::new().write(true).open(p))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(CgroupJoiner { files })
    }

    /// Moves a process (and all its threads) into the cgroup.
    pub fn add_pid(&self, pid: i32) -> io::Result<()> {
        for p in self.procs_path() {
            // One write per pid: cgroup.procs takes a single id per write(2).
            let mut f = OpenOptions::new().write(true).open(&p)?;
            f.write_all(pid.to_string().as_bytes())?;
        }
        Ok(())
    }

    /// Memory charged to the cgroup (anonymous, page cache, kernel): v2 memory.current,
    /// v1 memory.usage_in_bytes.
    pub fn memory_bytes(&self) -> Option<u64> {
        match &self.kind {
            Kind::V2 { dir } => read_u64(dir.join("memory.current")),
            Kind::V1 { memory, .. } => read_u64(memory.join("memory.usage_in_bytes")),
        }
    }

    /// Highest memory usage the kernel saw (v2 memory.peak, kernel 5.19+; v1
    /// memory.max_usage_in_bytes): catches peaks between two samples.
    pub fn peak_memory_bytes(&self) -> Option<u64> {
        match &self.kind {
            Kind::V2 { dir } => read_u64(dir.join("memory.peak")),
            Kind::V1 { memory, .. } => read_u64(memory.join("memory.max_usage_in_bytes")),
        }
    }

    /// The page-cache part of the cgroup's memory (v2 `file`, v1 `total_cache`): files the app
    /// read or wrote, which are the kernel's memory rather than the app's.
    pub fn page_cache_bytes(&self) -> Option<u64> {
        self.stat(&["file"], &["total_cache", "cache"])
    }

    /// The anonymous part (heap, stacks) of the cgroup's memory (v2 `anon`, v1 `total_rss`).
    pub fn anon_bytes(&self) -> Option<u64> {
        self.stat(&["anon"], &["total_rss", "rss"])
    }

    /// CPU time used by the cgroup's processes, dead ones included (v2 cpu.stat usage_usec,
    /// v1 cpuacct.usage): a cross-check for the tree sampler, which loses exited children.
    pub fn cpu_usage_ns(&self) -> Option<u64> {
        match &self.kind {
            Kind::V2 { dir } => {
                keyed_value(&read(dir.join("cpu.stat"))?, "usage_usec").map(|u| u * 1000)
            }
            Kind::V1 { cpuacct, .. } => read_u64(cpuacct.as_ref()?.join("cpuacct.usage")),
        }
    }

    fn stat(&self, v2: &[&str], v1: &[&str]) -> Option<u64> {
        let (dir, keys) = match &self.kind {
            Kind::V2 { dir } => (dir, v2),
            Kind::V1 { memory, .. } => (memory, v1),
        };
        let text = read(dir.join("memory.stat"))?;
        keys.iter().find_map(|k| keyed_value(&text, k))
    }

    /// The processes currently in the cgroup.
    pub fn pids(&self) -> Vec<i32> {
        let dir = self.main_dir();
        read(dir.join("cgroup.procs"))
            .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// SIGKILLs every process in the cgroup (cgroup.kill where the kernel has it) and waits up
    /// to two seconds for them to leave, so no orphan survives an iteration.
    pub fn kill_all(&self) {
        if let Kind::V2 { dir } = &self.kind {
            let _ = fs::write(dir.join("cgroup.kill"), "1");
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let pids = self.pids();
            if pids.is_empty() || Instant::now() > deadline {
                break;
            }
            for pid in pids {
                // One that exited meanwhile is what we wanted.
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Deletes the cgroup (after [`Cgroup::kill_all`]); retries briefly while exiting
    /// processes are still being released.
    pub fn remove(self) -> io::Result<()> {
        let mut result = Ok(());
        for dir in self.dirs() {
            let deadline = Instant::now() + Duration::from_secs(2);
            loop {
                match fs::remove_dir(&dir) {
                    Ok(()) => break,
                    Err(e) if e.kind() == ErrorKind::NotFound => break,
                    Err(e)
                        if e.raw_os_error() == Some(Errno::EBUSY as i32)
                            && Instant::now() < deadline =>
                    {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    Err(e) => {
                        result = Err(io::Error::new(
                            e.kind(),
                            format!("removing {}: {e}", dir.display()),
                        ));
                        break;
                    }
                }
            }
        }
        result
    }

    /// One line for logs and reports: version and paths.
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::V2 { dir } => format!("cgroup v2 {}", dir.display()),
            Kind::V1 { memory, cpuacct } => match cpuacct {
                Some(c) => format!(
                    "cgroup v1 memory {} + cpuacct {}",
                    memory.display(),
                    c.display()
                ),
                None => format!("cgroup v1 memory {}", memory.display()),
            },
        }
    }

    fn main_dir(&self) -> &Path {
        match &self.kind {
            Kind::V2 { dir } => dir,
            Kind::V1 { memory, .. } => memory,
        }
    }

    fn dirs(&self) -> Vec<PathBuf> {
        match &self.kind {
            Kind::V2 { dir } => vec![dir.clone()],
            Kind::V1 { memory, cpuacct } => std::iter::once(memory.clone())
                .chain(cpuacct.clone())
                .collect(),
        }
    }
}

fn create_v2(parent: &Path, name: &str) -> Result<Cgroup, CgroupError> {
    let controllers = read(parent.join("cgroup.controllers")).unwrap_or_default();
    if !controllers.split_whitespace().any(|c| c == "memory") {
        return Err(CgroupError::NoMemoryController {
            parent: parent.to_path_buf(),
        });
    }
    let subtree = read(parent.join("cgroup.subtree_control")).unwrap_or_default();
    if !subtree.split_whitespace().any(|c| c == "memory") {
        if let Err(e) = fs::write(parent.join("cgroup.subtree_control"), "+memory") {
            return Err(CgroupError::EnableMemory {
                parent: parent.to_path_buf(),
                busy: e.raw_os_error() == Some(Errno::EBUSY as i32),
                source: e,
            });
        }
    }
    let dir = make_dir(&parent.join(name)).map_err(|e| CgroupError::V2(Box::new(e)))?;
    if !dir.join("memory.current").exists() {
        let _ = fs::remove_dir(&dir);
        return Err(CgroupError::NoMemoryCurrent { dir });
    }
    Ok(Cgroup {
        kind: Kind::V2 { dir },
    })
}

/// mkdir, replacing an empty leftover of an earlier run with the same name.
fn make_dir(dir: &Path) -> Result<PathBuf, CgroupError> {
    match fs::create_dir(dir) {
        Ok(()) => Ok(dir.to_path_buf()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => fs::remove_dir(dir)
            .and_then(|_| fs::create_dir(dir))
            .map(|_| dir.to_path_buf())
            .map_err(|source| CgroupError::Replace {
                dir: dir.to_path_buf(),
                source,
            }),
        Err(source) => Err(CgroupError::Create {
            dir: dir.to_path_buf(),
            source,
        }),
    }
}

/// How the machine's cgroups are laid out: `v2`, `v1 (hybrid, …)`, `v1`, or `none`.
pub fn cgroup_layout() -> String {
    let mounts = cgroup_mounts();
    let v2 = mounts.iter().find(|m| m.fstype == "cgroup2");
    let v1 = mounts.iter().any(|m| m.fstype == "cgroup");
    match (v2, v1) {
        (Some(_), false) => "v2".into(),
        (Some(m), true) => format!("v1 (hybrid, cgroup2 at {})", m.point.display()),
        (None, true) => "v1".into(),
        (None, false) => "none".into(),
    }
}

#[derive(Debug)]
struct Mount {
    root: String,
    point: PathBuf,
    fstype: String,
    options: String,
}

impl Mount {
    /// Directory of cgroup `path` (as in /proc/self/cgroup) under this mount.
    fn dir_for(&self, path: &str) -> Option<PathBuf> {
        let rel = if self.root == "/" {
            path.strip_prefix('/').unwrap_or(path)
        } else {
            let rest = path.strip_prefix(self.root.as_str())?;
            if !(rest.is_empty() || rest.starts_with('/')) {
                return None;
            }
            rest.trim_start_matches('/')
        };
        if rel.split('/').any(|c| c == "..") {
            return None;
        }
        Some(if rel.is_empty() {
            self.point.clone()
        } else {
            self.point.join(rel)
        })
    }
}

/// cgroup and cgroup2 mounts from /proc/self/mountinfo.
fn cgroup_mounts() -> Vec<Mount> {
    let Some(text) = read("/proc/self/mountinfo") else {
        return Vec::new();
    };
    text.lines().filter_map(parse_mountinfo_line).collect()
}

fn parse_mountinfo_line(line: &str) -> Option<Mount> {
    let (pre, post) = line.split_once(" - ")?;
    let pre: Vec<&str> = pre.split(' ').collect();
    let mut post = post.split(' ');
    let fstype = post.next()?;
    if fstype != "cgroup" && fstype != "cgroup2" {
        return None;
    }
    let _source = post.next()?;
    Some(Mount {
        root: unescape(pre.get(3)?),
        point: PathBuf::from(unescape(pre.get(4)?)),
        fstype: fstype.to_string(),
        options: post.next().unwrap_or("").to_string(),
    })
}

/// mountinfo escapes space, tab, newline and backslash as \ooo.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

struct OwnCgroup {
    hierarchy: u32,
    controllers: Vec<String>,
    path: String,
}

/// The lines of /proc/self/cgroup: `hierarchy-id:controllers:path`.
fn own_cgroups() -> Vec<OwnCgroup> {
    cgroups_of("/proc/self/cgroup")
}

/// The lines of a /proc/PID/cgroup file.
fn cgroups_of(file: &str) -> Vec<OwnCgroup> {
    let Some(text) = read(file) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let hierarchy = parts.next()?.parse().ok()?;
            let controllers = parts
                .next()?
                .split(',')
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect();
            Some(OwnCgroup {
                hierarchy,
                controllers,
                path: parts.next()?.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_without_memory_controller_says_so() {
        let unified = Path::new("/sys/fs/cgroup/unified");
        let controllers = read(unified.join("cgroup.controllers"));
        if controllers.is_some_and(|c| !c.contains("memory")) {
            let why = create_v2(unified, "rigor-never-made")
                .unwrap_err()
                .to_string();
            assert!(why.contains("no memory controller"), "{why}");
            assert!(!unified.join("rigor-never-made").exists());
        }
    }

    #[test]
    fn a_failed_join_is_reported() {
        // A write the kernel refuses (as cgroup.procs does for a cgroup being removed) is an
        // error naming the cause, not a child silently left outside the cgroup.
        let full = CgroupJoiner {
            files: vec![OpenOptions::new().write(true).open("/dev/full").unwrap()],
        };
        let e = full.join_self().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(Errno::ENOSPC as i32), "{e}");
        // The first refusal stops the join: a later file is not written.
        let dir = std::env::temp_dir().join(format!("rigor-joiner-{}", std::process::id()));
        let later = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&dir)
            .unwrap();
        let both = CgroupJoiner {
            files: vec![
                OpenOptions::new().write(true).open("/dev/full").unwrap(),
                later,
            ],
        };
        assert!(both.join_self().is_err());
        assert_eq!(fs::read(&dir).unwrap(), b"");
        let null = CgroupJoiner {
            files: vec![OpenOptions::new().write(true).open("/dev/null").unwrap()],
        };
        assert!(null.join_self().is_ok());
        let _ = fs::remove_file(&dir);
    }

    #[test]
    fn mountinfo_lines() {
        let m = parse_mountinfo_line(
            "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
        )
        .unwrap();
        assert_eq!(m.fstype, "cgroup");
        assert_eq!(m.options, "rw,memory");
        assert_eq!(
            m.dir_for("/a/b"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/a/b"))
        );
        let m = parse_mountinfo_line(
            "41 31 0:38 /docker/x /sys/fs/cgroup\\040v2 rw shared:1 - cgroup2 cgroup2 rw,nsdelegate",
        )
        .unwrap();
        assert_eq!(m.point, PathBuf::from("/sys/fs/cgroup v2"));
        assert_eq!(
            m.dir_for("/docker/x/y"),
            Some(PathBuf::from("/sys/fs/cgroup v2/y"))
        );
        assert_eq!(m.dir_for("/docker/xy"), None);
        assert_eq!(
            m.dir_for("/docker/x"),
            Some(PathBuf::from("/sys/fs/cgroup v2"))
        );
        assert!(parse_mountinfo_line("1 0 0:1 / / rw - ext4 /dev/vda rw").is_none());
    }
}
