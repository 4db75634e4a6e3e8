//! The HTML report in a real browser (headless Chromium, as root; else skipped): the page
//! loads without a console message, the table in the DOM holds the cells collate computed,
//! and the charts render (a screenshot with the bars' colours, not a blank page). A page that
//! does log to the console is checked too, so the console check is known to catch one. The
//! history page (`--history -f html`) loads the same way, its lines, points, whiskers and
//! change marks in the DOM and on the screenshot.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Runs headless Chromium on `page` with `args` (the flags this machine's Chromium needs), in
/// a fresh profile; returns stdout and stderr (console messages are logged there).
fn chromium(page: &Path, args: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let mut c = Command::new("chromium");
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .args(args)
    .arg(format!("file://{}", page.display()));
    let (st, out, err) = testkit::Captured::start(&mut c).wait_output(Duration::from_secs(120));
    assert!(st.success(), "chromium {args:?}: {st}\n{err}");
    (out, err)
}

/// The console messages Chromium logged.
fn console(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

/// The text of every `<td>` of the DOM's table body, tags stripped and entities decoded.
fn body_cells(dom: &str) -> Vec<String> {
    let body = &dom[dom.find("<tbody>").unwrap()..dom.find("</tbody>").unwrap()];
    body.split("<td")
        .skip(1)
        .map(|c| {
            let inner = &c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()];
            inner
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&amp;", "&")
        })
        .collect()
}

/// A report input: two rows, a worse and a better column against the baseline.
fn input() -> String {
    time_and_rate(
        "time make -j8 bzImage on a long named machine with a very long name that has to wrap",
        0.002,
        &[
            ("bare", 1.0, 100e6),
            ("slow vm", 2.0, 90e6),
            ("fast vm", 0.8, 150e6),
        ],
    )
}

/// Every value a dot in the page Chromium built (`v` the same matrix as JSON), and the
/// baseline's band in each of the two charts.
fn marks(dom: &str, v: &Value) {
    let n: u64 = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["cells"].as_array().unwrap())
        .filter_map(|c| c["n"].as_u64())
        .sum();
    assert_eq!(
        dom.matches("<circle class=\"dot\"").count() as u64,
        n,
        "{dom}"
    );
    assert_eq!(dom.matches("class=\"band\"").count(), 2, "{dom}");
}

#[test]
fn the_report_renders_in_chromium() {
    if !testkit::need_root("the headless browser test") || !testkit::need_tool("chromium") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let args = ["-f", "html", "--baseline", "bare"];
    let out = run(&args, &input());
    assert!(out.status.success(), "{}", stderr(&out));
    let html = stdout(&out);
    // Self-contained: nothing to fetch.
    for outside in ["<link", "src=", "<script", "url(", "@import"] {
        assert!(!html.contains(outside), "{outside} in the page");
    }
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();

    let (dom, err) = chromium(&page, &["--dump-dom"]);
    assert!(console(&err).is_empty(), "console: {:?}", console(&err));
    let v: Value =
        serde_json::from_slice(&run(&["-f", "json", "--baseline", "bare"], &input()).stdout)
            .unwrap();
    let mut want: Vec<String> = Vec::new();
    for r in v["rows"].as_array().unwrap() {
        want.extend(
            r["cells"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["text"].as_str().unwrap().to_string()),
        );
    }
    let got = body_cells(&dom);
    // Every cell of the matrix in order, then the overall line's (baseline: -).
    assert_eq!(&got[..want.len()], &want[..], "{dom}");
    assert!(
        want.iter().any(|t| t.ends_with("worse")) && want.iter().any(|t| t.ends_with("better"))
    );
    assert_eq!(got.len(), want.len() + 3, "{got:?}");
    assert_eq!(dom.matches("<svg").count(), 2, "one chart per row");
    marks(&dom, &v);

    let shot = dir.path().join("shot.png");
    let arg = format!("--screenshot={}", shot.display());
    let (_, err) = chromium(&page, &[&arg, "--window-size=900,1200"]);
    assert!(console(&err).is_empty(), "console: {:?}", console(&err));
    let (w, h, px) = pixels(&shot);
    assert_eq!((w, h), (900, 1200));
    let white = px.iter().filter(|p| **p == [255, 255, 255]).count();
    assert!(
        white < px.len() * 97 / 100,
        "a blank page: {white} of {} white",
        px.len()
    );
    // The bars: a worse one red, a better one green, the baseline grey.
    for (rgb, what) in [
        ([198, 40, 40], "red"),
        ([46, 125, 50], "green"),
        ([140, 140, 140], "grey"),
    ] {
        let n = px.iter().filter(|p| **p == rgb).count();
        assert!(n > 500, "{n} {what} pixels: no {what} bar");
    }

    // The check above would see a console message: a page that logs one.
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><p>x</p><script>console.error('seen')</script>",
    )
    .unwrap();
    let (_, err) = chromium(&bad, &["--dump-dom"]);
    assert_eq!(console(&err).len(), 1, "{err}");
}

