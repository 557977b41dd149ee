// The stack-frame tables of HLO text (FileNames, FunctionNames, FileLocations, StackFrames) as
// XLA's StackFrameIndexProto, both ways (proto_internal.h).
//
// The text numbers every entry from 1, as the proto's ids do (0 = none). One quirk, read off
// XLA's own output: a StackFrames line prints its parent_frame_id one above the proto's (a frame
// without a parent prints 1), so the proto gets the printed value minus one.
#include <string>
#include <string_view>
#include <vector>

#include "hlo/proto_internal.h"
#include "hlo/proto_text_scanner.h"

namespace hlo::proto_internal {
namespace {

enum class Table { kNone, kFileNames, kFunctionNames, kFileLocations, kStackFrames };

Table TableNamed(std::string_view line) {
  if (line == "FileNames") return Table::kFileNames;
  if (line == "FunctionNames") return Table::kFunctionNames;
  if (line == "FileLocations") return Table::kFileLocations;
  if (line == "StackFrames") return Table::kStackFrames;
  return Table::kNone;
}

std::string_view Trimmed(std::string_view line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
    line.remove_suffix(1);
  }
  return line;
}

// `{key=N key=N ...}` into (key, N) pairs.
bool ParseFields(Scanner& s, std::vector<std::pair<std::string, int64_t>>* fields) {
  if (!s.Consume("{")) return false;
  while (!s.Consume("}")) {
    std::string key;
    int64_t value = 0;
    if (!s.ParseIdentifier(&key) || !s.Consume("=") || !s.ParseInt(&value)) return false;
    if (value < 0 || value > INT32_MAX) return false;
    fields->emplace_back(std::move(key), value);
  }
  return s.Finished();
}

bool ParseFileLocation(Scanner& s, xla::StackFrameIndexProto::FileLocation* location) {
  std::vector<std::pair<std::string, int64_t>> fields;
  if (!ParseFields(s, &fields)) return false;
  for (const auto& [key, value] : fields) {
    const auto v = static_cast<int32_t>(value);
    if (key == "file_name_id") location->set_file_name_id(v);
    else if (key == "function_name_id") location->set_function_name_id(v);
    else if (key == "line") location->set_line(v);
    else if (key == "end_line") location->set_end_line(v);
    else if (key == "column") location->set_column(v);
    else if (key == "end_column") location->set_end_column(v);
    else return false;
  }
  return true;
}

bool ParseStackFrame(Scanner& s, xla::StackFrameIndexProto::StackFrame* frame) {
  std::vector<std::pair<std::string, int64_t>> fields;
  if (!ParseFields(s, &fields)) return false;
  for (const auto& [key, value] : fields) {
    const auto v = static_cast<int32_t>(value);
    if (key == "file_location_id") frame->set_file_location_id(v);
    else if (key == "parent_frame_id" && v >= 1) frame->set_parent_frame_id(v - 1);
    else return false;
  }
  return true;
}

// One entry line `N payload` of `table`; N must be the next id of that table.
bool ParseEntry(Table table, std::string_view line, xla::StackFrameIndexProto* index) {
  Scanner s(line);
  int64_t id = 0;
  if (!s.ParseInt(&id)) return false;
  switch (table) {
    case Table::kFileNames: {
      std::string name;
      if (id != index->file_names_size() + 1 || !s.ParseString(&name) || !s.Finished()) {
        return false;
      }
      index->add_file_names(std::move(name));
      return true;
    }
    case Table::kFunctionNames: {
      std::string name;
      if (id != index->function_names_size() + 1 || !s.ParseString(&name) || !s.Finished()) {
        return false;
      }
      index->add_function_names(std::move(name));
      return true;
    }
    case Table::kFileLocations:
      return id == index->file_locations_size() + 1 &&
             ParseFileLocation(s, index->add_file_locations());
    case Table::kStackFrames:
      return id == index->stack_frames_size() + 1 &&
             ParseStackFrame(s, index->add_stack_frames());
    case Table::kNone:
      break;
  }
  return false;
}

}  // namespace

bool StackFrameIndexFromTables(std::string_view text, xla::StackFrameIndexProto* index) {
  Table table = Table::kNone;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = Trimmed(text.substr(start, end - start));
    start = end + 1;
    if (line.empty() || line.substr(0, 2) == "//") continue;
    if (Table named = TableNamed(line); named != Table::kNone) {
      table = named;
      continue;
    }
    if (table == Table::kNone || !ParseEntry(table, line, index)) {
      index->Clear();
      return false;
    }
  }
  return index->stack_frames_size() > 0 || index->file_names_size() > 0;
}

std::string StackFrameTablesText(const xla::StackFrameIndexProto& index) {
  std::string out = "FileNames\n";
  for (int i = 0; i < index.file_names_size(); ++i) {
    out += std::to_string(i + 1) + " " + QuoteString(index.file_names(i)) + "\n";
  }
  out += "\nFunctionNames\n";
  for (int i = 0; i < index.function_names_size(); ++i) {
    out += std::to_string(i + 1) + " " + QuoteString(index.function_names(i)) + "\n";
  }
  out += "\nFileLocations\n";
  for (int i = 0; i < index.file_locations_size(); ++i) {
    const auto& l = index.file_locations(i);
    out += std::to_string(i + 1) + " {file_name_id=" + std::to_string(l.file_name_id()) +
           " function_name_id=" + std::to_string(l.function_name_id()) +
           " line=" + std::to_string(l.line()) + " end_line=" + std::to_string(l.end_line()) +
           " column=" + std::to_string(l.column()) +
           " end_column=" + std::to_string(l.end_column()) + "}\n";
  }
  out += "\nStackFrames\n";
  for (int i = 0; i < index.stack_frames_size(); ++i) {
    const auto& f = index.stack_frames(i);
    out += std::to_string(i + 1) + " {file_location_id=" + std::to_string(f.file_location_id()) +
           " parent_frame_id=" + std::to_string(f.parent_frame_id() + 1) + "}\n";
  }
  return out;
}

}  // namespace hlo::proto_internal
