//! What a result keeps of an external load tool's run (`tool = "wrk"` on a load job, or
//! `--cross-check`): the report of one run, or of one run per load host with the figures merged.

pub mod figures;
pub mod report;

pub use figures::ToolFigures;
pub use report::{ToolReport, WarmupReport};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An iteration's `tool`: which shape depends on where the tool ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolRecord {
    /// One run per load host (`hosts = [...]` on the load job).
    Hosts(Box<HostsToolReport>),
    /// One run on this machine.
    One(Box<ToolReport>),
    /// A record this version cannot read (another version's shape), kept as written so the
    /// rest of the result still reads.
    Unread(serde_json::Value),
}

/// The tool run on several load hosts at once: each host's report and clock, and the figures
/// merged over the hosts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostsToolReport {
    /// `wrk`, `h2load`, …
    pub tool: String,
    /// Each host's run, by the host's name.
    pub hosts: BTreeMap<String, HostToolRun>,
    /// The hosts' figures merged into one reading; absent when a host's run could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<ToolFigures>,
}

/// One load host's run of the tool, with how its clock and its path to the target were.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostToolRun {
    pub report: ToolReport,
    /// The host's clock minus this machine's, ms (how its marks were placed on our timeline).
    pub clock_offset_ms: f64,
    /// The round trip the offset was measured over, ms (its uncertainty).
    pub clock_rtt_ms: f64,
    /// The host's environment as its agent described it.
    #[serde(default)]
    pub environment: serde_json::Value,
    /// The path from the host to the target, as its agent found it.
    #[serde(default)]
    pub network: serde_json::Value,
}

/// Writes a tool record with its keys sorted, as the saved result has always had them (the
/// record was kept as a JSON value, whose keys are sorted): files stay byte for byte the same.
pub fn sorted<S: serde::Serializer>(record: &Option<ToolRecord>, s: S) -> Result<S::Ok, S::Error> {
    serde_json::to_value(record)
        .map_err(serde::ser::Error::custom)?
        .serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> ToolReport {
        ToolReport {
            tool: "wrk".into(),
            version: Some("wrk 4.2.0".into()),
            command: vec!["wrk".into(), "-d1s".into()],
            output: "Requests/sec: 10.00\n".into(),
            exit: "exit status: 0".into(),
            wall_secs: 1.04,
            cpu_secs: Some(0.5),
            cores: 2,
            figures: ToolFigures {
                rps: Some(10.0),
                latency_p999_ms: Some(3.0),
                latency_p99_ms: Some(2.0),
                ..ToolFigures::default()
            },
            ..ToolReport::default()
        }
    }

    #[test]
    fn a_record_reads_back_as_the_shape_it_was_written_in() {
        let one = serde_json::to_string(&ToolRecord::One(Box::new(report()))).unwrap();
        let back: ToolRecord = serde_json::from_str(&one).unwrap();
        assert!(
            matches!(&back, ToolRecord::One(r) if r.figures.rps == Some(10.0)),
            "{back:?}"
        );
        let hosts = ToolRecord::Hosts(Box::new(HostsToolReport {
            tool: "wrk".into(),
            hosts: BTreeMap::from([(
                "load1".to_string(),
                HostToolRun {
                    report: report(),
                    clock_offset_ms: -0.25,
                    clock_rtt_ms: 0.1,
                    environment: serde_json::json!({"kernel": "6.1"}),
                    network: serde_json::json!({"path": "other host"}),
                },
            )]),
            figures: Some(report().figures),
        }));
        let text = serde_json::to_string(&hosts).unwrap();
        let back: ToolRecord = serde_json::from_str(&text).unwrap();
        assert!(
            matches!(&back, ToolRecord::Hosts(h) if h.hosts["load1"].clock_offset_ms == -0.25),
            "{back:?}"
        );
        let odd: ToolRecord = serde_json::from_str(r#"{"tool": 3}"#).unwrap();
        assert!(matches!(odd, ToolRecord::Unread(_)), "{odd:?}");
    }

    #[test]
    fn a_record_is_written_with_its_keys_sorted_as_a_json_value_wrote_them() {
        #[derive(Serialize)]
        struct Holder {
            #[serde(serialize_with = "sorted")]
            tool: Option<ToolRecord>,
        }
        let held = Holder {
            tool: Some(ToolRecord::One(Box::new(report()))),
        };
        let text = serde_json::to_string(&held).unwrap();
        let as_value = serde_json::to_string(&serde_json::json!({
            "tool": serde_json::to_value(report()).unwrap()
        }))
        .unwrap();
        assert_eq!(text, as_value);
        let keys: Vec<&str> = text
            .match_indices("\"latency_p99")
            .map(|(i, _)| &text[i..i + 16])
            .collect();
        assert_eq!(keys, ["\"latency_p999_ms", "\"latency_p99_ms\""], "{text}");
    }
}
