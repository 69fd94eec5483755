//! The conformance matrix as one self-contained HTML page: inline CSS and JS, no fonts, no
//! external assets. A colour grid with per-cell details on hover (`title`) and on click (a
//! details panel), a legend and a provider summary. Pure.

use super::text::notes;

/// The command that regenerates the page and its screenshot.
pub(crate) const REGENERATE_HTML: &str =
    "cargo run -- report --format html --out target/conformance.html   (or: make report-png)";
use super::matrix::{Parity, ReplayMatrix, Status, provenance_tag, summary};
use crate::text::html_escape as esc;

const CSS: &str = r#"
*{box-sizing:border-box}
body{margin:0;padding:20px 24px;font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;background:#f6f7f9}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:15px;margin:0 0 8px}
p.sub{margin:0 0 16px;color:#5a6272}
code{font:12px ui-monospace,Menlo,Consolas,monospace;background:#eceef2;padding:1px 4px;border-radius:3px}
.top{display:flex;flex-wrap:wrap;gap:20px;align-items:flex-start;margin-bottom:16px}
.box{background:#fff;border:1px solid #d9dde4;border-radius:8px;padding:12px 14px}
table{border-collapse:collapse}
.summary th,.summary td{white-space:nowrap;padding:3px 6px;text-align:right;border-bottom:1px solid #eceef2}
.summary th:first-child,.summary td:first-child{text-align:left;font-weight:600}
.legend{display:grid;grid-template-columns:auto 180px auto 180px;gap:5px 10px;align-items:center;font-size:12px}
.sw{white-space:nowrap;display:inline-block;min-width:64px;text-align:center;padding:2px 6px;border-radius:4px;font-weight:600}
.main{display:flex;gap:20px;align-items:flex-start}
.grid{background:#fff;border:1px solid #d9dde4}
.grid th{position:sticky;top:0;background:#2b3342;color:#fff;padding:6px 8px;text-align:left;font-weight:600;white-space:nowrap}
.grid th.provider{text-align:center;min-width:118px}
.grid td{padding:3px 8px;border-bottom:1px solid #eceef2;white-space:nowrap}
.grid tr.first td{border-top:2px solid #9aa3b2}
.grid td.case{font-weight:600}
.grid td.mode{color:#5a6272}
td.cell{text-align:center;cursor:pointer;border-left:2px solid #fff;font-weight:600}
td.cell:hover,td.cell:focus{outline:2px solid #1d2330;outline-offset:-2px}
td.cell.selected{outline:3px solid #1565c0;outline-offset:-3px}
sup{line-height:0;font-size:10px}
.prov{font-weight:400;font-size:11px;opacity:.75;margin-left:4px}
.par{margin-left:4px}
.s-pass{background:#c8e6c9;color:#1b5e20}
.s-fail{background:#e53935;color:#fff}
.s-known-failure{background:#ffcc80;color:#6d3d00}
.s-not-applicable{background:#cfd8dc;color:#37474f}
.s-missing{background:#f1f1f1;color:#8a8f98;font-weight:400}
.s-stale{background:#d1c4e9;color:#4527a0}
.s-broken{background:#6d1b1b;color:#fff}
.par-bad{background:#fff;color:#c62828;border-radius:3px;padding:0 3px}
#details{position:sticky;top:12px;width:360px;flex:none}
#details dl{display:grid;grid-template-columns:auto 1fr;gap:4px 10px;margin:0}
#details dt{color:#5a6272}
#details dd{margin:0;word-break:break-word}
"#;

const JS: &str = r#"
(function () {
  var panel = document.getElementById('details-body');
  var fields = [['trial', 'Trial'], ['status', 'Status'], ['detail', 'Why'], ['prov', 'Cassette'], ['calls', 'Calls'], ['parity', 'Parity']];
  var selected = null;
  function show(td) {
    if (selected) { selected.classList.remove('selected'); }
    selected = td;
    td.classList.add('selected');
    var dl = document.createElement('dl');
    fields.forEach(function (f) {
      var v = td.getAttribute('data-' + f[0]);
      if (!v) { return; }
      var dt = document.createElement('dt');
      dt.textContent = f[1];
      var dd = document.createElement('dd');
      dd.textContent = v;
      dl.appendChild(dt);
      dl.appendChild(dd);
    });
    panel.replaceChildren(dl);
  }
  var cells = document.querySelectorAll('td.cell');
  cells.forEach(function (td) {
    td.addEventListener('click', function () { show(td); });
    td.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); show(td); } });
  });
  var first = document.querySelector('td.cell[data-detail]');
  if (first) { show(first); }
  document.documentElement.setAttribute('data-script', 'ok');
  document.documentElement.setAttribute('data-cells', String(cells.length));
})();
"#;

/// The whole page.
pub fn page(m: &ReplayMatrix) -> String {
    let n = notes(m);
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>tooltape conformance matrix</title>\n");
    h.push_str(&format!(
        "<style>{CSS}</style>\n</head>\n<body data-rows=\"{}\">\n",
        m.rows.len()
    ));
    h.push_str("<h1>tooltape conformance matrix</h1>\n");
    h.push_str(&format!(
        "<p class=\"sub\">Each trial replayed against its committed cassette. Rows: case × tool_choice × mode; columns: providers. Hover a cell for details, click it for the panel. Regenerate: <code>{}</code></p>\n",
        esc(REGENERATE_HTML)
    ));
    summary_box(&mut h, m);
    legend_box(&mut h);
    grid(&mut h, m, &n);
    h.push_str("</tbody>\n</table>\n<aside id=\"details\" class=\"box\"><h2>Details</h2><div id=\"details-body\">Click a cell.</div>");
    if !n.texts.is_empty() {
        h.push_str("<h2 style=\"margin-top:14px\">Notes</h2><ol>");
        for t in &n.texts {
            h.push_str(&format!("<li>{}</li>", esc(t)));
        }
        h.push_str("</ol>");
    }
    h.push_str("</aside>\n</div>\n");
    h.push_str(&format!("<script>{JS}</script>\n</body>\n</html>\n"));
    h
}

/// The providers' summary: one row per provider, its count of each status, parity and cassettes.
fn summary_box(h: &mut String, m: &ReplayMatrix) {
    h.push_str("<div class=\"top\">\n<div class=\"box\"><h2>Providers</h2><table class=\"summary\"><tr><th>provider</th>");
    for s in Status::ALL {
        h.push_str(&format!(
            "<th><span class=\"sw s-{}\">{}</span></th>",
            s.as_str(),
            esc(s.short())
        ));
    }
    h.push_str("<th>parity</th><th>rec / syn / imp</th></tr>\n");
    for p in &m.providers {
        let s = summary(m, *p);
        h.push_str(&format!("<tr><td>{p}</td>"));
        for st in Status::ALL {
            h.push_str(&format!("<td>{}</td>", s.count(st)));
        }
        h.push_str(&format!(
            "<td>{}/{}</td><td>{} / {} / {}</td></tr>\n",
            s.parity_same,
            s.parity_same + s.parity_differs,
            s.recorded,
            s.synthetic,
            s.imported
        ));
    }
}

/// The legend: what each status and mark means.
fn legend_box(h: &mut String) {
    h.push_str("</table></div>\n<div class=\"box\"><h2>Legend</h2><div class=\"legend\">\n");
    for s in Status::ALL {
        h.push_str(&format!(
            "<span class=\"sw s-{}\">{}</span><span>{}</span>\n",
            s.as_str(),
            esc(s.short()),
            esc(s.meaning())
        ));
    }
    h.push_str("<span class=\"sw\">syn · rec · imp</span><span>cassette: synthetic (simulator), recorded, imported</span>\n");
    h.push_str("<span class=\"sw\">⇄ · <span class=\"par-bad\">≠</span></span><span>stream row agrees with buffered (calls, verdict; whole outcome bar ids/usage if synthetic) · differs</span>\n");
}

/// The grid: a column per provider, a row per case, tool choice and mode.
fn grid(h: &mut String, m: &ReplayMatrix, n: &super::text::Notes) {
    h.push_str("</div></div>\n</div>\n<div class=\"main\">\n<table class=\"grid\">\n<thead><tr><th>case</th><th>choice</th><th>mode</th>");
    for p in &m.providers {
        h.push_str(&format!(
            "<th class=\"provider\" data-provider=\"{p}\">{p}</th>"
        ));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    let mut last_case = "";
    for (i, row) in m.rows.iter().enumerate() {
        let first = row.case != last_case;
        last_case = &row.case;
        h.push_str(if first {
            "<tr class=\"first\">"
        } else {
            "<tr>"
        });
        let case = if first { esc(&row.case) } else { String::new() };
        h.push_str(&format!(
            "<td class=\"case\">{case}</td><td>{}</td><td class=\"mode\">{}</td>",
            esc(&row.choice),
            row.mode
        ));
        for p in &m.providers {
            let Some(c) = row.cells.get(p) else {
                h.push_str("<td></td>");
                continue;
            };
            let note = n
                .detail
                .get(&(i, *p))
                .map(|k| format!("<sup>{k}</sup>"))
                .unwrap_or_default();
            cell(h, row, c, &note);
        }
        h.push_str("</tr>\n");
    }
}

/// One cell: its status, with its trial, detail, cassette, calls and parity as attributes and title.
fn cell(h: &mut String, row: &super::matrix::Row, c: &super::matrix::ReplayEntry, note: &str) {
    let mut attrs = format!(
        " data-trial=\"{}\" data-status=\"{}\"",
        esc(&c.trial),
        c.status.as_str()
    );
    let mut title = format!("{}: {}", c.trial, c.status.as_str());
    if let Some(d) = &c.detail {
        attrs.push_str(&format!(" data-detail=\"{}\"", esc(d)));
        title.push_str(&format!(" — {d}"));
    }
    if let Some(k) = c.provenance {
        attrs.push_str(&format!(" data-prov=\"{}\"", k.as_str()));
        title.push_str(&format!(" (cassette {})", k.as_str()));
    }
    if let Some(calls) = &c.calls {
        attrs.push_str(&format!(
            " data-calls=\"{}\"",
            esc(&format!("[{}]", calls.join(", ")))
        ));
    }
    let mut mark = String::new();
    match &c.parity {
        Some(Parity::Same) => {
            attrs.push_str(" data-parity=\"stream and buffered agree\"");
            if row.mode == "stream" {
                mark = "<span class=\"par\">⇄</span>".into();
            }
        }
        Some(Parity::Differs(why)) => {
            attrs.push_str(&format!(" data-parity=\"differs: {}\"", esc(why)));
            title.push_str(&format!("; parity differs: {why}"));
            if row.mode == "stream" {
                mark = "<span class=\"par par-bad\">≠</span>".into();
            }
        }
        None => {}
    }
    h.push_str(&format!(
        "<td class=\"cell s-{}\" tabindex=\"0\" title=\"{}\"{attrs}>{}{note}<span class=\"prov\">{}</span>{mark}</td>",
        c.status.as_str(),
        esc(&title),
        esc(c.status.short()),
        provenance_tag(c.provenance),
    ));
}
