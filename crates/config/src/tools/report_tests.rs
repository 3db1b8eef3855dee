//! The tool reports' checks against what each tool really printed: the recorded outputs of
//! every supported tool parse into figures that agree with each other.

use super::report::ToolReport;
use super::Tool;

#[test]
fn requests_duration_and_rate_must_agree() {
    let report = |output: &str| ToolReport {
        tool: "wrk".into(),
        version: None,
        command: vec![],
        output: output.into(),
        stderr: String::new(),
        exit: "exit status: 0".into(),
        wall_secs: 1.05,
        cpu_secs: None,
        cores: 1,
        figures: Tool::Wrk.parse(output).unwrap(),
        aborted_at_deadline: None,
        warmup: None,
    };
    let fake = "Running 1s test @ http://127.0.0.1:1/\n  1 threads and 1 connections\n\
                    \x20 1000 requests in 1.00s, 120.00KB read\nRequests/sec: 999999.00\n\
                    Transfer/sec:    120.00KB\n";
    let why = report(fake).impossible_claim(Some(1.0)).expect("disagree");
    assert!(
        why.contains("1000 requests in 1.00 s (1000.00/s) but a rate of 999999.00/s"),
        "{why}"
    );
    let honest = fake.replace("999999.00", "998.31");
    assert_eq!(report(&honest).impossible_claim(Some(1.0)), None);
}

#[test]
fn every_recorded_tool_output_agrees_with_itself() {
    let fixtures = [
        (Tool::Wrk, include_str!("fixtures/wrk_latency.txt")),
        (Tool::Wrk, include_str!("fixtures/wrk_plain.txt")),
        (Tool::Wrk, include_str!("fixtures/wrk_non2xx.txt")),
        (Tool::Wrk, include_str!("fixtures/wrk_timeout.txt")),
        (Tool::Wrk2, include_str!("fixtures/wrk2_latency.txt")),
        (
            Tool::Bombardier,
            include_str!("fixtures/bombardier_v125_latency.json"),
        ),
        (
            Tool::Bombardier,
            include_str!("fixtures/bombardier_v125_non2xx.json"),
        ),
        (Tool::H2load, include_str!("fixtures/h2load_h1.txt")),
        (Tool::H2load, include_str!("fixtures/h2load_non2xx.txt")),
        (Tool::Oha, include_str!("fixtures/oha_plain.json")),
        (Tool::Oha, include_str!("fixtures/oha_non2xx.json")),
    ];
    for (tool, output) in fixtures {
        let figures = tool.parse(output).unwrap();
        let r = ToolReport {
            tool: tool.name().into(),
            version: None,
            command: vec![],
            output: output.into(),
            stderr: String::new(),
            exit: "exit status: 0".into(),
            wall_secs: 1e6,
            cpu_secs: None,
            cores: 1,
            figures,
            aborted_at_deadline: None,
            warmup: None,
        };
        assert_eq!(r.impossible_claim(None), None, "{output}");
    }
}
