// The HTML page's script (contract in report_html.h): reads the report JSON embedded in the
// page, draws per model a stacked bar chart of instructions by owner and a bar chart of latency
// and cost per target, marks each filled canvas data-rendered="true", and writes the fastest
// target of each model. Errors are not swallowed: an exception reaches the console (which the
// headless-Chromium test watches) and is also shown at the top of the page.
#include <string>

#include "tools/report/report_html.h"

namespace report {

std::string PageScript() {
  std::string owners = "[", colours = "[";
  for (size_t i = 0; i < kOwnerKeys.size(); ++i) {
    owners += std::string(i ? ", " : "") + "'" + std::string(kOwnerKeys[i]) + "'";
    colours += std::string(i ? ", " : "") + "'" + std::string(kOwnerColours[i]) + "'";
  }
  return "const OWNERS = " + owners + "];\nconst OWNER_COLOURS = " + colours + "];\n" + R"JS(
window.addEventListener('error', function (event) {
  const box = document.getElementById('script-errors');
  if (box) box.textContent += 'script error: ' + event.message + '\n';
});

function okTargets(model) {
  return Object.keys(model.targets).filter(function (t) { return !model.targets[t].error; });
}

function ownersChart(canvas, model) {
  const targets = okTargets(model);
  return new Chart(canvas, {
    type: 'bar',
    data: {
      labels: targets,
      datasets: OWNERS.map(function (owner, i) {
        return {label: owner, backgroundColor: OWNER_COLOURS[i],
                data: targets.map(function (t) {
                  return model.targets[t].owners_original[owner];
                })};
      })
    },
    options: {
      animation: false, responsive: false,
      plugins: {title: {display: true, text: "the module's instructions by owner"}},
      scales: {x: {stacked: true}, y: {stacked: true, title: {display: true, text: 'instructions'}}}
    }
  });
}

function costChart(canvas, model) {
  const targets = okTargets(model);
  const cell = function (t) { return model.targets[t]; };
  return new Chart(canvas, {
    type: 'bar',
    data: {
      labels: targets.map(function (t) { return t + ' (' + cell(t).latency_source + ')'; }),
      datasets: [
        {label: 'latency ms', yAxisID: 'y', backgroundColor: '#0072B2',
         data: targets.map(function (t) { return cell(t).latency_ms; })},
        {label: '$ per 1M inferences', yAxisID: 'y1', backgroundColor: '#F0E442',
         data: targets.map(function (t) { return cell(t).cost_per_1m_usd; })}
      ]
    },
    options: {
      animation: false, responsive: false,
      plugins: {title: {display: true, text: 'latency and cost per target'}},
      scales: {y: {position: 'left', title: {display: true, text: 'ms'}},
               y1: {position: 'right', title: {display: true, text: 'USD'},
                    grid: {drawOnChartArea: false}}}
    }
  });
}

function draw() {
  const report = JSON.parse(document.getElementById('report-data').textContent);
  let drawn = 0;
  report.models.forEach(function (model, m) {
    const targets = okTargets(model);
    if (model.error || targets.length === 0) return;
    [['owners-', ownersChart], ['cost-', costChart]].forEach(function (kind) {
      const canvas = document.getElementById(kind[0] + m);
      kind[1](canvas, model);
      canvas.setAttribute('data-rendered', 'true');
      drawn += 1;
    });
    let fastest = targets[0];
    targets.forEach(function (t) {
      if (model.targets[t].latency_ms < model.targets[fastest].latency_ms) fastest = t;
    });
    const best = model.targets[fastest];
    const line = document.getElementById('fastest-' + m);
    line.textContent = 'fastest: ' + fastest + ', ' + best.latency_ms.toPrecision(4) + ' ms (' +
                       best.latency_source + ')';
    line.setAttribute('data-target', fastest);
    line.setAttribute('data-ms', String(best.latency_ms));  // the JSON figure, all its digits
  });
  document.body.setAttribute('data-charts', String(drawn));
}

document.addEventListener('DOMContentLoaded', draw);
)JS";
}

}  // namespace report
