//! docs/results.md against the measurement catalogue and the rigor.run.v1 schema: every id has a
//! row with its label, unit and direction, every listed id exists, and every field of the schema
//! is explained.

use super::{cells, code_spans, read};
use crate::measurements::CATALOGUE;
use std::collections::BTreeSet;

#[test]
fn every_measurement_id_has_a_row_with_label_unit_and_direction_in_results_md() {
    let doc = read("docs/results.md");
    let rows: Vec<Vec<String>> = doc.lines().filter_map(cells).collect();
    let mut wrong = Vec::new();
    for m in CATALOGUE {
        let better = match m.direction {
            rigor_stats::Direction::HigherIsBetter => "higher",
            rigor_stats::Direction::LowerIsBetter => "lower",
        };
        let expected = [
            format!("`{}`", m.id),
            m.name.into(),
            m.unit.into(),
            better.into(),
        ];
        match rows.iter().find(|r| r[0] == expected[0]) {
            None => wrong.push(format!("{}: no row", m.id)),
            Some(r) if r.len() < 5 || r[..4] != expected || r[4].is_empty() => wrong.push(format!(
                "{}: {r:?}, expected {expected:?} and a meaning",
                m.id
            )),
            Some(_) => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/results.md (id | table label | unit | better | meaning): {wrong:?}"
    );
}

#[test]
fn every_measurement_id_results_md_lists_is_in_the_catalogue() {
    let doc = read("docs/results.md");
    let unknown: Vec<String> = doc
        .lines()
        .filter_map(cells)
        .filter_map(|r| {
            r[0].strip_prefix('`')?
                .strip_suffix('`')
                .map(str::to_string)
        })
        .filter(|id| id.starts_with("app.") || id.starts_with("load."))
        .filter(|id| crate::measurements::info(id).is_none())
        .collect();
    assert!(
        unknown.is_empty(),
        "results.md lists ids the catalogue lacks: {unknown:?}"
    );
}

#[test]
fn results_md_documents_the_schema_file_and_the_warning_kinds() {
    let doc = read("docs/results.md");
    for link in ["rigor.run.v1.schema.json", "warnings.md"] {
        assert!(
            doc.contains(&format!("]({link}")),
            "results.md does not link {link}"
        );
    }
}

/// The property names of a schema object and of every object inside it.
fn property_names(schema: &serde_json::Value, out: &mut BTreeSet<String>) {
    match schema {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Object(props)) = map.get("properties") {
                out.extend(props.keys().cloned());
            }
            map.values().for_each(|v| property_names(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| property_names(v, out)),
        _ => {}
    }
}

#[test]
fn every_field_of_the_schema_is_explained_in_results_md() {
    let doc = read("docs/results.md");
    let schema: serde_json::Value =
        serde_json::from_str(&read("docs/rigor.run.v1.schema.json")).expect("schema JSON");
    // A field is a row of its table (`field` in the first cell), or a member named in a cell
    // such as `{steal_pct, busy_pct, throttle_events}`.
    let rows: Vec<Vec<String>> = doc.lines().filter_map(cells).collect();
    let first: BTreeSet<&str> = rows.iter().flat_map(|r| code_spans(&r[0])).collect();
    let anywhere: BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| r.iter().flat_map(|c| code_spans(c)))
        .flat_map(|span| span.split(|c: char| !(c.is_alphanumeric() || c == '_')))
        .collect();
    let mut top = BTreeSet::new();
    for part in ["", "build", "row", "iteration", "comparison", "loadReport"] {
        let object = match part {
            "" => &schema,
            p => &schema["$defs"][p],
        };
        let props = object["properties"].as_object().expect("properties");
        top.extend(props.keys().cloned());
    }
    let mut all = BTreeSet::new();
    property_names(&schema, &mut all);
    let missing: BTreeSet<&String> = all
        .iter()
        .filter(|f| !anywhere.contains(f.as_str()))
        .chain(top.iter().filter(|f| !first.contains(f.as_str())))
        .collect();
    assert!(
        missing.is_empty(),
        "rigor.run.v1.schema.json has fields docs/results.md does not explain: {missing:?}"
    );
}
