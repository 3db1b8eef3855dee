//! `rigor compare RUN.json` with one file: the run's own variants compared again, as `rigor run`
//! compared them (round by round, at the confidence of each group's last recorded look), with
//! this invocation's threshold and declarations. A result whose iterations were trimmed or
//! re-marked is judged exactly as a run that ended there would have been.

use super::matching::{CompareReport, Request, COMPARE_SCHEMA};
use super::saved::{self, Saved};
use super::{comparison, merge, CONFIDENCE};
use crate::error::CompareError;
use rigor_model::result::RunResult;

/// Compares the variants of the one saved run in `inputs`, baseline first as the run had them.
/// A run without at least two variants has nothing to compare (an error naming the file).
pub fn reanalyse(inputs: &[Saved], request: &Request) -> Result<CompareReport, CompareError> {
    let [(path, result)] = inputs else {
        return Err(CompareError::NotOne);
    };
    let order = variant_order(result);
    if order.len() < 2 {
        return Err(CompareError::NothingWithin {
            path: path.clone(),
            variants: order.len(),
        });
    }
    let names = saved::column_names(inputs);
    let mut warnings = Vec::new();
    let mut decl = merge::merge_declarations(inputs, &names, request.flags, &mut warnings);
    rigor_model::declarations::set_thresholds(&mut decl, request.thresholds);
    warnings.extend(super::caveats::as_recorded(inputs, &names));
    let mut ids = comparison::default_measurements(&result.rows);
    for id in request.extra {
        if !ids.contains(id) {
            ids.push(id.clone());
        }
    }
    let comparisons = comparison::compare_variants(
        &result.rows,
        &order,
        &ids,
        request.threshold_pct,
        &decl,
        true,
        result.sequential.as_ref(),
    );
    Ok(CompareReport {
        schema: COMPARE_SCHEMA.into(),
        threshold_pct: request.threshold_pct,
        confidence: CONFIDENCE,
        files: saved::file_infos(inputs, &names),
        warnings,
        comparisons,
        measurements: decl,
        profiles: Vec::new(),
    })
}

/// The run's variants, baseline first: in the order rows (declared order) first name them.
pub fn variant_order(result: &RunResult) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for r in &result.rows {
        if let Some(v) = &r.variant {
            if !order.contains(v) {
                order.push(v.clone());
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matching::tests::result;
    use crate::summary::tests::row_with;
    use rigor_model::declarations::Declarations;
    use rigor_model::result::{Method, Sequential};

    fn run() -> RunResult {
        let mut r = result(None, &[1.0], "6.8");
        let b: Vec<f64> = (0..8).map(|i| 1000.0 + 40.0 * (i % 4) as f64).collect();
        let c: Vec<f64> = b
            .iter()
            .enumerate()
            .map(|(i, v)| v * (0.9 + 0.002 * i as f64))
            .collect();
        r.rows = vec![
            row_with(&[("connections", "8")], Some("base"), "load.rps", &b),
            row_with(&[("connections", "8")], Some("slow"), "load.rps", &c),
        ];
        r
    }

    fn request(threshold_pct: f64) -> Request<'static> {
        Request {
            extra: &[],
            threshold_pct,
            flags: &[],
            thresholds: &[],
        }
    }

    #[test]
    fn one_file_is_compared_as_its_run_compared_it() {
        let mut r = run();
        r.sequential = Some(Sequential {
            looks: vec![6, 7, 8],
            max: 12,
        });
        let order = vec!["base".to_string(), "slow".to_string()];
        let own = comparison::compare_variants(
            &r.rows,
            &order,
            &[],
            2.0,
            &Declarations::new(),
            true,
            r.sequential.as_ref(),
        );
        let inputs = vec![("run.json".into(), r)];
        let again = reanalyse(&inputs, &request(2.0)).unwrap();
        assert_eq!(
            serde_json::to_value(&again.comparisons).unwrap(),
            serde_json::to_value(&own).unwrap()
        );
        let c = &again.comparisons[0];
        assert_eq!(c.method, Some(Method::Paired));
        assert_eq!(c.pairs, Some(8));
        let level = rigor_stats::look_confidence(&[6, 7, 8], 12, 0.95);
        assert_eq!(c.confidence, Some(level));
        assert_eq!(c.verdict, "regression");
        // Another threshold is this invocation's to choose.
        let wide = reanalyse(&inputs, &request(50.0)).unwrap();
        assert_eq!(wide.comparisons[0].verdict, "no change");
    }

    #[test]
    fn a_run_without_variants_has_nothing_to_re_analyse() {
        let r = result(None, &[1.0, 2.0, 3.0], "6.8");
        let e = reanalyse(&[("one.json".into(), r)], &request(2.0)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("one.json: the run has 0 variant(s)"),
            "{e}"
        );
    }
}
