//! Unit tests of the JUnit writer: counts, escaping, every outcome's element.

use std::time::Duration;

use super::*;

fn case(name: &str, outcome: JunitOutcome) -> JunitCase {
    JunitCase {
        classname: "gw.weather".into(),
        name: name.into(),
        time: Duration::from_millis(1500),
        outcome,
    }
}

#[test]
fn counts_and_elements() {
    let xml = junit(
        "tooltape gateway gw",
        "2026-11-25T17:50:00",
        &[
            case("a", JunitOutcome::Passed),
            case(
                "b",
                JunitOutcome::Failed {
                    message: "lost <the> call & \"its\" id".into(),
                    detail: "breaking upstream: x\nbehaviour downstream: y".into(),
                },
            ),
            case(
                "c",
                JunitOutcome::Broken {
                    message: "refused".into(),
                    detail: String::new(),
                },
            ),
            case(
                "d",
                JunitOutcome::Skipped {
                    message: "known failure: no switch".into(),
                },
            ),
        ],
    );
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
    let counts = r#"tests="4" failures="1" errors="1" skipped="1" time="6.000""#;
    assert_eq!(xml.matches(counts).count(), 2, "{xml}");
    assert!(xml.contains(r#"<testcase classname="gw.weather" name="a" time="1.500"/>"#));
    assert!(xml.contains(
        r#"<failure message="lost &lt;the&gt; call &amp; &quot;its&quot; id">breaking upstream: x
behaviour downstream: y</failure>"#
    ));
    assert!(xml.contains(r#"<error message="refused"></error>"#));
    assert!(xml.contains(r#"<skipped message="known failure: no switch"/>"#));
    assert!(xml.contains(r#"timestamp="2026-11-25T17:50:00""#));
}

#[test]
fn characters_xml_cannot_carry_are_written_as_escapes() {
    assert_eq!(text("a\u{0}b\u{1b}c\td\ne"), "a\\u{0000}b\\u{001b}c\td\ne");
    assert_eq!(
        attr("x\ny\t\"z\"\u{FFFF}"),
        "x&#10;y&#9;&quot;z&quot;\\u{ffff}"
    );
    assert_eq!(text("]]>"), "]]&gt;");
}
