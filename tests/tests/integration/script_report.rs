//! `./benchmatrix --format html`: the report is printed and also kept as report.html in the
//! results directory, and the script says where.

use benchmatrix_tests::suite::loopback_run;
use benchmatrix_tests::{empty_dir, explain, ok};

#[test]
fn the_html_matrix_is_kept_as_report_html() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // The network step alone: it runs on loopback as any user.
    let ([work, scratch, res], out) =
        loopback_run(tmp.path(), "net", "report/test", &["--format", "html"]);
    ok(&out, "--format html");
    let report = res.join("report.html");
    let page = std::fs::read_to_string(&report).expect("results/report.html");
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(
        page.contains("network throughput this-&gt;loopback"),
        "{page}"
    );
    assert!(page.contains("<svg"), "the charts: {page}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        page,
        "printed as well"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("report written to {}", report.display())),
        "{}",
        explain(&out)
    );
    empty_dir(&work);
    empty_dir(&scratch);
}
