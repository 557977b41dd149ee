// CSV writing, parsing and merging of sweep tables (contract in sweep_csv.h).
#include "tools/sweep/sweep_csv.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "hlo/diagnostic.h"

namespace sweep {
namespace {

std::string Field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// A whole number >= 0, or -1.
int64_t ParsePoint(std::string_view text) {
  int64_t value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return -1;
  return value;
}

struct Cursor {
  std::string_view text;
  size_t pos = 0;
  uint32_t line = 1, column = 1;
  std::shared_ptr<const std::string> file;

  bool AtEnd() const { return pos >= text.size(); }
  char Peek() const { return text[pos]; }
  char Take() {
    const char c = text[pos++];
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    return c;
  }
  hlo::SourceLocation Here() const { return hlo::SourceLocation{file, line, column}; }
};

// One record (a line, or several when a quoted field holds line breaks).
std::vector<std::string> ParseRecord(Cursor& in) {
  std::vector<std::string> fields(1);
  while (!in.AtEnd()) {
    const char c = in.Peek();
    if (c == '\n' || c == '\r') {
      in.Take();
      if (c == '\r' && !in.AtEnd() && in.Peek() == '\n') in.Take();
      return fields;
    }
    if (c == ',') {
      in.Take();
      fields.emplace_back();
    } else if (c == '"' && fields.back().empty()) {
      const hlo::SourceLocation open = in.Here();
      in.Take();
      while (true) {
        if (in.AtEnd()) throw hlo::Error(open, "unterminated quoted field");
        const char q = in.Take();
        if (q != '"') {
          fields.back() += q;
        } else if (!in.AtEnd() && in.Peek() == '"') {
          fields.back() += in.Take();
        } else {
          break;
        }
      }
      if (!in.AtEnd() && in.Peek() != ',' && in.Peek() != '\n' && in.Peek() != '\r') {
        throw hlo::Error(in.Here(), "expected ',' or the end of the line after a quoted field");
      }
    } else {
      fields.back() += in.Take();
    }
  }
  return fields;
}

}  // namespace

int SweepTable::ColumnIndex(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::string WriteCsv(const SweepTable& table) {
  std::string out;
  auto line = [&out](const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i) out += ',';
      out += Field(fields[i]);
    }
    out += "\n";
  };
  line(table.columns);
  for (const auto& row : table.rows) line(row);
  return out;
}

SweepTable ParseCsv(std::string_view text, const std::string& filename) {
  Cursor in{text, 0, 1, 1, std::make_shared<const std::string>(filename)};
  if (in.AtEnd()) throw hlo::Error(in.Here(), "empty file: expected a header line");
  SweepTable table;
  table.columns = ParseRecord(in);
  std::set<std::string> seen;
  for (const std::string& column : table.columns) {
    if (!seen.insert(column).second) {
      throw hlo::Error(hlo::SourceLocation{in.file, 1, 1}, "column '" + column + "' appears twice");
    }
  }
  const int point = table.ColumnIndex("point");
  if (point < 0) throw hlo::Error(hlo::SourceLocation{in.file, 1, 1}, "no 'point' column");
  while (!in.AtEnd()) {
    const hlo::SourceLocation start = in.Here();
    std::vector<std::string> row = ParseRecord(in);
    if (row.size() == 1 && row[0].empty()) continue;  // a blank line
    if (row.size() != table.columns.size()) {
      throw hlo::Error(start, "expected " + std::to_string(table.columns.size()) +
                                  " fields (as the header), got " + std::to_string(row.size()));
    }
    if (ParsePoint(row[static_cast<size_t>(point)]) < 0) {
      throw hlo::Error(
          start, "point '" + row[static_cast<size_t>(point)] + "' is not a whole number >= 0");
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

SweepTable ReadCsvFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw hlo::Error(path + ": no such file (or not a regular file)");
  }
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size > static_cast<uintmax_t>(kMaxCsvFileBytes)) {
    throw hlo::Error(path + ": larger than " + std::to_string(kMaxCsvFileBytes) + " bytes");
  }
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  if (!file) throw hlo::Error(path + ": cannot read");
  return ParseCsv(text.str(), path);
}

int64_t RowPoint(const SweepTable& table, const std::vector<std::string>& row) {
  return ParsePoint(row.at(static_cast<size_t>(table.ColumnIndex("point"))));
}

void SortByPoint(SweepTable& table) {
  const size_t point = static_cast<size_t>(table.ColumnIndex("point"));
  std::stable_sort(table.rows.begin(), table.rows.end(), [point](const auto& a, const auto& b) {
    return ParsePoint(a[point]) < ParsePoint(b[point]);
  });
}

SweepTable MergeTables(const std::vector<SweepTable>& tables,
                       const std::vector<std::string>& names) {
  if (tables.empty()) throw hlo::Error("sweep-merge: no input files");
  SweepTable merged;
  merged.columns = tables[0].columns;
  const std::set<std::string> expected(merged.columns.begin(), merged.columns.end());
  const int error_column = merged.ColumnIndex("error");
  struct Kept {
    size_t row;
    std::string from;
  };
  std::map<int64_t, Kept> by_point;
  for (size_t t = 0; t < tables.size(); ++t) {
    const SweepTable& table = tables[t];
    const std::set<std::string> columns(table.columns.begin(), table.columns.end());
    if (columns != expected) {
      std::string missing, extra;
      for (const auto& c : expected)
        if (!columns.count(c)) missing += " " + c;
      for (const auto& c : columns)
        if (!expected.count(c)) extra += " " + c;
      throw hlo::Error(names[t] + ": its columns differ from " + names[0] +
                       "'s (missing:" + (missing.empty() ? " none" : missing) + "; extra:" +
                       (extra.empty() ? " none" : extra) + "): not parts of the same sweep");
    }
    std::vector<size_t> order;  // merged column i is this table's column order[i]
    for (const std::string& column : merged.columns) {
      order.push_back(static_cast<size_t>(table.ColumnIndex(column)));
    }
    for (const auto& row : table.rows) {
      std::vector<std::string> reordered;
      for (size_t index : order) reordered.push_back(row[index]);
      const int64_t point = RowPoint(merged, reordered);
      auto [it, inserted] = by_point.try_emplace(point, Kept{merged.rows.size(), names[t]});
      if (inserted) {
        merged.rows.push_back(std::move(reordered));
        continue;
      }
      std::vector<std::string>& kept = merged.rows[it->second.row];
      if (kept == reordered) continue;
      if (error_column >= 0) {
        const auto e = static_cast<size_t>(error_column);
        if (reordered[e].empty() && !kept[e].empty()) {  // a retried task succeeded
          kept = std::move(reordered);
          it->second.from = names[t];
          continue;
        }
        if (!reordered[e].empty() && kept[e].empty()) continue;
      }
      throw hlo::Error(names[t] + ": point " + std::to_string(point) +
                       " has a different result in " + it->second.from);
    }
  }
  SortByPoint(merged);
  return merged;
}

}  // namespace sweep
