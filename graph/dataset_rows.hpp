#pragma once
// The row reader of dgnn's small text tables (labels, splits, text features), for the loaders
// in graph/ and the sharded loader (partition/dist_load.cpp): internal to the library.
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/graph.hpp"

namespace dgnn::rows {

// Calls fn(line, fields) for each data line of a small text table. '#'/'%' comments, blank
// lines and a non-numeric first line (a header) are skipped; whitespace and commas separate; a
// field starting with '#' starts a comment to the end of the line. Lines end in '\n' or "\r\n"
// (read_text_file refuses a bare '\r').
// for_each_row_in: the same over [begin, end) (whole lines, the last ending in '\n'), lines
// numbered from line0 + 1; with `note`, a header is reported there (ChunkHeader, graph.hpp).
template <class Fn>
void for_each_row_in(const char* begin, const char* end, const std::string& path, int64_t line0,
                     ChunkHeader* note, Fn&& fn) {
  const std::string_view buf(begin, size_t(end - begin));
  std::vector<std::string_view> fields;
  int64_t line = line0;
  bool seen = false;
  for (size_t pos = 0; pos < buf.size();) {
    size_t nl = buf.find('\n', pos);
    if (nl == std::string_view::npos) nl = buf.size();
    const std::string_view text(buf.data() + pos, nl - pos);
    pos = nl + 1;
    ++line;
    fields.clear();
    for (size_t i = 0; i < text.size();) {
      auto sep = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == ','; };
      while (i < text.size() && sep(text[i])) ++i;
      size_t j = i;
      while (j < text.size() && !sep(text[j])) ++j;
      if (j > i && text[i] == '#' && !fields.empty()) break;  // a comment after the data
      if (j > i) fields.push_back(text.substr(i, j - i));
      i = j;
    }
    if (fields.empty() || fields[0][0] == '#' || fields[0][0] == '%') continue;
    const char c = fields[0][0];
    const bool numeric = (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.';
    const bool header = !seen && !numeric;
    seen = true;
    if (header && note) {
      note->line = line;
      note->error = "expected a number, found '" + std::string(fields[0]) +
                    "' (a header line is allowed only before the first data line)";
    }
    if (!header && note && note->first_data == 0) note->first_data = line;
    if (!header) fn(line, fields);
  }
}

template <class Fn>
void for_each_row(const std::string& path, Fn&& fn) {
  std::string buf = read_text_file(path);
  buf.push_back('\n');
  for_each_row_in(buf.data(), buf.data() + buf.size(), path, 0, nullptr, fn);
}

template <class T>
T parse_number(std::string_view f, const std::string& path, int64_t line, const char* what) {
  T v{};
  auto r = std::from_chars(f.data(), f.data() + f.size(), v);
  if (r.ec != std::errc() || r.ptr != f.data() + f.size())
    throw InputError(path, line,
                     std::string("expected ") + what + ", found '" + std::string(f) + "'");
  return v;
}

inline int64_t parse_vertex(std::string_view f, const std::string& path, int64_t line) {
  const int64_t v = parse_number<int64_t>(f, path, line, "an integer vertex id");
  if (v < 0)
    throw InputError(path, line, "expected a non-negative vertex id, found " + std::string(f));
  return v;
}

inline std::string columns(size_t n) { return std::to_string(n) + (n == 1 ? " column" : " columns"); }

// `exact`: the layout has no room for more columns (a third column of a label file is more likely
// a shifted layout than a comment).
inline void expect_fields(size_t got, size_t want, const std::string& path, int64_t line,
                   const char* layout, bool exact = false) {
  if (got < want || (exact && got > want))
    throw InputError(path, line, "expected " + std::string(layout) + ", found " + columns(got));
}

// A label field: an integer >= -1 (-1: unlabelled; "nan"/"NaN" too when nan_ok, as OGB writes),
// below num_classes when that is given, else below kMaxInferredClasses (a huge label is far
// more likely an id or a value column than a class, and would build a model of that width).
inline int32_t parse_label(std::string_view f, const std::string& path, int64_t line,
                           int32_t num_classes, bool nan_ok) {
  if (nan_ok && (f == "nan" || f == "NaN")) return -1;
  const int64_t y = parse_number<int64_t>(f, path, line, "an integer label");
  if (y < -1)
    throw InputError(path, line,
                     "expected a label >= 0, or -1 for unlabelled, found " + std::to_string(y));
  if (num_classes > 0 && y >= num_classes)
    throw InputError(path, line,
                     "expected a label below the " + std::to_string(num_classes) +
                         " classes, found " + std::to_string(y));
  if (num_classes <= 0 && y >= kMaxInferredClasses)
    throw InputError(path, line,
                     "expected a class label below " + std::to_string(kMaxInferredClasses) +
                         " (give --num-classes for more classes), found " + std::to_string(y));
  return int32_t(y);
}

}  // namespace dgnn::rows
