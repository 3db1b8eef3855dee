//! `find_rate` on a load job: the objective and the search's settings, checked, each problem
//! pointed at `jobs.NAME.find_rate`.

use super::problems::Problems;
use super::raw::{RawJob, Scalar};
use super::Config;
use rigor_load::capacity::{parse_precision, FindRate, Objective};
use rigor_load::LoadSpec;
use rigor_model::duration::parse_duration;

impl Config {
    /// The search `find_rate` asks for, or `None` (its problems recorded) when there is none
    /// or it cannot run: it drives the engine's open model itself, here.
    pub(super) fn resolve_find_rate(
        &self,
        job: &RawJob,
        table: &str,
        spec: &LoadSpec,
        tool: bool,
        hosts: &[super::Host],
        p: &mut Problems,
    ) -> Option<FindRate> {
        let raw = job.find_rate.as_ref()?;
        let error = |m: &str| self.error_at(table, Some("find_rate"), m);
        if tool {
            p.add(error(
                "the search drives the engine's open model itself; it cannot run with `tool`",
            ));
            return None;
        }
        if !hosts.is_empty() {
            p.add(error(
                "the search runs from this machine's engine; it cannot run on load `hosts`",
            ));
            return None;
        }
        if !spec.stages.is_empty() {
            p.add(error(
                "the search probes rates of its own; it cannot run `stages` (drop one of them)",
            ));
            return None;
        }
        let objective = raw
            .slo
            .parse::<Objective>()
            .map_err(|e| error(&format!("slo `{}`: {e}", raw.slo)));
        let objective = p.take(objective)?;
        let mut find = FindRate::new(objective);
        find.start = raw.start.or(spec.rate).unwrap_or(find.start);
        find.max = raw.max.unwrap_or(find.max);
        if let Some(precision) = &raw.precision {
            let parsed = match precision {
                Scalar::Int(i) => Ok(*i as f64),
                Scalar::Float(f) => Ok(*f),
                Scalar::Text(t) => parse_precision(t).map_err(|e| e.to_string()),
                Scalar::Bool(b) => Err(format!(
                    "precision `{b}` is not a number: write e.g. 5% or 0.05"
                )),
            };
            find.precision = p.take(parsed.map_err(|e| error(&e)))?;
        }
        if let Some(text) = &raw.probe {
            let parsed = parse_duration(text).map_err(|e| error(&format!("probe `{text}`: {e}")));
            find.probe = Some(p.take(parsed)?);
        }
        p.take(find.check().map_err(|e| error(&e.to_string())))?;
        Some(find)
    }
}
