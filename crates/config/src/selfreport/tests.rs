//! Every path of the three readers, with hostile output: malformed lines, huge and non-finite
//! numbers, runaway lines, blocks that never end, braces and markers inside JSON strings.

use super::text::{number, quote};
use super::*;
use rigor_model::declarations::Better;

fn rule(name: &str, regex: &str, row: Option<&str>) -> ExtractRule {
    ExtractRule {
        name: name.into(),
        regex: regex::Regex::new(regex).unwrap(),
        unit: Some("1/s".into()),
        direction: Better::Higher,
        label: Some("Msgs/sec".into()),
        row: row.map(str::to_string),
    }
}

fn row(k: &str, v: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(k.to_string(), v.to_string())])
}

fn one(out: &str) -> Reported {
    let mut r = read(out, &[]).unwrap();
    assert_eq!(r.len(), 1, "{r:?}");
    r.remove(0)
}

fn err(out: &str, rules: &[ExtractRule]) -> String {
    read(out, rules).expect_err("expected an error").to_string()
}

#[test]
fn numbers_as_programs_print_them() {
    for (text, v) in [
        ("801176", 801176.0),
        (" 1.5 ", 1.5),
        ("-2e3", -2000.0),
        ("+.5", 0.5),
        ("1,234,567", 1234567.0),
        ("1_000_000.25", 1000000.25),
        ("12,345e2", 1234500.0),
        ("1e308", 1e308),
    ] {
        assert_eq!(number(text), Ok(v), "{text}");
    }
    for bad in [
        "",
        "1,5",
        "1,23",
        "1,2345",
        ",123",
        "1,234.5,6",
        "1_234,567",
        "NaN",
        "inf",
        "-infinity",
        "0x10",
        "12%",
        "1e400",
        "abc",
        "1 234",
    ] {
        assert!(number(bad).is_err(), "{bad} was read as {:?}", number(bad));
    }
    assert!(number("1,5").unwrap_err().0.contains("groups of three"));
    assert!(number("1e400").unwrap_err().0.contains("finite"));
}

#[test]
fn quotes_are_bounded_and_escaped() {
    let long = "x".repeat(10_000);
    let q = quote(&long);
    assert!(q.len() < 300 && q.contains("9840 more characters"), "{q}");
    assert_eq!(quote("a\u{1b}[31mb"), "`a\\u{1b}[31mb`");
}

#[test]
fn protocol_line_with_everything() {
    let r = one(
        "hello\n##rigor {\"name\":\"msgs_per_sec\",\"value\":801176,\"unit\":\"1/s\",\
         \"direction\":\"higher\",\"label\":\"Msgs/sec\",\"row\":{\"clients\":30,\"size\":\"big\"}}\n",
    );
    assert_eq!(r.id, "cmd.msgs_per_sec");
    assert_eq!(r.value, 801176.0);
    assert_eq!(r.row.get("clients").map(String::as_str), Some("30"));
    assert_eq!(r.row.get("size").map(String::as_str), Some("big"));
    assert_eq!(r.declaration.direction, Some(Better::Higher));
    assert_eq!(r.declaration.unit.as_deref(), Some("1/s"));
    assert_eq!(r.declaration.label.as_deref(), Some("Msgs/sec"));
    // Minimal, indented, no space before the object; 1.5 as a row value stays 1.5.
    let r = one("  ##rigor{\"name\":\"t\",\"value\":-0.25,\"row\":{\"f\":1.5}}");
    assert_eq!((r.value, &r.row), (-0.25, &row("f", "1.5")));
    // `30` and `30.0` are one row.
    let a = one("##rigor {\"name\":\"t\",\"value\":1,\"row\":{\"clients\":30}}");
    let b = one("##rigor {\"name\":\"t\",\"value\":1,\"row\":{\"clients\":30.0}}");
    assert_eq!(
        (&a.row, &b.row),
        (&row("clients", "30"), &row("clients", "30"))
    );
    assert!(r.declaration.is_empty());
    // Not protocol lines: ordinary output.
    assert!(read("##rigorous output\n#rigor {}\nsay ##rigor {\n", &[])
        .unwrap()
        .is_empty());
}

