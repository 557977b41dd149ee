// SweepToHtml (contract in sweep_html.h).
#include "tools/sweep/sweep_html.h"

#include "hlo/json_text.h"

namespace sweep {
namespace {

std::string Escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON inside <script>: no '<' at all, so neither "</script" nor "<!--" can appear.
std::string ScriptSafe(const std::string& json) {
  std::string out;
  for (char c : json) out += c == '<' ? std::string("\\u003c") : std::string(1, c);
  return out;
}

// A script body: "</" cannot end the element once written "<\/" (same meaning in JS strings
// and regular expressions, where Chart.js's minified source could contain it).
std::string ScriptText(const std::string& code) {
  std::string out;
  for (size_t i = 0; i < code.size(); ++i) {
    out += code[i];
    if (code[i] == '<' && i + 1 < code.size() && code[i + 1] == '/') out += '\\';
  }
  return out;
}

std::string TableJson(const SweepTable& table) {
  const nlohmann::ordered_json json = {{"columns", table.columns}, {"rows", table.rows}};
  return hlo::JsonText(json, -1);
}

// Draws one bar chart per charted column, bars coloured by their source, labels from the swept
// columns (between `point` and `config`), then marks what it drew.
constexpr char kPageScript[] = R"JS(
window.addEventListener('error', function (event) {
  document.getElementById('script-errors').textContent += 'script error: ' + event.message + '\n';
});
function draw() {
  const table = JSON.parse(document.getElementById('sweep-data').textContent);
  const col = function (name) { return table.columns.indexOf(name); };
  const first = col('point') + 1, last = col('config');
  const labels = table.rows.map(function (row) {
    return '#' + row[col('point')] + ' ' + row.slice(first, last).join(' ');
  });
  let drawn = 0;
  CHARTED.forEach(function (chart, i) {
    const canvas = document.getElementById('chart-' + i);
    const c = col(chart[0]), source = col(chart[2]);
    new Chart(canvas, {
      type: 'bar',
      data: {labels: labels, datasets: [{label: chart[1],
        backgroundColor: table.rows.map(function (row) {
          return row[source] === 'simulated' ? SIMULATED_COLOUR : ESTIMATED_COLOUR;
        }),
        data: table.rows.map(function (row) {
          return row[c] === '' ? null : parseFloat(row[c]);
        })}]},
      options: {animation: false, responsive: false,
                plugins: {legend: {display: false},
                          title: {display: true, text: chart[1] + ' per point'}},
                scales: {y: {beginAtZero: true, title: {display: true, text: chart[1]}}}}
    });
    canvas.setAttribute('data-rendered', 'true');
    drawn += 1;
  });
  document.body.setAttribute('data-charts', String(drawn));
}
draw();
)JS";

}  // namespace

std::string SweepToHtml(const SweepTable& table, const std::string& title,
                        const std::string& chart_js) {
  std::string charted = "const CHARTED = [";
  for (size_t i = 0; i < std::size(kChartedColumns); ++i) {
    if (i) charted += ',';
    charted += '[';
    for (size_t part = 0; part < 3; ++part) {
      if (part) charted += ',';
      charted += hlo::JsonString(kChartedColumns[i][part]);
    }
    charted += ']';
  }
  charted += "];\nconst SIMULATED_COLOUR = " + hlo::JsonString(kSimulatedColour) +
             ", ESTIMATED_COLOUR = " + hlo::JsonString(kEstimatedColour) + ";\n";

  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<title>retarget sweep: " + Escape(title) + "</title>\n";
  page +=
      "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:2px 6px;font-size:90%}"
      "canvas{margin:0.5em 0;display:block}#script-errors{color:#b00}</style>\n";
  page += "</head>\n<body>\n<div id=\"script-errors\"></div>\n";
  page += "<h1>retarget sweep: " + Escape(title) + "</h1>\n";
  page += "<p>" + std::to_string(table.rows.size()) +
          " points. Bars are <span style=\"color:" + std::string(kSimulatedColour) +
          "\">blue when simulated</span> and <span style=\"color:" + std::string(kEstimatedColour) +
          "\">orange when estimated</span> (the two are not "
          "comparable); docs/sweep.md explains the columns.</p>\n";
  for (size_t i = 0; i < std::size(kChartedColumns); ++i) {
    page +=
        "<canvas id=\"chart-" + std::to_string(i) + "\" width=\"900\" height=\"300\"></canvas>\n";
  }
  page += "<table>\n<tr>";
  for (const std::string& column : table.columns) page += "<th>" + Escape(column) + "</th>";
  page += "</tr>\n";
  for (const auto& row : table.rows) {
    page += "<tr>";
    for (const std::string& field : row) page += "<td>" + Escape(field) + "</td>";
    page += "</tr>\n";
  }
  page += "</table>\n";
  page += "<script type=\"application/json\" id=\"sweep-data\">" + ScriptSafe(TableJson(table)) +
          "</script>\n";
  page += "<script>" + ScriptText(chart_js) + "</script>\n";
  page += "<script>" + ScriptText(charted + kPageScript) + "</script>\n";
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace sweep
