use super::*;

#[test]
fn clip_cuts_by_characters_and_marks_the_cut() {
    assert_eq!(clip("héllo", 5), "héllo");
    assert_eq!(clip("héllo", 2), "hé…");
    assert_eq!(clip("", 0), "");
}

#[test]
fn clip_bytes_cuts_on_a_character_boundary() {
    assert_eq!(clip_bytes("héllo", 6), "héllo");
    assert_eq!(clip_bytes("héllo", 2), "h…");
    assert_eq!(clip_bytes("héllo", 3), "hé…");
}

#[test]
fn a_markdown_cell_escapes_pipes_and_line_breaks() {
    assert_eq!(md_cell("a|b\nc"), "a\\|b c");
}

#[test]
fn html_escape_covers_content_and_attributes() {
    assert_eq!(
        html_escape(r#"<a href="x">'&'</a>"#),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
}
