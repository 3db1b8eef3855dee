//! The machine's story: everything about the host that can make two runs of the same code
//! disagree, captured once before a run so a result explains its own noise.

use crate::cgroup::cgroup_layout;
use crate::procfs::{cpu_dirs, keyed_value, read, read_trimmed, read_u64, status_value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// A description of the host. Fields the machine cannot tell are `None` (omitted from JSON).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// PRETTY_NAME from os-release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// Kernel release (uname -r).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Machine architecture (uname -m).
    pub arch: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// CPUs online.
    pub logical_cores: usize,
    /// Distinct (package, core) pairs among online CPUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_cores: Option<usize>,
    /// CPU packages (sockets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sockets: Option<usize>,
    /// Whether SMT (hyper-threading) is active: siblings share a core's resources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smt_active: Option<bool>,
    /// MemTotal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<u64>,
    /// MemAvailable before the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_available_mib: Option<u64>,
    /// cpufreq governor(s) in use, comma-separated when CPUs differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
    /// cpufreq driver (intel_pstate, acpi-cpufreq, amd-pstate…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling_driver: Option<String>,
    /// Turbo/boost enabled (intel_pstate/no_turbo or cpufreq boost).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turbo: Option<bool>,
    /// kernel.randomize_va_space: 0 off, 1 partial, 2 full.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aslr: Option<u8>,
    /// Transparent hugepage mode (the bracketed choice: always, madvise, never).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transparent_hugepages: Option<String>,
    /// Kernel clocksource (tsc is cheap; hpet/xen/acpi_pm make timing calls slow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clocksource: Option<String>,
    /// CPUs isolated from the scheduler (isolcpus), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolated_cpus: Option<String>,
    /// `v2`, `v1 (hybrid, …)`, `v1` or `none`.
    pub cgroup_version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_avg_1m: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_avg_5m: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_avg_15m: Option<f64>,
    /// Threads runnable right now (/proc/stat procs_running), not counting the reader.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runnable_threads: Option<u64>,
    /// /proc/pressure/cpu `some avg10`: % of the last 10 s some task waited for a CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_some_avg10: Option<f64>,
    /// Same over the last 60 s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_some_avg60: Option<f64>,
    /// Hypervisor vendor when running in a VM (steal time and noisy neighbours are possible).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub virtualization: Option<String>,
    /// Container runtime hint (docker, podman, kubernetes, lxc…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
}

/// Reads the environment now (a few dozen small files; well under 100 ms).
pub fn environment() -> Environment {
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    let meminfo = read("/proc/meminfo").unwrap_or_default();
    let loadavg = read("/proc/loadavg").unwrap_or_default();
    let mut load = loadavg.split_whitespace().map(|f| f.parse::<f64>().ok());
    let (sockets, physical_cores) = topology(&cpuinfo);
    let uname = uname();
    let mib = |key| status_value(&meminfo, key).map(|b| b >> 20);
    let pressure = read("/proc/pressure/cpu");
    let psi = |key: &str| pressure.as_deref().and_then(|p| psi_some(p, key));
    Environment {
        os: os_name(),
        kernel: read_trimmed("/proc/sys/kernel/osrelease")
            .or_else(|| uname.as_ref().map(|u| u.1.clone())),
        arch: uname
            .map(|u| u.0)
            .unwrap_or_else(|| std::env::consts::ARCH.to_string()),
        hostname: read_trimmed("/proc/sys/kernel/hostname").filter(|h| !h.is_empty()),
        cpu_model: cpu_model(&cpuinfo),
        logical_cores: crate::procfs::online_cpus(),
        physical_cores,
        sockets,
        smt_active: read_u64("/sys/devices/system/cpu/smt/active").map(|v| v == 1),
        memory_mib: mib("MemTotal"),
        memory_available_mib: mib("MemAvailable"),
        governor: per_cpu_values("cpufreq/scaling_governor"),
        scaling_driver: per_cpu_values("cpufreq/scaling_driver"),
        turbo: turbo(),
        aslr: read_trimmed("/proc/sys/kernel/randomize_va_space").and_then(|v| v.parse().ok()),
        transparent_hugepages: read_trimmed("/sys/kernel/mm/transparent_hugepage/enabled")
            .and_then(|t| bracketed(&t)),
        clocksource: read_trimmed(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .filter(|c| !c.is_empty()),
        isolated_cpus: read_trimmed("/sys/devices/system/cpu/isolated").filter(|c| !c.is_empty()),
        cgroup_version: cgroup_layout(),
        load_avg_1m: load.next().flatten(),
        load_avg_5m: load.next().flatten(),
        load_avg_15m: load.next().flatten(),
        runnable_threads: read("/proc/stat")
            .and_then(|s| keyed_value(&s, "procs_running"))
            .map(|n| n.saturating_sub(1)),
        cpu_pressure_some_avg10: psi("avg10"),
        cpu_pressure_some_avg60: psi("avg60"),
        virtualization: virtualization(&cpuinfo),
        container: container(),
    }
}

fn os_name() -> Option<String> {
    let text = read("/etc/os-release").or_else(|| read("/usr/lib/os-release"))?;
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim().trim_matches('"').trim_matches('\'').to_string())
    };
    value("PRETTY_NAME").or_else(|| value("NAME"))
}

