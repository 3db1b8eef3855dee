//! A profile's role (CPU set, priority), checked against the CPUs this machine lets rigor use;
//! problems name the profile and the line.

use super::cpus::missing_cpus;
use super::problems::Problems;
use super::raw::RawProfile;
use super::{parse_cpu_list, Config, PlanRequest};

impl Config {
    /// Every profile's roles (CPU lists, priorities, hosts) checked when the file is read,
    /// whichever profile `-p` selects, so a mistake in one not selected today is listed now
    /// instead of on the run that first selects it. This machine's CPUs are checked when the
    /// selected profile is planned.
    pub(super) fn check_profiles(&self, p: &mut Problems) {
        for (name, profile) in &self.raw.profiles {
            let req = PlanRequest {
                profile: name.clone(),
                ..Default::default()
            };
            for role in ["application", "load"] {
                self.role(profile, &req, role, p);
                self.role_hosts(profile, &req, role, p);
            }
        }
    }

    /// CPU set and priority of `role` in the selected profile; problems name the profile.
    pub(super) fn role(
        &self,
        profile: &RawProfile,
        req: &PlanRequest,
        role: &str,
        p: &mut Problems,
    ) -> (Option<Vec<usize>>, bool) {
        let r = match role {
            "application" => profile.application.as_ref(),
            _ => profile.load.as_ref(),
        };
        let Some(r) = r else {
            return (None, false);
        };
        // `[profiles.P.role]` tables name their keys; inline `role = { … }` names the role.
        let nested = format!("profiles.{}.{role}", req.profile);
        let at = |key: &str, m: &str| {
            if self.locator().table(&nested).is_some() {
                self.error_at(&nested, Some(key), m)
            } else {
                self.error_at(&format!("profiles.{}", req.profile), Some(role), m)
            }
        };
        // CPUs of other hosts are checked there, not against this machine's.
        let here = match (&r.host, &r.hosts) {
            (Some(h), _) => h == super::LOCAL,
            (None, Some(list)) => list.iter().any(|h| h == super::LOCAL),
            (None, None) => true,
        };
        let cpus = r.cpus.as_ref().and_then(|c| {
            let list = p.take(parse_cpu_list(&c.as_text()).map_err(|e| at("cpus", &e.0)))?;
            if let Some(online) = req.limits.online_cpus.as_ref().filter(|_| here) {
                let missing = missing_cpus(&list, online);
                if !missing.is_empty() {
                    p.add(at(
                        "cpus",
                        &format!(
                            "CPU {} is not online or not allowed to rigor here (usable: {})",
                            join(&missing),
                            cpu_ranges(online)
                        ),
                    ));
                }
            }
            Some(list)
        });
        let high = match r.priority.as_deref() {
            None | Some("normal") => false,
            Some("high") => true,
            Some(other) => {
                p.add(at(
                    "priority",
                    &format!("priority `{other}` is not `high` or `normal`"),
                ));
                false
            }
        };
        (cpus, high)
    }
}

fn join(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `0-3,6` for an error message.
fn cpu_ranges(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        while i + 1 < cpus.len() && cpus[i + 1] == cpus[i] + 1 {
            i += 1;
        }
        parts.push(if cpus[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", cpus[i])
        });
        i += 1;
    }
    parts.join(",")
}
