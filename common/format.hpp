#pragma once
// Numbers in messages and file headers, written as given: "%g" (0.5, 1e-300, 600), never
// std::to_string's fixed six decimals or 300 digits.
#include <cstdio>
#include <string>

namespace dgnn {

inline std::string fmt_double(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace dgnn