/// (machine, release) from uname(2).
fn uname() -> Option<(String, String)> {
    let u = nix::sys::utsname::uname().ok()?;
    let s = |f: &std::ffi::OsStr| f.to_string_lossy().into_owned();
    Some((s(u.machine()), s(u.release())))
}

fn cpuinfo_value<'a>(cpuinfo: &'a str, key: &str) -> Option<&'a str> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key)
            .then(|| v.trim())
            .filter(|v| !v.is_empty())
    })
}

fn cpu_model(cpuinfo: &str) -> Option<String> {
    [
        "model name",
        "Model",
        "Hardware",
        "cpu model",
        "cpu",
        "uarch",
    ]
    .iter()
    .find_map(|k| cpuinfo_value(cpuinfo, k))
    .map(|m| m.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// (sockets, physical cores) from sysfs topology, else from cpuinfo's physical/core ids.
fn topology(cpuinfo: &str) -> (Option<usize>, Option<usize>) {
    let mut cores = BTreeSet::new();
    let mut packages = BTreeSet::new();
    for cpu in cpu_dirs() {
        let t = cpu.join("topology");
        if let (Some(p), Some(c)) = (
            read_u64(t.join("physical_package_id")),
            read_u64(t.join("core_id")),
        ) {
            packages.insert(p);
            cores.insert((p, c));
        }
    }
    if cores.is_empty() {
        let (mut p, mut c) = (None, None);
        for line in cpuinfo.lines() {
            let Some((k, v)) = line.split_once(':') else {
                p = None;
                c = None;
                continue;
            };
            match k.trim() {
                "physical id" => p = v.trim().parse::<u64>().ok(),
                "core id" => c = v.trim().parse::<u64>().ok(),
                _ => {}
            }
            if let (Some(pp), Some(cc)) = (p, c) {
                packages.insert(pp);
                cores.insert((pp, cc));
            }
        }
    }
    if cores.is_empty() {
        (None, None)
    } else {
        (Some(packages.len()), Some(cores.len()))
    }
}

/// Distinct values of a per-CPU sysfs file, comma-joined.
fn per_cpu_values(rel: &str) -> Option<String> {
    let values: BTreeSet<String> = cpu_dirs()
        .iter()
        .filter_map(|cpu| read_trimmed(cpu.join(rel)))
        .filter(|v| !v.is_empty())
        .collect();
    (!values.is_empty()).then(|| values.into_iter().collect::<Vec<_>>().join(","))
}

fn turbo() -> Option<bool> {
    let cpu = Path::new("/sys/devices/system/cpu");
    if let Some(no_turbo) = read_u64(cpu.join("intel_pstate/no_turbo")) {
        return Some(no_turbo == 0);
    }
    if let Some(boost) = read_u64(cpu.join("cpufreq/boost")) {
        return Some(boost == 1);
    }
    read_u64(cpu.join("cpu0/cpufreq/boost")).map(|b| b == 1)
}

/// `always [madvise] never` → `madvise`.
fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_string())
}