#[test]
fn malformed_protocol_lines_name_the_line() {
    let cases: &[(&str, &str)] = &[
        ("##rigor", "no JSON object"),
        ("##rigor {\"name\":\"x\"}", "`value` is missing"),
        ("##rigor {\"value\":1}", "`name` is missing"),
        ("##rigor {\"name\":\"\",\"value\":1}", "the name is empty"),
        ("##rigor {\"name\":\"a b\",\"value\":1}", "holds ' '"),
        (
            "##rigor {\"name\":\"x\",\"value\":\"12\"}",
            "must be a JSON number, not the string `12`",
        ),
        (
            "##rigor {\"name\":\"x\",\"value\":1e400}",
            "not one JSON object",
        ),
        (
            "##rigor {\"name\":\"x\",\"value\":NaN}",
            "not one JSON object",
        ),
        (
            "##rigor {\"name\":\"x\",\"value\":1,\"dirction\":\"higher\"}",
            "unknown field `dirction`",
        ),
        (
            "##rigor {\"name\":\"x\",\"value\":1,\"direction\":\"up\"}",
            "\"higher\" or \"lower\"",
        ),
        (
            "##rigor {\"name\":\"x\",\"value\":1,\"row\":[1]}",
            "`row` must be an object",
        ),
        (
            "##rigor {\"name\":\"x\",\"value\":1,\"row\":{\"c\":true}}",
            "`row.c` must be a string",
        ),
        (
            "##rigor {\"name\":\"x\",\"value\":1,\"row\":{\"\":\"1\"}}",
            "not a variable name",
        ),
        (
            "##rigor {\"name\":\"x\",\"value\":1,\"row\":{\"c\":\" \"}}",
            "`c` is empty",
        ),
        (
            "##rigor {\"name\":\"x\",\"value\":1} trailing",
            "not one JSON object",
        ),
        ("##rigor [1]", "found an array"),
        (
            "##rigor {\"name\":\"x\",\"value\":1,\"label\":\"a\\nb\"}",
            "control character",
        ),
    ];
    for (line, why) in cases {
        let e = err(&format!("first\n{line}\nlast"), &[]);
        assert!(
            e.contains("line 2 of the output is a malformed ##rigor line") && e.contains(why),
            "{line}: {e}"
        );
    }
}

#[test]
fn a_ten_megabyte_line_is_quoted_briefly() {
    let label = "L".repeat(10 << 20);
    let line = format!("##rigor {{\"name\":\"x\",\"value\":1,\"label\":\"{label}\"}}");
    let e = err(&line, &[]);
    assert!(
        e.contains("at most 200") && e.len() < 1000,
        "{}",
        &e[..e.len().min(2000)]
    );
    let junk = format!("##rigor {}", "{".repeat(10 << 20));
    let e = err(&junk, &[]);
    assert!(e.len() < 1000, "{}", &e[..e.len().min(2000)]);
    // A 10 MB ordinary line costs extract rules nothing but time.
    let big = format!("{}\nrate: 5\n", "y".repeat(10 << 20));
    let r = read(&big, &[rule("rate", r"^rate: (?P<value>\d+)$", None)]).unwrap();
    assert_eq!(r[0].value, 5.0);
}

#[test]
fn the_same_figure_twice() {
    let line =
        |v: &str| format!("##rigor {{\"name\":\"m\",\"value\":{v},\"row\":{{\"c\":\"1\"}}}}");
    // Equal values: one figure.
    let r = read(&format!("{}\n{}", line("5"), line("5.0")), &[]).unwrap();
    assert_eq!(r.len(), 1);
    // Different values: both lines named.
    let e = err(&format!("{}\nx\n{}", line("5"), line("6")), &[]);
    assert!(
        e.contains(
            "cmd.m (row c=1) is reported twice with different values: 5 by the ##rigor \
                    line 1 and 6 by the ##rigor line 3"
        ),
        "{e}"
    );
    // The same name in two rows is two figures.
    let other = "##rigor {\"name\":\"m\",\"value\":7,\"row\":{\"c\":\"2\"}}";
    assert_eq!(
        read(&format!("{}\n{other}", line("5")), &[]).unwrap().len(),
        2
    );
    // A rule and a protocol line reporting one figure differently.
    let e = err(
        "##rigor {\"name\":\"rate\",\"value\":1}\nrate: 2",
        &[rule("rate", r"rate: (?P<value>\d+)", None)],
    );
    assert!(
        e.contains("the ##rigor line 1") && e.contains("extract rule `rate` (line 2)"),
        "{e}"
    );
}

