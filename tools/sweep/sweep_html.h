// `retarget sweep --html OUT`: one self-contained page plotting a sweep — latency, utilization,
// energy and cost per point (Chart.js bar charts, inlined) — above the CSV's table.
//
// Guarantees (as the report's page, tools/report/report_html.h): nothing is loaded from
// anywhere; every string is HTML-escaped in the table and embedded in the JSON with '<' escaped,
// so no value can end a <script> element; each chart's canvas is marked data-rendered="true"
// once Chart.js drew it and the body gets data-charts="N", so a headless browser test can tell
// that the scripts ran; a script error is shown at the top of the page (and reaches the console).
// Points with an error have no bar (null), and their error is in the table. Bars are blue when
// simulated and orange when estimated.
#pragma once

#include <string>

#include "tools/sweep/sweep_csv.h"

namespace sweep {

// The four charted figures, in page order: column name, axis title, and the column naming each
// bar's source (bars are coloured by it: simulated and estimated figures are not comparable).
inline constexpr std::string_view kChartedColumns[][3] = {
    {"latency_ms", "latency (ms)", "latency_source"},
    {"utilization", "utilization of the array's peak", "latency_source"},
    {"energy_mj", "energy (mJ)", "energy_source"},
    {"cost_per_1m_usd", "USD per million inferences", "latency_source"},
};
inline constexpr std::string_view kSimulatedColour = "#0072B2";  // Okabe-Ito blue
inline constexpr std::string_view kEstimatedColour = "#E69F00";  // Okabe-Ito orange

// `title` names the model; `chart_js` is report::ReadChartJs's text.
std::string SweepToHtml(const SweepTable& table, const std::string& title,
                        const std::string& chart_js);

}  // namespace sweep
