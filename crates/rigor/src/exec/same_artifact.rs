//! Builds of one run that meet at one artifact: a build that left another build's bytes in
//! place would run that other build's program under its own name, and two builds producing
//! byte-identical artifacts make a comparison of them measure one program twice.

use crate::result::{Warning, WarningKind};
use std::path::PathBuf;

/// What an earlier build of this run left at an artifact path.
pub struct Produced {
    pub key: String,
    pub path: PathBuf,
    pub hash: String,
    pub build: Option<String>,
    /// The job and the command it runs the artifact with.
    pub job: String,
    pub command: String,
    pub who: String,
    pub rewritten: bool,
}

/// What an earlier build's bytes at the same path mean for this build.
pub enum Verdict {
    /// The build must not run: this message, and the key of an earlier build that must not either.
    Refuse(String, Option<String>),
    /// Said, not fatal: the builds differ only in their environment.
    Note(String),
}

/// A build that did not rewrite its artifact, which still holds exactly what another build of
/// this run produced there, runs that other build's program under its own name. When the build
/// commands differ that is refused; when only the environment differs it is said.
pub fn same_bytes(me: &Produced, earlier: &[Produced]) -> Option<Verdict> {
    if me.rewritten || me.build.is_none() {
        return None;
    }
    let other = earlier
        .iter()
        .find(|o| o.key != me.key && o.path == me.path && o.hash == me.hash)?;
    if other.build != me.build {
        let message = format!(
            "the build of {} did not rewrite {}: it still holds what the build of {} left there \
             ({}), so both would run the same program. Make the build rebuild when its command \
             changes (e.g. `make -B`, or an output path per variant with its own `artifact`)",
            me.who,
            me.path.display(),
            other.who,
            me.hash
        );
        let also = (!other.rewritten).then(|| other.key.clone());
        return Some(Verdict::Refuse(message, also));
    }
    Some(Verdict::Note(format!(
        "{} runs the same artifact as {} ({}): its build left {} as it was",
        me.who,
        other.who,
        me.hash,
        me.path.display()
    )))
}

/// Two different builds of one job whose artifacts hold the same bytes: the variants compared
/// run one program, so their difference is noise. Such builds may each have rewritten the file
/// (a `touch`, a build that ignores its flags), so the hash is what tells, not the timestamp.
pub fn identical_artifacts(me: &Produced, earlier: &[Produced]) -> Option<Warning> {
    me.build.as_ref()?;
    let other = earlier.iter().find(|o| {
        o.key != me.key
            && o.job == me.job
            && o.command == me.command
            && o.build != me.build
            && o.hash == me.hash
    })?;
    let hex = me.hash.strip_prefix("sha256:").unwrap_or(&me.hash);
    let short = &hex[..hex.len().min(12)];
    Some(Warning::of(
        WarningKind::IdenticalArtifacts,
        format!(
            "{} and {} are built differently but run byte-identical artifacts ({}, sha256:{short}…): \
             comparing them measures the same binary",
            other.who,
            me.who,
            me.path.display(),
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn produced(key: &str, build: &str, hash: &str, who: &str) -> Produced {
        Produced {
            key: key.into(),
            path: PathBuf::from("/w/app.sh"),
            hash: hash.into(),
            build: Some(build.into()),
            job: "app".into(),
            command: "./app.sh".into(),
            who: who.into(),
            rewritten: true,
        }
    }

    #[test]
    fn different_builds_with_one_artifact_hash_are_warned_about() {
        let a = produced(
            "ka",
            "sh mk.sh A",
            "sha256:0123456789abcdef",
            "`app` (variant `a`)",
        );
        let b = produced(
            "kb",
            "touch app.sh",
            "sha256:0123456789abcdef",
            "`app` (variant `b`)",
        );
        let w = identical_artifacts(&b, std::slice::from_ref(&a)).expect("a warning");
        assert_eq!(w.kind, "identical_artifacts");
        assert!(
            w.message.contains("variant `a`")
                && w.message.contains("variant `b`")
                && w.message.contains("sha256:0123456789ab…")
                && w.message.contains("same binary"),
            "{}",
            w.message
        );
        // Different bytes, or the same build (differing only in its env), say nothing.
        let c = produced("kc", "sh mk.sh C", "sha256:ffff", "`app` (variant `c`)");
        assert!(identical_artifacts(&c, std::slice::from_ref(&a)).is_none());
        let d = produced(
            "kd",
            "sh mk.sh A",
            "sha256:0123456789abcdef",
            "`app` (variant `d`)",
        );
        assert!(identical_artifacts(&d, std::slice::from_ref(&a)).is_none());
    }
}