#[test]
fn declarations_merge_and_contradictions_are_named() {
    let out = "##rigor {\"name\":\"m\",\"value\":1,\"unit\":\"1/s\",\"row\":{\"c\":\"1\"}}\n\
               ##rigor {\"name\":\"m\",\"value\":2,\"direction\":\"higher\",\"row\":{\"c\":\"2\"}}";
    let r = read(out, &[]).unwrap();
    for f in &r {
        assert_eq!(f.declaration.unit.as_deref(), Some("1/s"));
        assert_eq!(f.declaration.direction, Some(Better::Higher));
    }
    let out =
        "##rigor {\"name\":\"m\",\"value\":1,\"direction\":\"higher\",\"row\":{\"c\":\"1\"}}\n\
               ##rigor {\"name\":\"m\",\"value\":2,\"direction\":\"lower\",\"row\":{\"c\":\"2\"}}";
    let e = err(out, &[]);
    assert!(
        e.contains(
            "cmd.m is declared with direction `higher` by the ##rigor line 1 but `lower` \
                    by the ##rigor line 2"
        ),
        "{e}"
    );
}

#[test]
fn extract_rules_with_rows_make_one_figure_per_row() {
    let out = "Num clients, Total [msg], Msgs/sec, Total [ms]\n\
                        1,     2000,   1,234, 1.62\n\
                        5,    10000,   50000, 2.00\n\
               warm-up done\n\
                        5,    10000,   60000, 1.90\n";
    let r = rule(
        "msgs",
        r"^\s*(?P<clients>\d+),\s*\d+,\s*(?P<value>[\d,]+),",
        Some("clients"),
    );
    let got = read(out, &[r]).unwrap();
    let got: Vec<(String, f64)> = got
        .iter()
        .map(|f| (f.row["clients"].clone(), f.value))
        .collect();
    // The later line of a row wins; rows keep the order first seen.
    assert_eq!(got, vec![("1".into(), 1234.0), ("5".into(), 60000.0)]);
}

#[test]
fn extract_rule_without_row_keeps_the_last_match() {
    let out = "rate: 10\nrate: 20\nrate: 30\n";
    let r = read(out, &[rule("rate", r"rate: (?P<value>\d+)", None)]).unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].value, 30.0);
    assert!(r[0].row.is_empty());
    assert_eq!(r[0].declaration.direction, Some(Better::Higher));
    assert_eq!(r[0].declaration.label.as_deref(), Some("Msgs/sec"));
}

#[test]
fn extract_rule_failures_name_the_rule() {
    let never = rule("msgs_per_sec", r"^never (?P<value>\d+)", None);
    let e = err("a\nb\n", &[never]);
    assert_eq!(
        e,
        "extract rule `msgs_per_sec` (cmd.msgs_per_sec) matched no line of the output"
    );
    let e = err(
        "x\nrate: 1,5\n",
        &[rule("rate", r"rate: (?P<value>\S+)", None)],
    );
    assert!(
        e.contains("extract rule `rate` (cmd.rate) matched line 2 of the output, but the value")
            && e.contains("`rate: 1,5`"),
        "{e}"
    );
    let e = err("rate: NaN", &[rule("rate", r"rate: (?P<value>\S+)", None)]);
    assert!(e.contains("`NaN` is not a number"), "{e}");
    let e = err("rate:", &[rule("rate", r"rate:(?P<value>\d+)?", None)]);
    assert!(e.contains("`value` capture took no part"), "{e}");
    let e = err(
        "rate: 5",
        &[rule("rate", r"(?P<c>x)?rate: (?P<value>\d+)", Some("c"))],
    );
    assert!(e.contains("`c` capture took no part"), "{e}");
}

