//! `[hosts.NAME]` and the roles that name them: which machines a role runs on and how rigor
//! reaches each one (the user's OpenSSH client, or any command that gives a remote shell on
//! stdio). `local` is this machine and needs no table.

use crate::config::ValueError;

use super::problems::Problems;
use super::raw::{RawHost, RawProfile, RawRole};
use super::{Config, PlanRequest};
pub use rigor_agent::HostSpec as Host;

/// The implicit host: this machine, reached without any transport.
pub const LOCAL: &str = "local";

/// At most this many hosts share one load role.
pub const MAX_LOAD_HOSTS: usize = 64;

impl Config {
    /// Checks every `[hosts.NAME]` table: how it is reached, and nothing that could turn a
    /// host name into an `ssh` option.
    pub(super) fn check_hosts(&self, p: &mut Problems) {
        for (name, h) in &self.raw.hosts {
            let table = format!("hosts.{name}");
            let at = |key: Option<&str>, m: &str| self.error_at(&table, key, m);
            if name == LOCAL {
                p.add(at(
                    None,
                    "`local` is this machine and cannot be redefined; give the host another name",
                ));
                continue;
            }
            if let Err(e) = check_name(name) {
                p.add(at(None, &e.0));
            }
            match (&h.ssh, &h.transport) {
                (None, None) => p.add(at(
                    None,
                    "a host needs `ssh = \"user@host\"` or `transport = \"COMMAND\"`",
                )),
                (Some(_), Some(_)) => {
                    p.add(at(Some("transport"), "give `ssh` or `transport`, not both"))
                }
                (Some(target), None) => {
                    if let Err(e) = check_ssh_target(target) {
                        p.add(at(Some("ssh"), &e.0));
                    }
                }
                (None, Some(t)) => {
                    if let Err(e) = check_transport(t) {
                        p.add(at(Some("transport"), &e.0));
                    }
                    for key in ssh_only_keys(h) {
                        p.add(at(
                            Some(key),
                            &format!("`{key}` belongs to `ssh`; a transport command carries its own options"),
                        ));
                    }
                }
            }
            if h.port == Some(0) {
                p.add(at(Some("port"), "port 0 is not a port (1 to 65535)"));
            }
            for o in h.options.iter().flatten() {
                if o.is_empty() || o.contains('\0') {
                    p.add(at(
                        Some("options"),
                        "an empty argument (or one holding a NUL byte) is not an ssh option",
                    ));
                }
            }
            if let Some(text) = &h.source_addrs {
                if let Err(e) = rigor_load::parse_sources(text, super::MAX_SOURCES) {
                    p.add(at(Some("source_addrs"), &e.to_string()));
                }
            }
            if let Some(id) = &h.identity {
                let path = self.dir.join(id);
                if !path.is_file() {
                    p.add(at(
                        Some("identity"),
                        &format!("{}: no such key file", path.display()),
                    ));
                }
            }
        }
    }

