use super::*;

fn family<'a>(fs: &'a [Family], name: &str) -> &'a Family {
    fs.iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no family {name} in {fs:?}"))
}

/// As Go's client_golang (promhttp, text 0.0.4) writes it.
const GO: &str = r#"# HELP go_gc_duration_seconds A summary of the pause duration of garbage collection cycles.
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0"} 2.3795e-05
go_gc_duration_seconds{quantile="0.5"} 4.1e-05
go_gc_duration_seconds{quantile="1"} 0.000273813
go_gc_duration_seconds_sum 0.004135436
go_gc_duration_seconds_count 73
# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 42
# HELP go_info Information about the Go environment.
# TYPE go_info gauge
go_info{version="go1.21.5"} 1
# HELP go_memstats_alloc_bytes_total Total number of bytes allocated, even if freed.
# TYPE go_memstats_alloc_bytes_total counter
go_memstats_alloc_bytes_total 1.546223512e+09
# HELP http_request_duration_seconds Request latency.
# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_bucket{handler="/",le="0.005"} 10
http_request_duration_seconds_bucket{handler="/",le="+Inf"} 15
http_request_duration_seconds_sum{handler="/"} 0.12
http_request_duration_seconds_count{handler="/"} 15
# HELP promhttp_metric_handler_requests_total Total number of scrapes by HTTP status code.
# TYPE promhttp_metric_handler_requests_total counter
promhttp_metric_handler_requests_total{code="200"} 12
promhttp_metric_handler_requests_total{code="500"} 0
"#;

#[test]
fn go_client_text() {
    let fs = parse(GO).unwrap();
    assert_eq!(fs.len(), 6);
    let gc = family(&fs, "go_gc_duration_seconds");
    assert_eq!(gc.kind, Kind::Summary);
    assert_eq!(gc.samples.len(), 5);
    assert_eq!(gc.samples[4].name, "go_gc_duration_seconds_count");
    assert_eq!(gc.samples[4].value, 73.0);
    let alloc = family(&fs, "go_memstats_alloc_bytes_total");
    assert_eq!(
        (alloc.kind, alloc.samples[0].value),
        (Kind::Counter, 1.546223512e9)
    );
    let h = family(&fs, "http_request_duration_seconds");
    assert_eq!((h.kind, h.samples.len()), (Kind::Histogram, 4));
    assert_eq!(h.samples[1].value, f64::INFINITY.min(15.0));
    assert_eq!(
        h.samples[1].labels,
        vec![
            ("handler".to_string(), "/".to_string()),
            ("le".to_string(), "+Inf".to_string())
        ]
    );
    let p = family(&fs, "promhttp_metric_handler_requests_total");
    assert_eq!(p.samples.len(), 2);
}

/// As Python's prometheus_client writes it: the text format (a counter's creation time as a
/// gauge family of its own, floats with `.0`, escaped label values) and OpenMetrics.
const PYTHON_TEXT: &str = "# HELP requests_total Requests\n\
# TYPE requests_total counter\n\
requests_total{path=\"/a \\\"quoted\\\" \\\\ path\\nnext\"} 3.0\n\
requests_total{path=\"/b\"} 4.0\n\
# HELP requests_created Requests\n\
# TYPE requests_created gauge\n\
requests_created{path=\"/b\"} 1.7000000001e+09\n\
# HELP temp Temperature\n\
# TYPE temp gauge\n\
temp NaN\n";

#[test]
fn python_client_text() {
    let fs = parse(PYTHON_TEXT).unwrap();
    let r = family(&fs, "requests_total");
    assert_eq!(r.samples[0].labels[0].1, "/a \"quoted\" \\ path\nnext");
    assert_eq!(r.samples[1].value, 4.0);
    assert_eq!(family(&fs, "requests_created").kind, Kind::Gauge);
    assert!(family(&fs, "temp").samples[0].value.is_nan());
}

const PYTHON_OPENMETRICS: &str = r#"# HELP requests Requests
# TYPE requests counter
requests_total{path="/"} 3.0
requests_created{path="/"} 1.7000000001e+09
# HELP latency Latency
# TYPE latency histogram
latency_bucket{le="0.1"} 1.0 # {trace_id="abc"} 0.05 1.7e9
latency_bucket{le="+Inf"} 2.0
latency_count 2.0
latency_sum 0.3
latency_created 1.7e9
# HELP build Build
# TYPE build info
build_info{version="1.2"} 1.0
# EOF
this line is after EOF and never read
"#;