const CRANK: &str = r#"Application started.
#StartJobStatistics
{
    "Metadata": [
        { "Source": "PingPong", "Name": "pingpong/msgs-per-sec", "Aggregate": "max",
          "Reduce": "max", "Format": "n0", "ShortDescription": "Max msgs/sec {best}",
          "LongDescription": "braces } { and \" quotes" },
        { "Source": "PingPong", "Name": "pingpong/total-ms", "Aggregate": "Sum", "Format": "n2" },
        { "Name": "pingpong/runs", "Aggregate": "count" },
        { "Name": "pingpong/raw", "Aggregate": "all", "Format": "object" },
        { "Name": "pingpong/first", "Format": "n0" }
    ],
    "Measurements": [
        { "Timestamp": "2024-01-01T00:00:00Z", "Name": "pingpong/msgs-per-sec", "Value": 100 },
        { "Name": "pingpong/msgs-per-sec", "Value": 300.5 },
        { "Name": "pingpong/msgs-per-sec", "Value": "200" },
        { "Name": "pingpong/total-ms", "Value": 1.5 },
        { "Name": "pingpong/total-ms", "Value": 2.5 },
        { "Name": "pingpong/runs", "Value": "one" },
        { "Name": "pingpong/runs", "Value": 2 },
        { "Name": "pingpong/raw", "Value": [1, 2] },
        { "Name": "pingpong/first", "Value": 7 },
        { "Name": "pingpong/first", "Value": 8 },
        { "Name": "$$Delimiter$$" },
        { "Name": "no-metadata", "Value": 1 },
        { "Name": "no-metadata", "Value": 4 },
        { "Name": "runtime", "Value": "rust 1.80" }
    ]
}
#EndJobStatistics
done"#;

fn by_id(r: &[Reported]) -> BTreeMap<String, f64> {
    r.iter().map(|f| (f.id.clone(), f.value)).collect()
}