/// The screenshot's width, height and RGB pixels.
fn pixels(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("screenshot colour type {other:?}"),
    };
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let px = buf[..info.buffer_size()]
        .chunks(step)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width, info.height, px)
}

/// The history page in Chromium: no console message; every series' line, points, CI
/// whiskers and its change mark in the DOM Chromium built; the screenshot not blank, with
/// the line, the points and the change's red drawn.
#[test]
fn the_history_page_renders_in_chromium() {
    if !testkit::need_root("the headless browser test") || !testkit::need_tool("chromium") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut input = history("bare/xfs", "time make", 40, 8, 1, (25, 0.15), 0.03);
    input.push_str(&history(
        "para/lvm",
        "time make",
        30,
        8,
        2,
        (999, 0.0),
        0.03,
    ));
    let out = run(&["--history", "-f", "html"], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = stdout(&out);
    for outside in ["<link", "src=", "<script", "url(", "@import"] {
        assert!(!html.contains(outside), "{outside} in the page");
    }
    let page = dir.path().join("history.html");
    std::fs::write(&page, &html).unwrap();
    let (dom, err) = chromium(&page, &["--dump-dom"]);
    assert!(console(&err).is_empty(), "console: {:?}", console(&err));
    history_marks(&dom);

    let shot = dir.path().join("shot.png");
    let arg = format!("--screenshot={}", shot.display());
    let (_, err) = chromium(&page, &[&arg, "--window-size=900,1000"]);
    assert!(console(&err).is_empty(), "console: {:?}", console(&err));
    let (w, h, px) = pixels(&shot);
    assert_eq!((w, h), (900, 1000));
    let white = px.iter().filter(|p| **p == [255, 255, 255]).count();
    assert!(
        white < px.len() * 97 / 100,
        "a blank page: {white} of {} white",
        px.len()
    );
    // The change mark red (a worse time), the points dark, the line blue (with its
    // antialiased edges: near the colour).
    let near = |p: &[u8; 3], c: [u8; 3]| (0..3).all(|i| p[i].abs_diff(c[i]) <= 24);
    for (rgb, what, least) in [
        ([198, 40, 40], "change mark", 150),
        ([26, 26, 26], "points", 200),
        ([78, 121, 167], "line", 200),
    ] {
        let n = px.iter().filter(|p| near(p, rgb)).count();
        eprintln!("{what}: {n} pixels");
        assert!(n > least, "{n} pixels of the {what}");
    }
}

/// The marks of the two series in the DOM: 40 and 30 points, a whisker each, a line each, one
/// change (at run 25 of the first) with its shift and the kernel that differs.
fn history_marks(dom: &str) {
    assert_eq!(dom.matches("<svg").count(), 2, "a chart per series");
    assert_eq!(dom.matches("<circle").count(), 70, "a point per run");
    assert_eq!(dom.matches("class=\"line\"").count(), 2);
    let whiskers: usize = dom
        .split("class=\"ci\" d=\"")
        .skip(1)
        .map(|d| d[..d.find('"').unwrap()].matches('M').count())
        .sum();
    assert_eq!(whiskers, 70, "a whisker per run (8 values each)");
    assert_eq!(dom.matches("class=\"change\"").count(), 1, "{dom}");
    assert_eq!(dom.matches("class=\"shift\"").count(), 1);
    assert!(dom.contains(">+1"), "the shift written at the mark");
    assert!(dom.contains("change at run 2"), "{dom}");
    assert!(dom.contains("<li>kernel: 6.1.0 -&gt; 6.12.0</li>"), "{dom}");
    assert_eq!(dom.matches("No change of level.").count(), 1);
}
