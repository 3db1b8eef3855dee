//! The HTML report as a reader gets it: a real two-variant run writes one self-contained page
//! whose charts a headless Chromium draws (a screenshot with the variants' colours in it, the
//! SVG elements in the browser's own DOM), user strings stay text, and `rigor compare --html`
//! writes its own page.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a user might type that a careless page would run.
const EVIL: &str = "<script>alert(1)</script>";

/// Debian's `chromium` (or another distribution's `chromium-browser`) on the PATH.
fn browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// Runs the headless browser on `page` with `args`, its profile in `dir`, killed after a
/// minute; returns its stdout.
fn chromium(bin: &Path, dir: &Path, page: &Path, args: &[&str]) -> String {
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            &format!("--user-data-dir={}", dir.join("chromium-profile").display()),
        ])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium {args:?} failed: {status}");
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().unwrap()
}

/// The screenshot's pixels as RGB triples.
fn pixels(png_path: &Path) -> (usize, usize, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::fs::File::open(png_path).expect("screenshot"));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let channels = info.color_type.samples();
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "8-bit screenshot");
    let px = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|c| match channels {
            1 | 2 => [c[0]; 3],
            _ => [c[0], c[1], c[2]],
        })
        .collect();
    (info.width as usize, info.height as usize, px)
}

/// Whether some pixel is within `tol` of `rgb` in every channel.
fn has_colour(px: &[[u8; 3]], rgb: [u8; 3], tol: u8) -> bool {
    px.iter()
        .any(|p| (0..3).all(|i| p[i].abs_diff(rgb[i]) <= tol))
}

/// The `load.rps` comparison the run made, as the chart's value text shows it.
fn rps_change_text(json: &Value) -> String {
    let c = json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["measurement"] == "load.rps")
        .expect("a load.rps comparison");
    let change = c["change_pct"].as_f64().expect("a change");
    format!("{change:+.1}% {}</text>", c["verdict"].as_str().unwrap())
}

fn assert_self_contained(html: &str) {
    let lower = html.to_lowercase();
    for bad in ["<script", "src=", "href=", "<link", "@import", "url("] {
        assert!(!lower.contains(bad), "`{bad}` in the page");
    }
    // The SVG namespace is a name, not a fetch; no other address appears.
    let addresses = lower.matches("http://").count() + lower.matches("https://").count();
    let namespaces = lower
        .matches("xmlns=\"http://www.w3.org/2000/svg\"")
        .count();
    assert_eq!(
        addresses, namespaces,
        "an address other than the SVG namespace"
    );
}