#[test]
fn crank_block_aggregates() {
    let r = read(CRANK, &[]).unwrap();
    let got = by_id(&r);
    let want: BTreeMap<String, f64> = [
        ("cmd.pingpong/msgs-per-sec", 300.5),
        ("cmd.pingpong/total-ms", 4.0),
        ("cmd.pingpong/runs", 2.0),
        ("cmd.pingpong/first", 7.0),
        ("cmd.no-metadata", 4.0),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(got, want);
    let best = r
        .iter()
        .find(|f| f.id == "cmd.pingpong/msgs-per-sec")
        .unwrap();
    assert_eq!(
        best.declaration.label.as_deref(),
        Some("Max msgs/sec {best}")
    );
    assert_eq!(best.declaration.direction, None);
}

#[test]
fn crank_operations() {
    let block = |op: &str, values: &[f64]| {
        let m: Vec<String> = values
            .iter()
            .map(|v| format!("{{\"Name\":\"x\",\"Value\":{v}}}"))
            .collect();
        format!(
            "#StartJobStatistics{{\"Metadata\":[{{\"Name\":\"x\",\"Aggregate\":{op}}}],\
             \"Measurements\":[{}]}}#EndJobStatistics",
            m.join(",")
        )
    };
    let v = [4.0, 1.0, 3.0, 2.0];
    for (op, want) in [
        ("\"first\"", 4.0),
        ("\"LAST\"", 2.0),
        ("\"avg\"", 2.5),
        ("\"sum\"", 10.0),
        // crank's median of an even count is the lower middle value.
        ("\"median\"", 2.0),
        ("\"max\"", 4.0),
        ("\"min\"", 1.0),
        ("\"count\"", 4.0),
        ("\"delta\"", 3.0),
        ("\"percentile75\"", 3.0),
        ("\"percentile99\"", 4.0),
        ("5", 4.0),
        ("null", 4.0),
    ] {
        assert_eq!(
            by_id(&read(&block(op, &v), &[]).unwrap())["cmd.x"],
            want,
            "{op}"
        );
    }
    assert_eq!(
        by_id(&read(&block("\"median\"", &[1.0, 9.0, 5.0]), &[]).unwrap())["cmd.x"],
        5.0
    );
    assert_eq!(
        by_id(&read(&block("\"median\"", &[7.0]), &[]).unwrap())["cmd.x"],
        7.0
    );
    assert!(read(&block("\"all\"", &v), &[]).unwrap().is_empty());
    for bad in ["\"average\"", "10", "\"percentile42\"", "true"] {
        let e = err(&block(bad, &v), &[]);
        assert!(
            e.contains("is not an operation crank defines (first, last"),
            "{bad}: {e}"
        );
        assert!(
            e.contains("the crank block at line 1") && e.contains("Aggregate"),
            "{e}"
        );
    }
    let reduce = block("\"max\"", &v).replace("\"Aggregate\"", "\"Reduce\":\"mean\",\"Aggregate\"");
    assert!(err(&reduce, &[]).contains("Reduce `mean` is not an operation"));
    let e = err(&block("\"sum\"", &[1e308, 1e308]), &[]);
    assert!(e.contains("not a finite number"), "{e}");
}

#[test]
fn crank_numeric_aggregates_refuse_text() {
    let out = "#StartJobStatistics\n{\"Metadata\":[{\"Name\":\"x\",\"Aggregate\":\"avg\"}],\
               \"Measurements\":[{\"Name\":\"x\",\"Value\":1},{\"Name\":\"x\",\"Value\":\"n/a\"}]}\n\
               #EndJobStatistics";
    let e = err(out, &[]);
    assert!(
        e.contains("`x`: its Aggregate `avg` needs numbers, but one value is the string `n/a`"),
        "{e}"
    );
}

#[test]
fn crank_blocks_share_lines_repeat_and_take_comments() {
    // Go programs print the markers without line breaks; a later block needs no metadata.
    let out = "start #StartJobStatistics{\"metadata\":[{\"name\":\"a/b\",\"aggregate\":\"max\",\
               \"shortDescription\":\"A\"}],\"measurements\":[{\"name\":\"a/b\",\"value\":1}]}\
               #EndJobStatistics#startjobstatistics{\"Measurements\":[{\"Name\":\"a/b\",\"Value\":3}]}\
               #ENDJOBSTATISTICS tail\n\
               #StartJobStatistics\n{\n  // a comment, as crank's samples write\n  \
               \"Measurements\": [ /* inline */ {\"Name\":\"a/b\",\"Value\":2, \"Note\": \"// not a comment\"} ]\n}\n\
               #EndJobStatistics\n";
    let r = read(out, &[]).unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].id.as_str(), r[0].value), ("cmd.a/b", 3.0));
    assert_eq!(r[0].declaration.label.as_deref(), Some("A"));
}

#[test]
fn crank_block_errors_name_where_it_started() {
    let e = err(
        "a\nb\n#StartJobStatistics\n{\"Measurements\":[]}\nno end\n",
        &[],
    );
    assert!(
        e.contains(
            "the crank block started (#StartJobStatistics) at line 3 of the output never ends"
        ),
        "{e}"
    );
    let e = err(
        "#StartJobStatistics\n{\n\"Measurements\": [\n}\n#EndJobStatistics",
        &[],
    );
    assert!(
        e.contains("the crank block at line 1 of the output is not valid JSON")
            && e.contains("at line 4"),
        "{e}"
    );
    let e = err(
        "#StartJobStatistics {\n#StartJobStatistics {}#EndJobStatistics",
        &[],
    );
    assert!(
        e.contains("line 2 of the output starts a crank block") && e.contains("started at line 1"),
        "{e}"
    );
    let e = err("#StartJobStatistics [1] #EndJobStatistics", &[]);
    assert!(e.contains("is not a JSON object but an array"), "{e}");
    let e = err(
        "#StartJobStatistics {\"Measurements\":{}} #EndJobStatistics",
        &[],
    );
    assert!(
        e.contains("has `Measurements` an object, not an array"),
        "{e}"
    );
    let e = err(
        "#StartJobStatistics {\"Measurements\":[{\"Value\":1}]} #EndJobStatistics",
        &[],
    );
    assert!(e.contains("Measurements[0]: no `Name`"), "{e}");
    let e = err(
        "#StartJobStatistics {\"Measurements\":[{\"Name\":\"a b\",\"Value\":1}]} #EndJobStatistics",
        &[],
    );
    assert!(e.contains("`a b`: cannot be a measurement id"), "{e}");
    // An end marker with no block is ordinary output; a block inside a protocol line is not read.
    assert!(read("#EndJobStatistics\n", &[]).unwrap().is_empty());
}