/// The `some` line's value for `key` (avg10, avg60…).
fn psi_some(text: &str, key: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))?
        .parse()
        .ok()
}

fn virtualization(cpuinfo: &str) -> Option<String> {
    let flagged = cpuinfo_value(cpuinfo, "flags")
        .is_some_and(|f| f.split_whitespace().any(|x| x == "hypervisor"));
    let dmi = ["sys_vendor", "product_name"]
        .iter()
        .filter_map(|f| read_trimmed(format!("/sys/class/dmi/id/{f}")))
        .filter(|v| !v.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let vendor = cpuid_hypervisor()
        .or_else(|| read_trimmed("/sys/hypervisor/type").filter(|t| !t.is_empty()))
        .or_else(|| flagged.then(|| "unknown hypervisor".to_string()))?;
    Some(if dmi.is_empty() {
        vendor
    } else {
        format!("{vendor} ({dmi})")
    })
}

#[cfg(target_arch = "x86_64")]
fn cpuid_hypervisor() -> Option<String> {
    use std::arch::x86_64::__cpuid;
    // SAFETY: cpuid is available on every x86_64 CPU; leaf 1 ECX bit 31 says whether the
    // hypervisor leaf 0x40000000 is meaningful.
    #[allow(unused_unsafe)]
    let (present, leaf) = unsafe { ((__cpuid(1).ecx >> 31) & 1 == 1, __cpuid(0x4000_0000)) };
    if !present {
        return None;
    }
    let mut sig = Vec::with_capacity(12);
    for r in [leaf.ebx, leaf.ecx, leaf.edx] {
        sig.extend_from_slice(&r.to_le_bytes());
    }
    let sig = String::from_utf8_lossy(&sig)
        .trim_end_matches('\0')
        .to_string();
    let name = match sig.as_str() {
        "KVMKVMKVM" => "KVM",
        "Microsoft Hv" => "Hyper-V",
        "VMwareVMware" => "VMware",
        "XenVMMXenVMM" => "Xen",
        "TCGTCGTCGTCG" => "QEMU (TCG)",
        "VBoxVBoxVBox" => "VirtualBox",
        " lrpepyh  vr" => "Parallels",
        "bhyve bhyve " => "bhyve",
        "ACRNACRNACRN" => "ACRN",
        "" => "unknown hypervisor",
        other => return Some(other.trim().to_string()),
    };
    Some(name.to_string())
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_hypervisor() -> Option<String> {
    None
}

fn container() -> Option<String> {
    if Path::new("/.dockerenv").exists() {
        return Some("docker".into());
    }
    if Path::new("/run/.containerenv").exists() {
        return Some("podman".into());
    }
    let cg = read("/proc/1/cgroup").unwrap_or_default();
    for (needle, name) in [
        ("kubepods", "kubernetes"),
        ("docker", "docker"),
        ("libpod", "podman"),
        ("lxc", "lxc"),
    ] {
        if cg.contains(needle) {
            return Some(name.into());
        }
    }
    let environ = std::fs::read("/proc/1/environ").unwrap_or_default();
    environ
        .split(|b| *b == 0)
        .find_map(|kv| kv.strip_prefix(b"container="))
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_parsers() {
        assert_eq!(
            bracketed("always [madvise] never").as_deref(),
            Some("madvise")
        );
        let p = "some avg10=4.98 avg60=1.48 avg300=0.92 total=5098891\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(psi_some(p, "avg10"), Some(4.98));
        assert_eq!(psi_some(p, "avg60"), Some(1.48));
        let info = "processor\t: 0\nmodel name\t: Intel(R)  Xeon(R)\nphysical id\t: 0\ncore id\t: 0\n\nprocessor\t: 1\nphysical id\t: 0\ncore id\t: 0\n";
        assert_eq!(cpu_model(info).as_deref(), Some("Intel(R) Xeon(R)"));
    }
}