#[test]
fn a_two_variant_run_renders_its_charts_in_a_headless_browser() {
    let dir = temp_dir("html-report");
    let port = free_port();
    let toml = config(port, "", "/plaintext", "")
        + &format!(
            "[scenarios.s.variants.base]\n[scenarios.s.variants.{}]\n\
             env = {{ HELLO_DELAY_US = \"500\" }}\n",
            toml_string(EVIL)
        );
    // A description with a word of 750 letters: a page that does not wrap it scrolls sideways.
    let description = format!("{} {EVIL}", "rigor".repeat(150));
    let (t, json) = run_exit(
        &dir,
        &toml,
        &[
            "-i",
            "2",
            "--allow-inconclusive",
            "--html",
            "report.html",
            "--description",
            &description,
        ],
        0,
    );
    let json = json.unwrap();
    let page = dir.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{e}\n{t}"));
    assert_self_contained(&html);
    let escaped = "&lt;script&gt;alert(1)&lt;/script&gt;";
    // The description, the variant's table columns, its legend entry and chart title.
    assert!(html.matches(escaped).count() >= 4, "{html}");
    // Two comparison charts of the variant against the baseline (its key figures at the top,
    // every measurement folded below), one latency spectrum (one row group) with a line per
    // variant; no matrix, so no sweep.
    assert_eq!(html.matches("class=\"chart chart-comparison\"").count(), 2);
    let key = html
        .find("<h3>Key figures</h3>")
        .expect("a key figures chart");
    assert!(
        key < html.find("<table>").unwrap(),
        "the answer after the tables"
    );
    assert!(html.contains("<details class=\"secondary\"><summary>comparison</summary>"));
    assert_eq!(html.matches("class=\"chart chart-spectrum\"").count(), 1);
    assert_eq!(html.matches("class=\"chart chart-sweep\"").count(), 0);
    assert!(html.contains(">base</text>") && html.contains(&format!(">{escaped}</text>")));
    // The comparison chart shows the run's own load.rps change and verdict.
    assert!(
        html.contains(&rps_change_text(&json)),
        "{}",
        rps_change_text(&json)
    );

    let Some(bin) = browser() else {
        skip("needs chromium (neither chromium nor chromium-browser is on the PATH; Debian: apt-get install chromium)");
        return;
    };
    // The folded sections opened, as a reader would, so the spectrum is on screen.
    let opened = dir.join("opened.html");
    std::fs::write(&opened, html.replace("<details ", "<details open ")).unwrap();
    let shot = dir.join("report.png");
    chromium(
        &bin,
        &dir,
        &opened,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,9000",
        ],
    );
    let (w, h, px) = pixels(&shot);
    assert_eq!((w, h), (1200, 9000));
    let ink = px.iter().filter(|p| p.iter().any(|c| *c < 235)).count();
    assert!(
        ink > w * h / 100,
        "a nearly blank page: {ink} non-white pixels"
    );
    // The variants' colours (blue, orange) only the charts use: the SVG was drawn, on screen.
    assert!(
        has_colour(&px, [0x00, 0x72, 0xb2], 40),
        "no baseline blue drawn"
    );
    assert!(
        has_colour(&px, [0xe6, 0x9f, 0x00], 40),
        "no candidate orange drawn"
    );

    // The browser's own DOM: the charts were parsed as SVG, and no script element exists.
    let dom = chromium(&bin, &dir, &page, &["--dump-dom"]);
    assert!(
        dom.matches("<svg class=\"chart chart-").count() >= 2,
        "{dom}"
    );
    assert!(dom.contains("<polyline"), "the spectrum's lines");
    assert!(
        !dom.to_lowercase().contains("<script"),
        "a script element in the DOM"
    );
    assert_no_sideways_scroll(&bin, &dir, &html);
}

/// The page in a 1400-pixel-wide window scrolls no wider than the window: a copy of it with a
/// line of script (the page has none) writes the document's scroll width into the DOM the
/// browser dumps.
fn assert_no_sideways_scroll(bin: &Path, dir: &Path, html: &str) {
    let probe = dir.join("scroll-probe.html");
    let script = "<script>document.body.setAttribute('data-scroll-width', \
                  String(document.documentElement.scrollWidth));</script>";
    std::fs::write(&probe, html.replace("</body>", &format!("{script}</body>"))).unwrap();
    let dom = chromium(bin, dir, &probe, &["--window-size=1400,900", "--dump-dom"]);
    let width: usize = dom
        .split("data-scroll-width=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no scroll width in the dumped DOM:\n{dom}"));
    assert!(
        width <= 1400,
        "the page scrolls sideways: {width} px wide at 1400 px"
    );
}

#[test]
fn compare_writes_a_page_with_a_chart_per_compared_row() {
    let dir = temp_dir("html-compare");
    let port = free_port();
    let (t, _) = run_exit(&dir, &config(port, "", "/plaintext", ""), &["-i", "2"], 0);
    std::fs::copy(dir.join("result.json"), dir.join("again.json")).unwrap();
    let out = rigor(
        &dir,
        &["compare", "result.json", "again.json", "--html", "cmp.html"],
    );
    assert_eq!(out.status.code(), Some(0), "{}\n{t}", text(&out));
    let html = std::fs::read_to_string(dir.join("cmp.html")).unwrap();
    assert_self_contained(&html);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("class=\"chart chart-comparison\"").count(), 1);
    // Identical files: every change is 0.0%, and the threshold band is drawn.
    assert!(html.contains("±2% threshold"), "{html}");
    let bars = html.matches("<g><title>").count();
    assert!(bars > 3, "{html}");
    assert_eq!(html.matches(">0.0% ").count(), bars, "{html}");
}