#[test]
fn crank_values_that_are_not_numbers_are_skipped() {
    let out = "#StartJobStatistics {\"Measurements\":[{\"Name\":\"v\",\"Value\":\"9.0.1\"},\
               {\"Name\":\"w\",\"Value\":{\"a\":1}},{\"Name\":\"n\",\"Value\":\"1,500\"}]} #EndJobStatistics";
    let r = read(out, &[]).unwrap();
    assert_eq!(by_id(&r), BTreeMap::from([("cmd.n".to_string(), 1500.0)]));
}

#[test]
fn all_three_sources_in_one_output() {
    let out = format!(
        "{CRANK}\n##rigor {{\"name\":\"proto\",\"value\":2,\"direction\":\"lower\"}}\nrate: 11\n"
    );
    let r = read(&out, &[rule("rate", r"^rate: (?P<value>\d+)", None)]).unwrap();
    let got = by_id(&r);
    assert_eq!(got["cmd.proto"], 2.0);
    assert_eq!(got["cmd.rate"], 11.0);
    assert_eq!(got["cmd.pingpong/msgs-per-sec"], 300.5);
    // A protocol-looking line inside a crank block is the block's text.
    let inside = "#StartJobStatistics\n##rigor {\"name\":\"x\",\"value\":1}\n#EndJobStatistics";
    assert!(err(inside, &[]).contains("is not valid JSON"));
}

#[test]
fn crank_markers_inside_json_strings_are_values() {
    let out = "#StartJobStatistics {\"Metadata\":[{\"Name\":\"m\",\"Aggregate\":\"max\",\
               \"LongDescription\":\"ends with #EndJobStatistics \\\" #StartJobStatistics {\"}],\
               \"Measurements\":[{\"Name\":\"m\",\"Value\":2}]} #EndJobStatistics";
    assert_eq!(by_id(&read(out, &[]).unwrap())["cmd.m"], 2.0);
    // An unterminated string does not hide the end on the next line: the JSON is the error.
    let e = err(
        "#StartJobStatistics {\"Measurements\":[{\"Name\":\"m\n#EndJobStatistics",
        &[],
    );
    assert!(
        e.contains("at line 1 of the output is not valid JSON"),
        "{e}"
    );
}

#[test]
fn a_ten_megabyte_crank_block_is_read() {
    let note = "n".repeat(10 << 20);
    let out = format!(
        "#StartJobStatistics\n{{\"Metadata\":[{{\"Name\":\"m\",\"LongDescription\":\"{note}\"}}],\
         \"Measurements\":[{{\"Name\":\"m\",\"Value\":1}}]}}\n#EndJobStatistics\n"
    );
    assert_eq!(by_id(&read(&out, &[]).unwrap())["cmd.m"], 1.0);
}

#[test]
fn a_thousand_rows_at_most() {
    let lines = |n: usize| -> String { (0..n).map(|i| format!("t={i} v=1\n")).collect() };
    let r = rule("v", r"t=(?P<t>\d+) v=(?P<value>\d+)", Some("t"));
    assert_eq!(
        read(&lines(1000), std::slice::from_ref(&r)).unwrap().len(),
        1000
    );
    let e = err(&lines(1001), &[r]);
    assert!(
        e.contains(
            "makes 1001 rows of figures, more than 1000 (the last, cmd.v (row t=1000), by \
                    extract rule `v` (line 1001))"
        ),
        "{e}"
    );
}

#[test]
fn a_byte_order_mark_before_the_first_line_is_not_part_of_it() {
    let r = one("\u{feff}##rigor {\"name\":\"x\",\"value\":7}\n");
    assert_eq!((r.id.as_str(), r.value), ("cmd.x", 7.0));
}