#[test]
fn openmetrics_with_exemplars_and_eof() {
    let fs = parse(PYTHON_OPENMETRICS).unwrap();
    let r = family(&fs, "requests");
    assert_eq!(r.kind, Kind::Counter);
    let names: Vec<&str> = r.samples.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["requests_total", "requests_created"]);
    let l = family(&fs, "latency");
    assert_eq!(l.samples.len(), 5);
    assert_eq!(l.samples[0].value, 1.0);
    assert_eq!(family(&fs, "build").kind, Kind::Other);
    assert_eq!(fs.len(), 3);
}

/// As .NET's prometheus-net writes it: timestamps on some samples, CRLF line ends.
const DOTNET: &str = "# HELP dotnet_collection_count_total GC collection count\r\n\
# TYPE dotnet_collection_count_total counter\r\n\
dotnet_collection_count_total{generation=\"1\"} 0\r\n\
dotnet_collection_count_total{generation=\"0\"} 12\r\n\
# HELP process_working_set_bytes Process working set\r\n\
# TYPE process_working_set_bytes gauge\r\n\
process_working_set_bytes 60493824\r\n\
# HELP myapp_requests_total Requests\r\n\
# TYPE myapp_requests_total counter\r\n\
myapp_requests_total{method=\"GET\",endpoint=\"/\"} 5 1700000000000\r\n\
myapp_requests_total{method=\"POST\",endpoint=\"/\"} -0 1700000000000\r\n";

#[test]
fn dotnet_client_text() {
    let fs = parse(DOTNET).unwrap();
    assert_eq!(
        family(&fs, "dotnet_collection_count_total").samples[1].value,
        12.0
    );
    let r = family(&fs, "myapp_requests_total");
    assert_eq!(r.samples[0].value, 5.0);
    assert_eq!(r.samples[0].labels[1], ("endpoint".into(), "/".into()));
    assert_eq!(
        family(&fs, "process_working_set_bytes").samples[0].value,
        60493824.0
    );
}

#[test]
fn untyped_and_quoted_names() {
    let fs = parse(
        "plain 1\nplain{a=\"x\"} -Inf\n{\"my.dotted\", code=\"200\"} 2\n\
         # a free comment\nspaced   { a = \"1\" , }   7\n",
    )
    .unwrap();
    assert_eq!(family(&fs, "plain").kind, Kind::Untyped);
    assert_eq!(family(&fs, "plain").samples[1].value, f64::NEG_INFINITY);
    let d = family(&fs, "my.dotted");
    assert_eq!(d.samples[0].labels, vec![("code".into(), "200".into())]);
    assert_eq!(family(&fs, "spaced").samples[0].value, 7.0);
}

#[test]
fn what_is_not_the_format_names_the_line() {
    for (text, line, why) in [
        ("<!DOCTYPE html>\n<html>", 1, "expected a metric name"),
        ("{\"requests\": 3}", 1, "expected `,` or `}`"),
        ("ok 1\nx{a=\"1} 2", 2, "closing quote"),
        ("x 1 2 3", 1, "unexpected text"),
        ("x one", 1, "not a number"),
        ("x inf", 1, "not a number"),
        ("x 1 soon", 1, "timestamp"),
        ("x{a=1} 2", 1, "quoted label value"),
        ("x{a=\"1\" b=\"2\"} 2", 1, "expected `,` or `}`"),
        ("x", 1, "space before the value"),
        ("x{} 1\n# TYPE x gauge", 2, "second TYPE"),
    ] {
        let e = parse(text).unwrap_err();
        assert!(
            e.0.starts_with(&format!("line {line}:")) && e.0.contains(why),
            "{text:?}: {e}"
        );
    }
}

#[test]
fn an_empty_page_has_no_families() {
    assert_eq!(parse("").unwrap(), vec![]);
    assert_eq!(parse("\n# HELP x y\n").unwrap(), vec![]);
}