    /// The hosts `role` runs on in `profile`; empty when it runs on this machine only.
    pub(super) fn role_hosts(
        &self,
        profile: &RawProfile,
        req: &PlanRequest,
        role: &str,
        p: &mut Problems,
    ) -> Vec<Host> {
        let r = match role {
            "application" => profile.application.as_ref(),
            _ => profile.load.as_ref(),
        };
        let Some(r) = r else {
            return Vec::new();
        };
        let table = format!("profiles.{}", req.profile);
        let at = |key: &str, m: &str| {
            let nested = format!("{table}.{role}");
            if self.locator().table(&nested).is_some() {
                self.error_at(&nested, Some(key), m)
            } else {
                self.error_at(&table, Some(role), m)
            }
        };
        let names = match named_hosts(r, role) {
            Ok(names) => names,
            Err((key, m)) => {
                p.add(at(key, &m));
                return Vec::new();
            }
        };
        let mut hosts = Vec::new();
        for (i, name) in names.iter().enumerate() {
            if names[..i].contains(name) {
                p.add(at(
                    "hosts",
                    &format!("`{name}` is named twice: each host takes one share of the load"),
                ));
                continue;
            }
            if name == LOCAL {
                hosts.push(local());
                continue;
            }
            match self.raw.hosts.get(name) {
                Some(h) => hosts.push(self.host(name, h)),
                None => p.add(at(
                    if r.host.is_some() { "host" } else { "hosts" },
                    &format!(
                        "no host named `{name}` (hosts: {})",
                        std::iter::once(LOCAL)
                            .chain(self.raw.hosts.keys().map(String::as_str))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )),
            }
        }
        // Only this machine: the same as naming no host.
        if hosts.iter().all(|h| h.name == LOCAL) {
            return Vec::new();
        }
        hosts
    }

    fn host(&self, name: &str, h: &RawHost) -> Host {
        Host {
            name: name.to_string(),
            ssh: h.ssh.clone(),
            port: h.port,
            identity: h.identity.as_ref().map(|id| self.dir.join(id)),
            options: h.options.clone().unwrap_or_default(),
            transport: h.transport.clone(),
            // Checked by `check_hosts`; a bad list is reported there, not here.
            source_addrs: h
                .source_addrs
                .as_deref()
                .and_then(|t| rigor_load::parse_sources(t, super::MAX_SOURCES).ok())
                .unwrap_or_default(),
        }
    }
}

/// This machine: its agent runs here, started through `env`.
fn local() -> Host {
    Host {
        name: LOCAL.to_string(),
        transport: Some("env".into()),
        ..Host::default()
    }
}

/// The names a role gives: `host` (one) or `hosts` (the load role's list).
fn named_hosts(r: &RawRole, role: &str) -> Result<Vec<String>, (&'static str, String)> {
    match (&r.host, &r.hosts) {
        (Some(_), Some(_)) => Err(("hosts", "give `host` or `hosts`, not both".into())),
        (Some(h), None) => Ok(vec![h.clone()]),
        (None, Some(_)) if role == "application" => Err((
            "hosts",
            "the application runs on one host: use `host = \"NAME\"`".into(),
        )),
        (None, Some(list)) if list.is_empty() => Err((
            "hosts",
            "an empty list: name at least one host (`local` is this machine)".into(),
        )),
        (None, Some(list)) if list.len() > MAX_LOAD_HOSTS => Err((
            "hosts",
            format!(
                "{} hosts: at most {MAX_LOAD_HOSTS} share one load",
                list.len()
            ),
        )),
        (None, Some(list)) => Ok(list.clone()),
        (None, None) => Ok(Vec::new()),
    }
}

fn ssh_only_keys(h: &RawHost) -> Vec<&'static str> {
    let mut keys = Vec::new();
    if h.port.is_some() {
        keys.push("port");
    }
    if h.identity.is_some() {
        keys.push("identity");
    }
    if h.options.is_some() {
        keys.push("options");
    }
    keys
}

/// A host name becomes a measurement id (`load.hosts.NAME.rps`): letters, digits, `_`, `-`.
fn check_name(name: &str) -> Result<(), ValueError> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "`{name}` is not a host name rigor can use in measurement ids: \
             letters, digits, `_` and `-` only"
        )
        .into());
    }
    Ok(())
}

/// `user@host`, `host` or a `Host` alias: one word that `ssh` cannot read as an option.
fn check_ssh_target(target: &str) -> Result<(), ValueError> {
    if target.is_empty() {
        return Err("empty: write `user@host`".into());
    }
    if target.starts_with('-') {
        return Err(format!(
            "`{target}` starts with `-`, which ssh would read as an option; \
             options go in `options = [...]`"
        )
        .into());
    }
    if target.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(
            format!("`{target}` holds a space or a control character: write `user@host`").into(),
        );
    }
    Ok(())
}

fn check_transport(t: &str) -> Result<(), ValueError> {
    if t.trim().is_empty() {
        return Err("empty: write the command that gives a shell on the host, \
                    such as `kubectl exec -i POD --`"
            .into());
    }
    if t.contains('\0') {
        return Err("holds a NUL byte".into());
    }
    // Split as the transport will be: words the way sh splits them.
    if shlex::split(t).is_none() {
        return Err(format!("`{t}` has an unclosed quote or a trailing backslash").into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_targets_that_ssh_would_read_as_options_are_refused() {
        assert!(check_ssh_target("root@10.0.0.2").is_ok());
        assert!(check_ssh_target("lab1").is_ok());
        assert!(check_ssh_target("-oProxyCommand=touch /tmp/x").is_err());
        assert!(check_ssh_target("a b").is_err());
        assert!(check_ssh_target("").is_err());
    }

    #[test]
    fn a_transport_must_split_into_words() {
        assert!(check_transport("kubectl exec -i 'pod 1' --").is_ok());
        assert!(check_transport("sh -c 'unterminated").is_err());
        assert!(check_transport("  ").is_err());
    }

    #[test]
    fn host_names_fit_measurement_ids() {
        assert!(check_name("load-1_a").is_ok());
        assert!(check_name("web.1").is_err());
        assert!(check_name("").is_err());
    }
}
