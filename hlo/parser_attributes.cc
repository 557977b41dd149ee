// Value parsers of AttributeReader with real structure: windows, dim_labels, padding, slices,
// replica groups (including the iota form) and source-target pairs.
#include "hlo/parser_attribute_reader.h"

namespace hlo::parser_internal {

// `{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}`
Window AttributeReader::ParseWindow(const RawAttribute& a) {
  Lexer sub = Sub(a);
  Window window;
  sub.Expect('{', "to start a window");
  bool have_size = false;
  while (!sub.TryConsume('}')) {
    LexPosition key_pos = (sub.SkipTrivia(), sub.position());
    std::string_view key = sub.Name("a window field");
    sub.Expect('=', "after the window field name");
    std::vector<std::array<int64_t, 2>> values;
    do {
      int64_t first = sub.Integer("a window value");
      int64_t second = 0;
      if (key == "pad") {
        sub.Expect('_', "between low and high padding");
        second = sub.Integer("the high padding");
      }
      values.push_back({first, second});
    } while (sub.PeekAt(0) == 'x' && sub.TryConsume('x'));
    if (key == "size") {
      have_size = true;
      window.dims.resize(values.size());
    } else if (!have_size) {
      sub.FailAt(key_pos, "window 'size' must come first");
    }
    if (values.size() != window.dims.size()) {
      sub.FailAt(key_pos, "window field '" + std::string(key) + "' has " +
                              std::to_string(values.size()) + " entries, size has " +
                              std::to_string(window.dims.size()));
    }
    for (size_t i = 0; i < values.size(); ++i) {
      WindowDim& d = window.dims[i];
      int64_t v = values[i][0];
      if (key == "size") d.size = v;
      else if (key == "stride") d.stride = v;
      else if (key == "pad") { d.pad_lo = v; d.pad_hi = values[i][1]; }
      else if (key == "lhs_dilate") d.base_dilation = v;
      else if (key == "rhs_dilate") d.window_dilation = v;
      else if (key == "rhs_reversal") d.reversal = v != 0;
      else sub.FailAt(key_pos, "unknown window field '" + std::string(key) + "'");
    }
  }
  ExpectEnd(sub, a);
  return window;
}

// `b01f_01io->b01f`: batch/feature letters and spatial digits per operand.
ConvDimensionNumbers AttributeReader::DimLabels(const RawAttribute& a) {
  std::string_view text = a.value.text;
  size_t underscore = text.find('_');
  size_t arrow = text.find("->");
  if (underscore == std::string_view::npos || arrow == std::string_view::npos || arrow < underscore) {
    BadValue(a, "lhs_rhs->out labels such as b01f_01io->b01f");
  }
  std::string_view labels[3] = {text.substr(0, underscore),
                                text.substr(underscore + 1, arrow - underscore - 1),
                                text.substr(arrow + 2)};
  const char letters[3][2] = {{'b', 'f'}, {'i', 'o'}, {'b', 'f'}};
  size_t spatial = labels[0].size() >= 2 ? labels[0].size() - 2 : 0;
  int64_t first[3], second[3];
  std::vector<int64_t> spatial_dims[3];
  for (int k = 0; k < 3; ++k) {
    if (labels[k].size() != spatial + 2 || spatial > 10) BadValue(a, "labels of equal rank");
    first[k] = second[k] = -1;
    spatial_dims[k].assign(spatial, -1);
    for (size_t i = 0; i < labels[k].size(); ++i) {
      char c = labels[k][i];
      int64_t* slot = nullptr;
      if (c == letters[k][0]) slot = &first[k];
      else if (c == letters[k][1]) slot = &second[k];
      else if (c >= '0' && static_cast<size_t>(c - '0') < spatial) slot = &spatial_dims[k][c - '0'];
      if (!slot || *slot != -1) BadValue(a, "each label exactly once");
      *slot = static_cast<int64_t>(i);
    }
  }
  ConvDimensionNumbers d;
  d.input_batch = first[0];
  d.input_feature = second[0];
  d.input_spatial = spatial_dims[0];
  d.kernel_input_feature = first[1];
  d.kernel_output_feature = second[1];
  d.kernel_spatial = spatial_dims[1];
  d.output_batch = first[2];
  d.output_feature = second[2];
  d.output_spatial = spatial_dims[2];
  return d;
}

// `0_0x3_3_1`: lo_hi[_interior] per dimension, joined by 'x'.
std::vector<PadDim> AttributeReader::Padding(const RawAttribute& a) {
  std::vector<PadDim> dims;
  if (a.value.text.empty()) return dims;  // rank-0 pad
  Lexer sub = Sub(a);
  do {
    PadDim d;
    d.lo = sub.Integer("the low padding");
    sub.Expect('_', "between low and high padding");
    d.hi = sub.Integer("the high padding");
    if (sub.PeekAt(0) == '_' && sub.TryConsume('_')) d.interior = sub.Integer("the interior padding");
    dims.push_back(d);
  } while (sub.PeekAt(0) == 'x' && sub.TryConsume('x'));
  ExpectEnd(sub, a);
  return dims;
}

// `{[0:2], [1:5:2]}`
std::vector<SliceDim> AttributeReader::Slices(const RawAttribute& a) {
  Lexer sub = Sub(a);
  std::vector<SliceDim> dims;
  sub.Expect('{', "to start a slice");
  if (!sub.TryConsume('}')) {
    do {
      SliceDim d;
      sub.Expect('[', "to start a slice dimension");
      d.start = sub.Integer("the slice start");
      sub.Expect(':', "after the slice start");
      d.limit = sub.Integer("the slice limit");
      if (sub.TryConsume(':')) d.stride = sub.Integer("the slice stride");
      sub.Expect(']', "to close a slice dimension");
      dims.push_back(d);
    } while (sub.TryConsume(','));
    sub.Expect('}', "to close the slice");
  }
  ExpectEnd(sub, a);
  return dims;
}

// `{{0,1},{2,3}}`, `{}`, or the iota form `[G,S]<=[d0,d1,...]T(perm)`: the devices 0..N-1
// reshaped to the dims, transposed by perm, then read row-major into G groups of S.
std::vector<std::vector<int64_t>> AttributeReader::ReplicaGroups(const RawAttribute& a) {
  Lexer sub = Sub(a);
  std::vector<std::vector<int64_t>> groups;
  if (sub.Peek() == '{') {
    sub.Expect('{', "");
    if (!sub.TryConsume('}')) {
      do {
        groups.push_back(IntListFrom(sub));
      } while (sub.TryConsume(','));
      sub.Expect('}', "to close replica_groups");
    }
    ExpectEnd(sub, a);
    return groups;
  }
  auto bracket_list = [&sub](std::string_view what) {
    std::vector<int64_t> v;
    sub.Expect('[', what);
    do {
      v.push_back(sub.Integer("an integer"));
    } while (sub.TryConsume(','));
    sub.Expect(']', what);
    return v;
  };
  std::vector<int64_t> group_shape = bracket_list("to start the replica group shape");
  sub.Expect("<=", "in iota replica groups");
  std::vector<int64_t> reshape = bracket_list("to start the iota reshape dims");
  std::vector<int64_t> perm;
  for (size_t i = 0; i < reshape.size(); ++i) perm.push_back(static_cast<int64_t>(i));
  if (sub.TryConsume('T')) {
    sub.Expect('(', "after T");
    perm.clear();
    do {
      perm.push_back(sub.Integer("a permutation index"));
    } while (sub.TryConsume(','));
    sub.Expect(')', "to close the permutation");
  }
  ExpectEnd(sub, a);
  // Validate sizes before allocating: device counts are small in any real module.
  constexpr int64_t kMaxDevices = int64_t{1} << 20;
  int64_t total = 1;
  for (int64_t d : reshape) {
    if (d <= 0 || total > kMaxDevices / d) BadValue(a, "a small positive device count");
    total *= d;
  }
  std::vector<bool> seen(reshape.size(), false);
  for (int64_t p : perm) {
    if (perm.size() != reshape.size() || p < 0 || p >= static_cast<int64_t>(reshape.size()) || seen[p]) {
      BadValue(a, "a permutation of the reshape dims");
    }
    seen[p] = true;
  }
  if (group_shape.size() != 2 || group_shape[0] <= 0 || group_shape[1] <= 0 ||
      group_shape[0] > total || group_shape[1] > total || group_shape[0] * group_shape[1] != total) {
    BadValue(a, "[groups,size] covering every device");
  }
  // Transposed dims and the row-major strides of the untransposed array.
  std::vector<int64_t> strides(reshape.size(), 1);
  for (size_t i = reshape.size(); i-- > 1;) strides[i - 1] = strides[i] * reshape[i];
  std::vector<int64_t> index(reshape.size(), 0);
  std::vector<int64_t> flat;
  flat.reserve(static_cast<size_t>(total));
  for (int64_t n = 0; n < total; ++n) {
    int64_t device = 0;
    for (size_t k = 0; k < perm.size(); ++k) device += index[k] * strides[perm[k]];
    flat.push_back(device);
    for (size_t k = perm.size(); k-- > 0;) {  // odometer over the transposed dims
      if (++index[k] < reshape[perm[k]]) break;
      index[k] = 0;
    }
  }
  for (int64_t g = 0; g < group_shape[0]; ++g) {
    groups.emplace_back(flat.begin() + g * group_shape[1], flat.begin() + (g + 1) * group_shape[1]);
  }
  return groups;
}

// `{{0,1},{1,2}}`
std::vector<std::pair<int64_t, int64_t>> AttributeReader::Pairs(const RawAttribute& a) {
  Lexer sub = Sub(a);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  sub.Expect('{', "to start source_target_pairs");
  if (!sub.TryConsume('}')) {
    do {
      LexPosition pos = (sub.SkipTrivia(), sub.position());
      std::vector<int64_t> pair = IntListFrom(sub);
      if (pair.size() != 2) sub.FailAt(pos, "a source-target pair needs exactly two ids");
      pairs.push_back({pair[0], pair[1]});
    } while (sub.TryConsume(','));
    sub.Expect('}', "to close source_target_pairs");
  }
  ExpectEnd(sub, a);
  return pairs;
}

}  // namespace hlo::parser_internal
