//! `report.xml`: JUnit XML, one test suite per area, one test case per case.
//! Expected failures are reported as skipped (with the reason), so that CI
//! dashboards show them without failing; protocol notes go to system-out.

use super::{Report, Status};
use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};

pub fn render(report: &Report) -> String {
    let mut junit = quick_junit::Report::new("cosmos-conformance");
    for (area, cases) in report.areas() {
        let mut suite = TestSuite::new(area);
        for case in cases {
            let status = match case.status {
                Status::Passed => TestCaseStatus::success(),
                Status::Failed | Status::UnexpectedPass => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    status
                        .set_type(case.status.as_str())
                        .set_message(case.message.clone().unwrap_or_default())
                        .set_description(format!(
                            "expected: {}\nobserved: {}",
                            case.expected, case.observed
                        ));
                    status
                }
                Status::ExpectedFailure | Status::Skipped => {
                    let mut status = TestCaseStatus::skipped();
                    let why = case
                        .reason
                        .clone()
                        .or_else(|| case.message.clone())
                        .unwrap_or_default();
                    status
                        .set_type(case.status.as_str())
                        .set_message(format!("{}: {why}", case.status.as_str()));
                    status
                }
            };
            let mut test = TestCase::new(format!("{} {}", case.id, case.title), status);
            test.set_classname(format!("conformance.{area}"));
            if !case.protocol.is_empty() {
                // Beside the verdict, never part of it.
                let notes: Vec<String> = case
                    .protocol
                    .iter()
                    .map(|n| format!("protocol: {n}"))
                    .collect();
                test.set_system_out(notes.join("\n"));
            }
            suite.add_test_case(test);
        }
        junit.add_test_suite(suite);
    }
    junit.to_string().expect("JUnit XML serialises")
}
